"""cocotb testbench for rtl/hw_utf8_check.v (cocotb 2.x): streaming UTF-8 validation
against Python's strict UTF-8 decoder (same acceptance as Rust's std::str::from_utf8:
no overlongs, no surrogates, nothing above U+10FFFF), fed in random chunk sizes and split at every offset inside sequences, bad and mid
checked in every cycle; with IN_REG=1 (registered inputs) the verdict is read a cycle
later."""

import os
import random
import sys
from pathlib import Path

import pytest

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import FallingEdge, RisingEdge, ReadOnly
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # rtl/tb (tbutil, hwsc) when run as a script
from tbutil import run_cocotb, seed_for

RTL_DIR = Path(__file__).resolve().parents[2]
IN_REG = int(os.environ.get("HW_U8_IN_REG", "0"))  # the build's IN_REG (the verdict's extra cycle)
TB_DIR = Path(__file__).resolve().parent


def ref_valid(b: bytes) -> bool:
    try:
        b.decode("utf-8", errors="strict")
        return True
    except UnicodeDecodeError:
        return False


def corpus(rng):
    edge = [b"", b"a", b"\xc2\x80", b"\xc1\xbf", b"\xe0\x80\x80", b"\xe0\xa0\x80", b"\xed\x9f\xbf",
            b"\xed\xa0\x80", b"\xef\xbf\xbf", b"\xf0\x8f\xbf\xbf", b"\xf0\x90\x80\x80",
            b"\xf4\x8f\xbf\xbf", b"\xf4\x90\x80\x80", b"\xf5\x80\x80\x80", b"\x80", b"\xc3",
            b"\xe2\x82", b"\xf0\x9d\x84", "€𝄞é".encode(), b"\xff", b"abc\xc3\xa9xyz"]
    out = list(edge)
    pool = ["a", "é", "€", "𝄞", "\u07ff", "\u0800", "\uffff", "\U00010000", "\U0010ffff", "z"]
    for _ in range(400):
        s = "".join(rng.choice(pool) for _ in range(rng.randrange(0, 12))).encode()
        if rng.random() < 0.5 and s:
            s = bytearray(s)
            i = rng.randrange(len(s))
            s[i] = rng.randrange(256)
            s = bytes(s)
        out.append(s)
    return out


def ref_state(b: bytes):
    """(bad, mid) after the bytes b since clear: bad = no valid string starts with b (Python's
    decoder reports an invalid byte, not a truncated end), mid = b ends inside a sequence."""
    try:
        b.decode("utf-8", errors="strict")
        return (0, 0)
    except UnicodeDecodeError as e:
        return (0, 1) if e.reason == "unexpected end of data" else (1, 0)


# the bytes UTF-8's rules treat differently (range edges), hostile strings draw from these
EDGE_BYTES = [0x00, 0x41, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xC1, 0xC2, 0xDF,
              0xE0, 0xE1, 0xEC, 0xED, 0xEE, 0xEF, 0xF0, 0xF1, 0xF3, 0xF4, 0xF5, 0xF7, 0xF8, 0xFF]
SEQS = [b"\xc2\x80", b"\xdf\xbf", b"\xe0\xa0\x80", b"\xe0\x9f\xbf", b"\xed\x9f\xbf", b"\xed\xa0\x80",
        b"\xef\xbf\xbf", b"\xf0\x90\x80\x80", b"\xf0\x8f\xbf\xbf", b"\xf4\x8f\xbf\xbf",
        b"\xf4\x90\x80\x80", b"\xf3\xbf\xbf\xbf", b"\xe1\x80", b"\xf1\x80\x80", b"\xc2\xc2\x80",
        b"\xe1\x80\xc0", b"\xf1\x80\x80\x80\x80", b"\xc1\xbf", b"\xf5\x80\x80\x80"]


def junk(rng, n):
    """Bytes for the lanes past in_count: random, or chosen to complete / break what came before."""
    kind = rng.randrange(4)
    if kind == 0:
        return bytes(rng.randrange(256) for _ in range(n))
    return bytes([(0x80, 0xFF, 0x41)[kind - 1]] * n)


def feeds_of(rng, s, lanes, mode):
    """Split s into feeds of 1..lanes bytes: random sizes, or (mode = k1, k2) cut at k1 and k2."""
    if isinstance(mode, tuple):
        cuts = [0] + [k for k in mode if 0 < k < len(s)] + [len(s)]
        parts = [s[a:b] for a, b in zip(cuts, cuts[1:]) if b > a]
        out = []
        for p in parts:  # a part longer than the lanes goes in full feeds
            out += [p[i:i + lanes] for i in range(0, len(p), lanes)]
        return out
    out, i = [], 0
    while i < len(s):
        n = min(len(s) - i, rng.choice([lanes, rng.randrange(1, lanes + 1)]))
        out.append(s[i:i + n])
        i += n
    return out


def work(rng, lanes):
    """(string, feed mode) pairs: every split point of sequences inside ASCII, every lane
    offset of them in full feeds, the edge corpus, hostile and mutated random strings."""
    items = []
    for seq in SEQS:
        for pre in range(min(lanes, 5) if lanes > 1 else 2):
            s = b"a" * pre + seq + b"z"
            for k1 in range(len(s) + 1):
                items.append((s, (k1, len(s))))
            if len(seq) >= 3:
                for k1 in range(pre + 1, pre + len(seq)):
                    for k2 in range(k1 + 1, pre + len(seq)):
                        items.append((s, (k1, k2)))
        for pre in range(lanes):  # a sequence across a feed boundary at every lane offset
            items.append((b"b" * pre + seq + b"c" * lanes, None))
    for s in corpus(rng):
        items.append((s, None))
    for _ in range(300):
        items.append((bytes(rng.choice(EDGE_BYTES) for _ in range(rng.randrange(0, 3 * lanes + 4))), None))
    rng.shuffle(items)
    return items


@cocotb.test()
async def test_utf8(dut):
    """Checks bad and mid in every cycle against the decoder, IN_REG + 1 cycles after the input:
    strings back to back or with idle cycles (junk on the inputs) between and inside them,
    clear alone or with a string's first bytes (after a bad or open string too)."""
    lanes = len(dut.in_data) // 8
    rng = random.Random(seed_for("utf8"))
    cocotb.start_soon(Clock(dut.clk, 10, unit="ns").start())
    dut.rst.value = 1
    dut.clear.value = 0
    dut.in_valid.value = 0
    dut.in_data.value = 0
    dut.in_count.value = 0
    await RisingEdge(dut.clk)
    await RisingEdge(dut.clk)
    await FallingEdge(dut.clk)
    dut.rst.value = 0
    exp = [(0, 0)] * (IN_REG + 1)  # the expected (bad, mid) after each cycle's inputs
    cur = b""
    stats = {"cycles": 0, "strings": 0, "valid": 0, "invalid": 0, "bad": 0, "mid": 0}

    async def cycle(clear, valid, chunk):
        nonlocal cur
        n = len(chunk)
        dut.clear.value = int(clear)
        dut.in_valid.value = int(valid)
        dut.in_data.value = int.from_bytes(chunk + junk(rng, lanes - n), "little")
        dut.in_count.value = n if valid else rng.randrange(32)
        if clear:
            cur = b""
        if valid:
            cur += chunk
        exp.append(ref_state(cur))
        await RisingEdge(dut.clk)
        await ReadOnly()
        want = exp[-1 - IN_REG]
        got = (int(dut.bad.value), int(dut.mid.value))
        # mid is free once bad (the verdict is !bad && !mid)
        assert got[0] == want[0] and (want[0] or got[1] == want[1]), \
            f"got {got} want {want} after {cur.hex()} (IN_REG={IN_REG})"
        stats["cycles"] += 1
        stats["bad"] += want[0]
        stats["mid"] += want[1]
        await FallingEdge(dut.clk)

    for s, mode in work(rng, lanes):
        feeds = feeds_of(rng, s, lanes, mode)
        together = bool(feeds) and rng.random() < 0.5
        if not together:
            await cycle(True, False, b"")
        for j, f in enumerate(feeds):
            if rng.random() < 0.1:
                await cycle(False, False, b"")  # an idle cycle inside the string
            await cycle(together and j == 0, True, f)
        stats["strings"] += 1
        stats["valid" if ref_valid(s) else "invalid"] += 1
        for _ in range(rng.choice([0, 0, 1, IN_REG + 1])):  # back to back, or idle cycles
            await cycle(False, False, b"")
    for _ in range(IN_REG + 1):
        await cycle(False, False, b"")
    dut._log.info("checked %s", stats)
    assert stats["strings"] >= 1000 and stats["valid"] >= 400 and stats["invalid"] >= 500, stats
    assert stats["bad"] >= 500 and stats["mid"] >= 300, stats


def _build_and_test(lanes, in_reg=0):
    run_cocotb(TB_DIR, "hw_utf8_check", [RTL_DIR / "hw_utf8_check.v"], f"l{lanes}r{in_reg}",
               {"LANES": lanes, "IN_REG": in_reg}, extra_env={"HW_U8_IN_REG": str(in_reg)})


@pytest.mark.parametrize("lanes,in_reg", [(1, 0), (8, 0), (16, 0), (16, 1)])
def test_hw_utf8_check(lanes, in_reg):
    _build_and_test(lanes, in_reg)


if __name__ == "__main__":
    _build_and_test(8)

"""cocotb testbench for hw_pb_input (in rtl/hw_pb_core.v; cocotb 2.x, Icarus Verilog): the
protobuf core's input stage. Random windows built from encoded fields (tags of 1-5 bytes,
values and lengths of 1-10 bytes, overlong and truncated varints, any number of valid
bytes, garbage past them) with positions and bounds that hold or move, and restarts.
Checks, a cycle after each window: the tag varint and the varint after it (found, length,
value; the value against the official protobuf library's decoder), the 32-bit limit, the
header length, the window's valid bytes, the bytes left to both bounds; and `fresh`
(exactly when position and bounds held and the reader did not restart)."""

import random
import sys
from pathlib import Path

import pytest

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import ReadOnly, RisingEdge
from google.protobuf.internal import decoder as pb_decoder
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # rtl/tb (tbutil, hwsc) when run as a script
from tbutil import run_cocotb, seed_for

RTL_DIR = Path(__file__).resolve().parents[2]
TB_DIR = Path(__file__).resolve().parent
M32 = (1 << 32) - 1


def varint(v):
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def decode(window, avail):
    """hw_varint_decoder over the window's first bytes: (found, length, value); the length
    is 0 when no byte with bit 7 clear is among the first min(avail, 10)."""
    for i in range(min(avail, 10)):
        if not window[i] & 0x80:
            value = 0
            for k in range(i + 1):
                value |= (window[k] & 0x7F) << (7 * k)
            value &= (1 << 64) - 1
            # the official decoder agrees on every whole varint
            ref, end = pb_decoder._DecodeVarint(bytes(window[:i + 1]), 0)
            assert (ref, end) == (value, i + 1), "model disagrees with protobuf's decoder"
            return True, i + 1, value
    return False, 0, None


def expected(window, avail, pos, fr_end, vend):
    found, tlen, tval = decode(window, avail)
    rest = window[tlen:] + bytes(tlen)
    vfound, vlen, vval = decode(rest, avail - tlen)
    return dict(wav=avail, brem_fr=(fr_end - pos) & M32, brem_v=(vend - pos) & M32,
                tag_found=int(found), tag_len=tlen, tag_val=tval,
                tag_o32=int(found and (tlen > 5 or tval >> 32 != 0)),
                val_found=int(vfound), val_len=vlen, val_val=vval, hdr_len=tlen + vlen)


def random_window(rng):
    """16 bytes: a field's tag and value (or length), or continuation-heavy bytes."""
    kind = rng.random()
    if kind < 0.6:
        tag = varint(rng.choice([rng.randrange(1, 16), rng.randrange(1, 1 << 29)]) << 3 | rng.randrange(8))
        if rng.random() < 0.1:   # an overlong tag (padded with 0x80 bytes)
            tag = bytes(b | 0x80 for b in tag) + bytes([0x80] * rng.randrange(1, 4)) + b"\x00"
        val = varint(rng.choice([rng.randrange(128), rng.randrange(1 << 32), rng.getrandbits(64)]))
        data = tag + val
    elif kind < 0.8:
        data = bytes(rng.randrange(0x80, 0x100) for _ in range(rng.randrange(4, 17)))  # no end within
    else:
        data = bytes(rng.randrange(256) for _ in range(16))
    data = data[:16]
    return data + bytes(rng.randrange(256) for _ in range(16 - len(data)))


@cocotb.test()
async def test_decodes_and_freshness(dut):
    rng = random.Random(seed_for("pb_input"))
    cocotb.start_soon(Clock(dut.clk, 10, unit="ns").start())
    dut.rst.value = 1
    dut.restart.value = 0
    dut.win.value = 0
    dut.win_avail.value = 0
    dut.pos.value = 0
    dut.fr_end.value = 0
    dut.vend.value = 0
    await RisingEdge(dut.clk)
    await RisingEdge(dut.clk)
    dut.rst.value = 0

    n = 3000
    pos, fr_end, vend = 0, 100, 50
    prev = None       # (inputs, expected) of the last cycle
    counts = {"found": 0, "val": 0, "o32": 0, "not_found": 0, "fresh": 0, "stale": 0, "restart": 0}
    for t in range(n):
        # position and bounds: mostly held (the state machine waits), else moved
        r = rng.random()
        if r < 0.15:
            pos = (pos + rng.randrange(1, 20)) & M32
        elif r < 0.2:
            fr_end = rng.getrandbits(32)
        elif r < 0.25:
            vend = rng.getrandbits(32)
        elif r < 0.27:
            pos = rng.getrandbits(32)
        restart = int(rng.random() < 0.05)
        window = random_window(rng)
        avail = rng.choice([16, 16, rng.randrange(17)])
        dut.win.value = int.from_bytes(window, "little")
        dut.win_avail.value = avail
        dut.pos.value, dut.fr_end.value, dut.vend.value = pos, fr_end, vend
        dut.restart.value = restart
        await ReadOnly()
        if prev is not None:
            (ppos, pfr, pvend, prestart), want = prev
            fresh = int(not prestart and (ppos, pfr, pvend) == (pos, fr_end, vend))
            assert int(dut.fresh.value) == fresh, f"cycle {t}: fresh {int(dut.fresh.value)} != {fresh}"
            counts["fresh" if fresh else "stale"] += 1
            counts["restart"] += prestart
            for k, v in want.items():
                if v is None:
                    continue   # a value without its varint's end: unspecified
                got = int(getattr(dut, k).value)
                assert got == v, f"cycle {t}: {k} = {got:#x}, want {v:#x}"
            counts["found" if want["tag_found"] else "not_found"] += 1
            counts["val"] += want["val_found"]
            counts["o32"] += want["tag_o32"]
        prev = ((pos, fr_end, vend, restart), expected(window, avail, pos, fr_end, vend))
        await RisingEdge(dut.clk)
    for k, at_least in (("found", n // 3), ("val", n // 4), ("o32", n // 50), ("not_found", n // 10),
                        ("fresh", n // 3), ("stale", n // 10), ("restart", n // 50)):
        assert counts[k] >= at_least, f"only {counts[k]} {k} checks"


def test_hw_pb_input():
    run_cocotb(TB_DIR, "hw_pb_input", [RTL_DIR / "hw_pb_core.v", RTL_DIR / "hw_varint_decoder.v"], "default")

"""cocotb testbench for rtl/hw_utf8_check.v (cocotb 2.x): streaming UTF-8 validation
against Python's strict UTF-8 decoder (same acceptance as Rust's std::str::from_utf8:
no overlongs, no surrogates, nothing above U+10FFFF), fed in random chunk sizes; with IN_REG=1 (registered inputs) the verdict is read a cycle
later."""

import os
import random
import sys
from pathlib import Path

import pytest

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import RisingEdge, ReadOnly
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


@cocotb.test()
async def test_utf8(dut):
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
    dut.rst.value = 0
    for s in corpus(rng):
        # clear alone, or with the string's first bytes (the previous verdict may be bad)
        together = bool(s) and rng.random() < 0.5
        if not together:
            dut.clear.value = 1
            await RisingEdge(dut.clk)
            dut.clear.value = 0
        i = 0
        while i < len(s):
            n = min(len(s) - i, rng.randrange(1, lanes + 1))
            chunk = s[i:i + n] + bytes(rng.randrange(256) for _ in range(lanes - n))  # junk lanes
            dut.in_data.value = int.from_bytes(chunk, "little")
            dut.in_count.value = n
            dut.in_valid.value = 1
            dut.clear.value = int(together and i == 0)
            await RisingEdge(dut.clk)
            i += n
        dut.in_valid.value = 0
        dut.clear.value = 0
        if IN_REG:  # the verdict a cycle later
            await RisingEdge(dut.clk)
        await ReadOnly()
        verdict = not (int(dut.bad.value) or int(dut.mid.value))
        assert verdict == ref_valid(s), s.hex()
        await RisingEdge(dut.clk)


def _build_and_test(lanes, in_reg=0):
    run_cocotb(TB_DIR, "hw_utf8_check", [RTL_DIR / "hw_utf8_check.v"], f"l{lanes}r{in_reg}",
               {"LANES": lanes, "IN_REG": in_reg}, extra_env={"HW_U8_IN_REG": str(in_reg)})


@pytest.mark.parametrize("lanes,in_reg", [(1, 0), (8, 0), (16, 0), (16, 1)])
def test_hw_utf8_check(lanes, in_reg):
    _build_and_test(lanes, in_reg)


if __name__ == "__main__":
    _build_and_test(8)

"""cocotb testbench for rtl/hw_sdp_ram.v (cocotb 2.x on Icarus Verilog).

Random writes and reads (read enable on and off, reads of just-written and never-written
words, reads of the word written at the same edge) checked edge by edge against a Python
model of the contract in the module's header: q is the word read at the last edge where
re was high, one edge after that. Built three ways: inferred; instantiated as ECP5 DP16KD
blocks (HEAPWIRE_ECP5_BRAM, on the cell model rtl/tb/models/DP16KD.v), with a width that
needs two blocks and one that needs a single block exactly; and with HEAPWIRE_ECP5_BRAM
but more address bits than a block has (inferred again).
"""

import random
import sys
from pathlib import Path

import pytest

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import FallingEdge, ReadOnly, RisingEdge
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # rtl/tb (tbutil, hwsc) when run as a script
from tbutil import DP16KD_MODEL, ecp5_bram, expect_param_error, run_cocotb, seed_for, thorough

RTL_DIR = Path(__file__).resolve().parents[2]
TB_DIR = Path(__file__).resolve().parent


@cocotb.test()
async def test_random_traffic(dut):
    aw, dw = len(dut.wa), len(dut.wd)
    rng = random.Random(seed_for(f"sdp_ram{aw}x{dw}"))
    cocotb.start_soon(Clock(dut.clk, 10, unit="ns").start())
    dut.we.value = 0
    dut.re.value = 0
    dut.wa.value = 0
    dut.ra.value = 0
    dut.wd.value = 0
    mem = {}              # address -> word (absent: never written, undefined)
    latch = None          # what the read latch holds: a word, or None (undefined)
    want = None           # what q must show after the next edge
    hot = [rng.getrandbits(aw) for _ in range(4)]   # a few addresses hit often: collisions
    checked = 0
    n = 20000 if thorough() else 4000
    for cyc in range(n):
        we, re = rng.random() < 0.5, rng.random() < 0.7
        wa = rng.choice(hot) if rng.random() < 0.5 else rng.getrandbits(aw)
        ra = rng.choice(hot) if rng.random() < 0.5 else rng.getrandbits(aw)
        if rng.random() < 0.1:
            ra = wa   # the word written at this very edge
        wd = rng.getrandbits(dw)
        await FallingEdge(dut.clk)
        dut.we.value, dut.wa.value, dut.wd.value = int(we), wa, wd
        dut.re.value, dut.ra.value = int(re), ra
        await RisingEdge(dut.clk)
        # this edge: q <- latch, latch <- mem[ra] (if re), mem[wa] <- wd (if we)
        want = latch
        if re:
            latch = None if (we and wa == ra) else mem.get(ra)
        if we:
            mem[wa] = wd
        await ReadOnly()
        if want is not None:
            got = dut.q.value
            assert got.is_resolvable, f"cycle {cyc}: q = {got}, want {want:#x}"
            assert int(got) == want, f"cycle {cyc}: q = {int(got):#x}, want {want:#x}"
            checked += 1
    assert checked > n // 4, f"only {checked} reads checked"


BUILDS = {
    # name: (AW, DW, ECP5 cells)
    "infer": (7, 68, False),
    "ecp5_2blk": (7, 68, True),
    "ecp5_1blk": (9, 36, True),
    "ecp5_deep": (10, 20, True),
}


@pytest.mark.parametrize("name", list(BUILDS))
def test_hw_sdp_ram(name):
    aw, dw, ecp5 = BUILDS[name]
    cells, defines = ecp5_bram(ecp5)
    run_cocotb(TB_DIR, "hw_sdp_ram", [RTL_DIR / "hw_sdp_ram.v"] + cells, name, {"AW": aw, "DW": dw},
               defines=defines)


def test_ecp5_build_uses_the_cell(tmp_path):
    """With HEAPWIRE_ECP5_BRAM the RAM really is DP16KD cells (so the tests above exercise
    the instantiation), and without it there are none."""
    import subprocess
    for define, want in ((True, 2), (False, 0)):
        out = tmp_path / "ram.vvp"
        args = ["iverilog", "-g2012", "-Phw_sdp_ram.AW=7", "-Phw_sdp_ram.DW=68", "-o", str(out)]
        args += (["-DHEAPWIRE_ECP5_BRAM"] if define else []) + [str(RTL_DIR / "hw_sdp_ram.v"), str(DP16KD_MODEL)]
        subprocess.run(args + ["-s", "hw_sdp_ram"], check=True, capture_output=True)
        scopes = out.read_text().count('"DP16KD"')
        assert scopes == want, f"HEAPWIRE_ECP5_BRAM={define}: {scopes} DP16KD scopes, want {want}"


def test_bad_parameters_rejected(tmp_path):
    # (DW = 0 already fails to elaborate: a zero replication)
    expect_param_error(tmp_path, "hw_sdp_ram", RTL_DIR / "hw_sdp_ram.v", "AW=0", "AW and DW must be at least 1")


if __name__ == "__main__":
    for b in BUILDS:
        test_hw_sdp_ram(b)

"""cocotb testbench for rtl/hw_pb_frames.v (cocotb 2.x on Icarus Verilog): the protobuf core's
frame stack (registered read, this cycle's push forwarded past it) and group stack
(asynchronous read).

Random pushes and reads every cycle against a Python model of both stacks:
  frame stack  q in a cycle is the entry ra_next addressed in the cycle before, as the
               memory holds it after that cycle's edge -- so a push to the entry read in
               the same cycle shows (forwarded), and q does not follow ra_next or the
               pushes within a cycle (checked after driving the next cycle's inputs);
  group stack  g_q is entry g_ra as held before this cycle's edge (a push to it in the
               same cycle shows a cycle later).
Entries are pushed all over the stack (its top entries included; read addresses mostly
written entries, a third of the time the entry pushed in that cycle). Built at the core's
default sizes (a 273-bit record, 101 frames) and small (MAX_DEPTH=4 as scripts/synth.sh
builds the core: 5 frames, 3 address bits; an 8-bit record).
"""

import random
import sys
from pathlib import Path

import pytest

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import ReadOnly, RisingEdge

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # rtl/tb (tbutil) when run as a script
from tbutil import expect_param_error, run_cocotb, seed_for, thorough

RTL_DIR = Path(__file__).resolve().parents[2]
TB_DIR = Path(__file__).resolve().parent


def value(sig, what, t):
    v = sig.value
    assert v.is_resolvable, f"cycle {t}: {what} = {v}"
    return int(v)


@cocotb.test()
async def test_push_and_read(dut):
    w, depth = int(dut.W.value), int(dut.DEPTH.value)
    rng = random.Random(seed_for(f"pb_frames{w}_{depth}"))
    cocotb.start_soon(Clock(dut.clk, 10, unit="ns").start())
    stk, gstk = {}, {}
    for s in ("push", "push_a", "push_d", "ra_next", "gpush", "gpush_a", "gpush_d", "g_ra"):
        getattr(dut, s).value = 0
    await RisingEdge(dut.clk)
    assert value(dut.q, "q", -1) == 0, "q before any read is not 0"

    n = 8000 if thorough() else 2000
    want_q = None          # entry ra_next of the previous cycle, after its edge (None: unwritten)
    checked = {"q": 0, "q_fwd": 0, "q_stable": 0, "g_q": 0, "g_rdw": 0}
    for t in range(n):
        push = rng.random() < 0.5
        push_a = rng.randrange(depth)
        push_d = rng.getrandbits(w)
        r = rng.random()
        ra = push_a if r < 0.33 else rng.choice(sorted(stk)) if stk and r < 0.9 else rng.randrange(depth)
        gpush = rng.random() < 0.5
        gpush_a = rng.randrange(depth + 1)
        gpush_d = rng.getrandbits(32)
        r = rng.random()
        g_ra = gpush_a if r < 0.25 else rng.choice(sorted(gstk)) if gstk and r < 0.9 else rng.randrange(depth + 1)
        for s, v in (("push", int(push)), ("push_a", push_a), ("push_d", push_d), ("ra_next", ra),
                     ("gpush", int(gpush)), ("gpush_a", gpush_a), ("gpush_d", gpush_d), ("g_ra", g_ra)):
            getattr(dut, s).value = v
        await ReadOnly()
        # q: last cycle's read, whatever this cycle drives
        if want_q is not None:
            got = value(dut.q, "q", t)
            assert got == want_q[1], f"cycle {t}: q = {got:#x}, entry {want_q[0]} holds {want_q[1]:#x}"
            checked["q"] += 1
            checked["q_stable"] += want_q[0] != ra or push
            checked["q_fwd"] += want_q[2]
        if g_ra in gstk:
            got = value(dut.g_q, "g_q", t)
            assert got == gstk[g_ra], f"cycle {t}: g_q = {got:#x}, group entry {g_ra} holds {gstk[g_ra]:#x}"
            checked["g_q"] += 1
            checked["g_rdw"] += gpush and gpush_a == g_ra
        await RisingEdge(dut.clk)
        if push:
            stk[push_a] = push_d
        if gpush:
            gstk[gpush_a] = gpush_d
        want_q = (ra, stk[ra], push and push_a == ra) if ra in stk else None
    dut._log.info("checked: %s (frame entries written %d of %d, group %d of %d)",
                  checked, len(stk), depth, len(gstk), depth + 1)
    assert len(stk) == depth and len(gstk) == depth + 1, "not every entry was pushed"
    for k, at_least in (("q", n * 3 // 4), ("q_fwd", n // 8), ("q_stable", n // 2), ("g_q", n * 3 // 4),
                        ("g_rdw", n // 10)):
        assert checked[k] >= at_least, f"only {checked[k]} {k} checks"


@pytest.mark.parametrize("name, params", [
    ("default", {}),
    ("small", {"W": 8, "DEPTH": 5, "AW": 3}),
], ids=["default", "small"])
def test_hw_pb_frames(name, params):
    run_cocotb(TB_DIR, "hw_pb_frames", [RTL_DIR / "hw_pb_frames.v"], name, params)


@pytest.mark.parametrize("param, message", [
    ("AW=6", "AW must be in 1..30 and address DEPTH + 1 entries"),
    ("DEPTH=0", "DEPTH must be at least 1"),
])
def test_bad_parameters(tmp_path, param, message):
    expect_param_error(tmp_path, "hw_pb_frames", RTL_DIR / "hw_pb_frames.v", param, message)


if __name__ == "__main__":
    test_hw_pb_frames("small", {"W": 8, "DEPTH": 5, "AW": 3})

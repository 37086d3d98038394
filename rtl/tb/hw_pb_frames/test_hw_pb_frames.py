"""cocotb testbench for rtl/hw_pb_frames.v (cocotb 2.x on Icarus Verilog): the protobuf core's
frame stack and group stack, both with a registered read, that cycle's push forwarded past
it.

Random pushes and reads of both stacks every cycle against a Python model: q (g_q) in a
cycle is the entry ra_next (g_ra_next) addressed in the cycle before, as the memory holds
it after that cycle's edge -- so a push to the entry read in the same cycle shows
(forwarded), and q does not follow ra_next or the pushes within a cycle (checked after
driving the next cycle's inputs). Entries are pushed all over the stacks (their top entries
included; read addresses mostly written entries, a third of the time the entry pushed in
that cycle). Built at the core's
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


class Stack:
    """One stack's model and its registered read: `drive` picks a cycle's push and read,
    `check` compares the output with last cycle's read, `edge` applies the push."""

    def __init__(self, dut, rng, names, entries, width):
        self.dut, self.rng, self.entries, self.width = dut, rng, entries, width
        self.push, self.push_a, self.push_d, self.ra, self.q = names
        self.mem, self.want, self.cur = {}, None, None
        self.checked = {"reads": 0, "forwarded": 0, "stable": 0}

    def drive(self):
        rng = self.rng
        push, a, d = rng.random() < 0.5, rng.randrange(self.entries), rng.getrandbits(self.width)
        r = rng.random()
        ra = a if r < 0.33 else rng.choice(sorted(self.mem)) if self.mem and r < 0.9 else rng.randrange(self.entries)
        self.cur = (push, a, d, ra)
        for s, v in zip((self.push, self.push_a, self.push_d, self.ra), (int(push), a, d, ra)):
            getattr(self.dut, s).value = v

    def check(self, t):
        # the output: last cycle's read, whatever this cycle drives
        if self.want is None:
            return
        got = value(getattr(self.dut, self.q), self.q, t)
        assert got == self.want[1], f"cycle {t}: {self.q} = {got:#x}, entry {self.want[0]} holds {self.want[1]:#x}"
        self.checked["reads"] += 1
        self.checked["stable"] += self.want[0] != self.cur[3] or self.cur[0]
        self.checked["forwarded"] += self.want[2]

    def edge(self):
        push, a, d, ra = self.cur
        if push:
            self.mem[a] = d
        self.want = (ra, self.mem[ra], push and a == ra) if ra in self.mem else None


@cocotb.test()
async def test_push_and_read(dut):
    w, depth = int(dut.W.value), int(dut.DEPTH.value)
    rng = random.Random(seed_for(f"pb_frames{w}_{depth}"))
    cocotb.start_soon(Clock(dut.clk, 10, unit="ns").start())
    stacks = [Stack(dut, rng, ("push", "push_a", "push_d", "ra_next", "q"), depth, w),
              Stack(dut, rng, ("gpush", "gpush_a", "gpush_d", "g_ra_next", "g_q"), depth + 1, 32)]
    for s in ("push", "push_a", "push_d", "ra_next", "gpush", "gpush_a", "gpush_d", "g_ra_next"):
        getattr(dut, s).value = 0
    await RisingEdge(dut.clk)
    for q in ("q", "g_q"):
        assert value(getattr(dut, q), q, -1) == 0, f"{q} before any read is not 0"

    n = 8000 if thorough() else 2000
    for t in range(n):
        for st in stacks:
            st.drive()
        await ReadOnly()
        for st in stacks:
            st.check(t)
        await RisingEdge(dut.clk)
        for st in stacks:
            st.edge()
    for st in stacks:
        dut._log.info("%s checked: %s (entries written %d of %d)", st.q, st.checked, len(st.mem), st.entries)
        assert len(st.mem) == st.entries, f"not every entry of {st.q}'s stack was pushed"
        for k, at_least in (("reads", n * 3 // 4), ("forwarded", n // 8), ("stable", n // 2)):
            assert st.checked[k] >= at_least, f"only {st.checked[k]} {k} checks of {st.q}"


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

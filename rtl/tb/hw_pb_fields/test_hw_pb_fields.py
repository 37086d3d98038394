"""cocotb testbench for rtl/hw_pb_fields.v (cocotb 2.x on Icarus Verilog): the protobuf core's
run-time-loaded field table (TABLES=1).

Random tables are loaded through the table-load port (per message {span, base}, field rows
lane by lane, overflow keys {row, message, number}) and looked up edge by edge against a
Python model of the module's contract: the row (and hit) of the (message, number) presented
before an edge shows after it; direct rows for 1 <= number <= span, overflow keys among the
first n_ovf, messages below n_msgs, rows below ROWS; everything else misses. Then the
tables are reloaded with another layout (fewer messages and keys: stale entries must
miss) and checked again. Built small (ROWS=64, OVF=4, MSGS=8), with the core's default
sizes, and small as the core uses it: three lookup ports, the last repeating a number a
port looked up the cycle before (REPEAT), the message one of five candidates (MC; each
port's row checked).
"""

import random
import sys
from pathlib import Path

import pytest

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import FallingEdge, RisingEdge

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # rtl/tb (tbutil) when run as a script
from tbutil import expect_param_error, run_cocotb, seed_for, thorough

RTL_DIR = Path(__file__).resolve().parents[2]
TB_DIR = Path(__file__).resolve().parent


class Model:
    def __init__(self, rows, ovf, msgs, w):
        self.rows, self.ovf, self.msgs, self.w = rows, ovf, msgs, w
        self.bs = [0] * msgs                 # {span, base}
        self.keys = [0] * ovf
        self.mem = {}                        # row -> [lane0..3] (absent lanes: unknown)
        self.n_msgs = self.n_ovf = 0

    def lookup(self, msg, num):
        """(hit, row bits or None when the row is a miss)."""
        if msg >= self.n_msgs or msg >= self.msgs:
            return 0, None
        span, base = self.bs[msg] >> 16, self.bs[msg] & 0xffff
        row = None
        if num != 0 and num < 1 << 16 and num <= span:
            row = (base + num) & 0xffff
        else:
            for k in range(min(self.n_ovf, self.ovf)):
                key = self.keys[k]
                if (key >> 32) & 0xffff == msg and key & 0xffffffff == num:
                    row = key >> 48
        if row is None or row >= self.rows:
            return 0, None
        lanes = self.mem.get(row, [None] * 4)
        if lanes[3] is None or not (lanes[3] >> (self.w - 1 - 192)) & 1:
            return 0, None
        assert None not in lanes, "model: a hit row with unwritten lanes"
        bits = sum(v << (64 * i) for i, v in enumerate(lanes)) & ((1 << self.w) - 1)
        return 1, bits


async def write(dut, region, idx, data):
    await FallingEdge(dut.clk)
    dut.wr_en.value, dut.wr_addr.value, dut.wr_data.value = 1, region << 20 | idx, data
    await RisingEdge(dut.clk)
    await FallingEdge(dut.clk)
    dut.wr_en.value = 0


async def load(dut, m: Model, rng, n_msgs, n_ovf):
    """A random layout: per message a direct region with holes, some overflow keys."""
    m.n_msgs, m.n_ovf = n_msgs, n_ovf
    dut.n_msgs.value, dut.n_ovf.value = n_msgs, n_ovf
    row = 0
    for mi in range(min(n_msgs, m.msgs)):
        span = rng.randrange(0, 6)
        base = (row - 1) & 0xffff
        m.bs[mi] = span << 16 | base
        await write(dut, 1, 4 * mi + 3, m.bs[mi] | rng.getrandbits(32) << 32)
        for _ in range(span):
            hit = rng.random() < 0.7
            lanes = [rng.getrandbits(64) for _ in range(4)]
            top = m.w - 1 - 192
            lanes[3] = (lanes[3] & ~(1 << top)) | (int(hit) << top)
            if row < m.rows:
                for ln, v in enumerate(lanes):
                    await write(dut, 2, 4 * row + ln, v)
                m.mem[row] = lanes
            row += 1
    for k in range(min(n_ovf, m.ovf)):
        lanes = [rng.getrandbits(64) for _ in range(3)] + [rng.getrandbits(64) | 1 << (m.w - 1 - 192)]
        r = min(row, m.rows - 1) if rng.random() < 0.9 else m.rows + 3   # now and then a row past the end
        if r < m.rows:
            for ln, v in enumerate(lanes):
                await write(dut, 2, 4 * r + ln, v)
            m.mem[r] = lanes
        while True:  # keys are unique (as the loader writes them)
            msg = rng.randrange(n_msgs) if n_msgs else 0
            num = rng.choice([rng.randrange(6, 1 << 16), rng.getrandbits(32) | 1 << 20, 536870911])
            if all((key >> 32) & 0xffff != msg or key & 0xffffffff != num for key in m.keys[:k]):
                break
        m.keys[k] = r << 48 | msg << 32 | num
        await write(dut, 3, k, m.keys[k])
        row += 1


async def check_lookups(dut, m: Model, rng, n, ports, mc, repeat):
    """n cycles of lookups: a message chosen among mc candidates (now and then none), per
    port its own number (now and then a key's), or for a repeating port a number a port
    looked up the cycle before."""
    want = None
    prev = [0] * ports                    # the numbers of the last cycle's lookups
    checked = hits = 0
    for _ in range(n):
        cands = [rng.randrange(m.msgs + 2) for _ in range(mc)]
        sel = rng.randrange(mc) if rng.random() < 0.95 else None
        nums, reps = [], []
        for p in range(ports):
            if repeat >> p & 1:
                q = rng.randrange(ports)
                reps.append(1 << q)
                nums.append(prev[q])
            elif rng.random() < 0.3 and m.n_ovf:
                key = m.keys[rng.randrange(min(m.n_ovf, m.ovf))]
                if sel is not None and (rng.random() < 0.7 or ports == 1):
                    cands[sel] = (key >> 32) & 0xffff
                nums.append(key & 0xffffffff)
                reps.append(0)
            else:
                nums.append(rng.choice([0, 1, 2, 3, 4, 5, 6, 7, rng.getrandbits(32), 65536 + rng.randrange(4)]))
                reps.append(0)
        await FallingEdge(dut.clk)
        if want is not None:
            hit_v, row_v = int(dut.hit.value), int(dut.row.value)
            for p, (whit, wrow, what) in enumerate(want):
                hit, row = hit_v >> p & 1, row_v >> (m.w * p) & ((1 << m.w) - 1)
                assert hit == whit, f"port {p} lookup {what}: hit {hit}, model {whit}"
                if hit:
                    assert row == wrow, f"port {p} lookup {what}: row {row:x}, model {wrow:x}"
                    hits += 1
                checked += 1
        dut.l_msgs.value = sum(c << (16 * i) for i, c in enumerate(cands))
        dut.l_msel.value = 0 if sel is None else 1 << sel
        # a repeating port's own number is unused: drive garbage
        dut.l_num.value = sum((rng.getrandbits(32) if repeat >> p & 1 else num) << (32 * p)
                              for p, num in enumerate(nums))
        dut.l_rep.value = sum(r << (ports * p) for p, r in enumerate(reps))
        want = [(0, None, (None, num)) if sel is None else (*m.lookup(cands[sel], num), (cands[sel], num))
                for num in nums]
        prev = nums
        await RisingEdge(dut.clk)
    return checked, hits


@cocotb.test()
async def test_load_and_lookup(dut):
    rows, ovf, msgs, w, ports, mc, repeat = (int(getattr(dut, p).value)
                                             for p in ("ROWS", "OVF", "MSGS", "W", "PORTS", "MC", "REPEAT"))
    rng = random.Random(seed_for(f"pb_fields{rows}" + (f"p{ports}" if ports > 1 else "")))
    cocotb.start_soon(Clock(dut.clk, 10, unit="ns").start())
    for p in ("wr_en", "wr_addr", "wr_data", "n_msgs", "n_ovf", "l_msgs", "l_msel", "l_num", "l_rep"):
        getattr(dut, p).value = 0
    m = Model(rows, ovf, msgs, w)
    n = 6000 if thorough() else 1500
    total = hits = 0
    for n_msgs, n_ovf in [(min(msgs, 8), ovf), (min(msgs, 3), min(ovf, 2))]:
        await load(dut, m, rng, n_msgs, n_ovf)
        c, h = await check_lookups(dut, m, rng, n, ports, mc, repeat)
        total, hits = total + c, hits + h
    dut._log.info("lookups checked: %d, hits %d", total, hits)
    assert hits >= total // 20, f"too few hits: {hits} of {total}"


@pytest.mark.parametrize("name, params", [
    ("small", {"ROWS": 64, "OVF": 4, "MSGS": 8, "W": 220}),
    ("default", {}),
    # as the core instantiates it: three ports (the last repeating) on five message
    # candidates
    ("small3", {"ROWS": 64, "OVF": 4, "MSGS": 8, "W": 220, "PORTS": 3, "MC": 5, "REPEAT": 4}),
], ids=["small", "default", "small3"])
def test_hw_pb_fields(name, params):
    run_cocotb(TB_DIR, "hw_pb_fields", [RTL_DIR / "hw_pb_fields.v"], name, params)


def test_bad_parameters(tmp_path):
    expect_param_error(tmp_path, "hw_pb_fields", RTL_DIR / "hw_pb_fields.v", "OVF=0", "OVF must be in 1..256")


if __name__ == "__main__":
    test_hw_pb_fields("small", {"ROWS": 64, "OVF": 4, "MSGS": 8, "W": 220})

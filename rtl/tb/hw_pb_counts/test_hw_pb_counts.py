"""cocotb testbench for rtl/hw_pb_counts.v (cocotb 2.x on Icarus Verilog): the protobuf core's
count memory (one asynchronous read port, three registered), the arrays' fill state beside it
(written together, a registered read at the element slot) and the state memory (two
asynchronous read ports, and a registered read at one of their addresses with its "not all
ones" flag).

Random writes on the three write ports and reads on the six read addresses, every cycle,
against a Python model (rtl/tb/memports.py): an asynchronous read shows the entry as the
memory held it before this cycle's edge, including in the cycle it is written; a registered
one shows, a cycle after its address, the entry as held after the edge in between (a write
in the cycle of the address forwarded). Built small (CNT_BITS=4,
ST_BITS=3: every entry written and read many times, aliasing would show) and at the core's
sizes (11, 11: the top entries are reached as often as the bottom ones).
"""

import random
import sys
from pathlib import Path

import pytest

import cocotb
from cocotb.clock import Clock

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # rtl/tb (tbutil, memports) when run as a script
import memports
from tbutil import expect_param_error, run_cocotb, seed_for, thorough

RTL_DIR = Path(__file__).resolve().parents[2]
TB_DIR = Path(__file__).resolve().parent


@cocotb.test()
async def test_writes_and_reads(dut):
    cnt_bits, st_bits = int(dut.CNT_BITS.value), int(dut.ST_BITS.value)
    rng = random.Random(seed_for(f"pb_counts{cnt_bits}_{st_bits}"))
    cocotb.start_soon(Clock(dut.clk, 10, unit="ns").start())
    mems = {"cnt": (1 << cnt_bits, 32), "filn": (1 << cnt_bits, 32), "fila": (1 << cnt_bits, 40),
            "st": (1 << st_bits, 32)}
    writes = [("cnt_we", "cnt_wa", {"cnt": "cnt_wd"}),
              ("fil_we", "fil_wa", {"filn": "filn_wd", "fila": "fila_wd"}),
              ("st_we", "st_wa", {"st": "st_wd"})]
    reads = [("ra_c", [("cnt", "cnt_q_c")], 0, False),
             ("ra_ne_next", [("cnt", "cnt_q_ne"), ("filn", "filn_q"), ("fila", "fila_q")], 0, True),
             ("ra_u_next", [("cnt", "cnt_q_u")], 0, True),
             ("ra_d_next", [("cnt", "cnt_q_d")], 0, True),
             ("ra_s", [("st", "st_q_s")], 0, False),
             ("ra_o", [("st", "st_q_o")], 0, False),
             # (ra_s again: the registered read of the entry the cycle before gave)
             ("ra_s", [("st", "st_q_s_prev")], 0, True)]
    flags = {True: 0, False: 0}

    def drive_more(values, model):
        # an unset state entry is all ones: written often enough for the flag to show both
        if rng.random() < 0.3:
            values["st_wd"] = 0xFFFFFFFF

    def check_more(t, values, model):
        q = dut.st_q_s_prev.value
        if q.is_resolvable:
            want = int(q) != 0xFFFFFFFF
            assert int(dut.st_set_s_prev.value) == want, f"cycle {t}: st_set_s_prev for st_q_s_prev {int(q):#x}"
            flags[want] += 1

    n = 8000 if thorough() else 2000
    checked, rdw = await memports.run(dut, mems, writes, reads, rng, n, drive_more, check_more)
    assert min(flags.values()) >= n // 20, f"st_set_s_prev seen set / clear: {flags}"
    dut._log.info("reads checked: %s; read during write: %d", checked, rdw)
    for q, c in checked.items():
        assert c >= n // 3, f"only {c} checks of {q}"
    assert rdw >= n // 10, f"only {rdw} read-during-write checks"


@pytest.mark.parametrize("name, params", [
    ("small", {"CNT_BITS": 4, "ST_BITS": 3}),
    ("default", {}),
], ids=["small", "default"])
def test_hw_pb_counts(name, params):
    run_cocotb(TB_DIR, "hw_pb_counts", [RTL_DIR / "hw_pb_counts.v"], name, params)


@pytest.mark.parametrize("param, message", [
    ("CNT_BITS=0", "CNT_BITS must be in 1..31"),
    ("ST_BITS=32", "ST_BITS must be in 1..31"),
])
def test_bad_parameters(tmp_path, param, message):
    expect_param_error(tmp_path, "hw_pb_counts", RTL_DIR / "hw_pb_counts.v", param, message)


if __name__ == "__main__":
    test_hw_pb_counts("small", {"CNT_BITS": 4, "ST_BITS": 3})

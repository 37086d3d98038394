"""cocotb testbench for rtl/hw_pb_insts.v (cocotb 2.x on Icarus Verilog): the protobuf core's
instance tables (msg/cb/sb written together when an instance is created, off/start when it
is placed; registered reads at the next cycle's entered instance and required check's) and
its dropped-map-entry list (registered reads at the next counter and the entry before it).

Random writes on the three write ports and reads on every read address, every cycle,
against a Python model (rtl/tb/memports.py): a registered output shows, a cycle after its
address, the entry as the memory holds it after the edge in between, so a write to it in
the cycle of the address is forwarded (a quarter of the reads or so); msg_r_next, the
message type at the next cycle's required-check instance, is asynchronous with this cycle's
write to it forwarded (checked against the table as the next cycle will hold it). Built
small (INST_BITS=3, DROP_BITS=2: drop_last wraps from entry 0 to the last) and at the
core's sizes (10, 8).
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
    inst_bits, drop_bits = int(dut.INST_BITS.value), int(dut.DROP_BITS.value)
    rng = random.Random(seed_for(f"pb_insts{inst_bits}_{drop_bits}"))
    cocotb.start_soon(Clock(dut.clk, 10, unit="ns").start())
    ni, nd = 1 << inst_bits, 1 << drop_bits
    mems = {"msg": (ni, 16), "cb": (ni, 32), "sb": (ni, 32), "off": (ni, 40), "start": (ni, 32),
            "drop": (nd, 32)}
    writes = [("im_we", "im_wa", {"msg": "msg_wd", "cb": "cb_wd", "sb": "sb_wd"}),
              ("imw_we", "imw_wa", {"off": "off_wd", "start": "start_wd"}),
              ("drop_we", "drop_wa", {"drop": "drop_wd"})]
    reads = [("ra_c_next", [("cb", "cb_q"), ("sb", "sb_q"), ("off", "off_q")], 0, True),
             ("ra_r_next", [("msg", "msg_r"), ("off", "off_r"), ("start", "start_r")], 0, True),
             ("drop_ra_next", [("drop", "drop_q")], 0, True),
             ("drop_ra_next", [("drop", "drop_last")], -1, True)]
    n = 8000 if thorough() else 2000
    fwd = {"checked": 0, "forwarded": 0}

    def check_next(t, values, model):
        a = values["ra_r_next"]
        want = values["msg_wd"] if values["im_we"] and values["im_wa"] == a else model["msg"].get(a)
        if want is None:
            return
        got = int(dut.msg_r_next.value)
        assert got == want, f"cycle {t}: msg_r_next = {got:#x}, entry {a} will hold {want:#x}"
        fwd["checked"] += 1
        fwd["forwarded"] += values["im_we"] and values["im_wa"] == a

    # (drop_q and drop_last share drop_ra_next: it is driven as its last entry in `reads`
    # chose; msg_r_next is read at ra_r_next, as msg_r a cycle later)
    checked, rdw = await memports.run(dut, mems, writes, reads, rng, n, check_more=check_next)
    dut._log.info("reads checked: %s; read during write: %d; msg_r_next: %s", checked, rdw, fwd)
    for q, c in checked.items():
        assert c >= n // 3, f"only {c} checks of {q}"
    assert rdw >= n // 10, f"only {rdw} read-during-write checks"
    assert fwd["checked"] >= n // 3 and fwd["forwarded"] >= n // 40, f"msg_r_next: {fwd}"


@pytest.mark.parametrize("name, params", [
    ("small", {"INST_BITS": 3, "DROP_BITS": 2}),
    ("default", {}),
], ids=["small", "default"])
def test_hw_pb_insts(name, params):
    run_cocotb(TB_DIR, "hw_pb_insts", [RTL_DIR / "hw_pb_insts.v"], name, params)


@pytest.mark.parametrize("param, message", [
    ("INST_BITS=0", "INST_BITS must be in 1..31"),
    ("DROP_BITS=32", "DROP_BITS must be in 1..31"),
])
def test_bad_parameters(tmp_path, param, message):
    expect_param_error(tmp_path, "hw_pb_insts", RTL_DIR / "hw_pb_insts.v", param, message)


if __name__ == "__main__":
    test_hw_pb_insts("small", {"INST_BITS": 3, "DROP_BITS": 2})

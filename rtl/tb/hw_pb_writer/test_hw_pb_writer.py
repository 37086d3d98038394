"""cocotb testbench for rtl/hw_pb_writer.v (cocotb 2.x): random write, zero, 16-byte, port-2
and read requests, each with or without a lazily zeroed word or'ed in (the zeroer's answer,
given a cycle after the request, while the request is in stage 1), and the zeroer's own
zero writes (given in a cycle stage 1 has no port-1 write), against a Python model of the
output memory. Checks the ports' timing (every request reaches its port exactly two cycles
after it was made, in order; a zeroer write the cycle after it was given), the word
address, data and byte enables (through the memory they produce), the read lane three
cycles after the request, that requests beyond the memory are dropped, `pending`, and the
stage-1 writes the zeroer checks (`q_*`)."""

import random
import sys
from pathlib import Path

import pytest

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import ReadOnly, RisingEdge
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # rtl/tb (tbutil, hwsc) when run as a script
from tbutil import expect_param_error, run_cocotb, seed_for

RTL_DIR = Path(__file__).resolve().parents[2]
TB_DIR = Path(__file__).resolve().parent

RZB = 4


def rz_bytes(idx, lo, hi, ob, ob_shift):
    """Byte enables of the lazily zeroed allocation [lo, hi) in its word idx."""
    return sum(1 << b for b in range(ob) if lo <= (idx << ob_shift) + b < hi)


def expected(req, ob, ob_shift, mem_words):
    """The port writes one request makes: [(port, word, {byte: value})], and the read word."""
    writes, read = [], None
    cap = mem_words * ob
    if req["zw"] and req["zw_a"] < cap:
        writes.append((1, req["zw_a"] >> ob_shift,
                       {b: 0 for b in range(ob) if rz_bytes(req["rz_idx"], req["lo"], req["hi"], ob, ob_shift) >> b & 1}))
    if req["we"] and req["wa"] < cap:
        wa = req["wa"]
        word, lane_byte = wa >> ob_shift, wa & (ob - 1)
        if req["wz"]:
            bytes_ = {lane_byte + i: 0 for i in range(req["wz_n"])}
        elif req["w2"]:
            bytes_ = {lane_byte + i: (req["w2d"] >> (8 * i)) & 0xFF for i in range(16)
                      if req["w2m"] >> i & 1 and lane_byte + i < ob}
        else:
            lane = (wa >> 3) & ((ob >> 3) - 1)
            bytes_ = {8 * lane + i: (req["wd"] >> (8 * i)) & 0xFF for i in range(8) if req["wbe"] >> i & 1}
        if req["rz_hit"]:
            for b in range(ob):
                if rz_bytes(req["rz_idx"], req["lo"], req["hi"], ob, ob_shift) >> b & 1:
                    bytes_.setdefault(b, None)   # enabled; data from the request (zero outside it)
        writes.append((1, word, bytes_))
    if req["o2_we"] and req["o2_a"] < cap:
        a = req["o2_a"]
        word, lane_byte = a >> ob_shift, a & (ob - 1)
        bytes_ = {lane_byte + i: (req["o2_d"] >> (8 * i)) & 0xFF for i in range(16)
                  if req["o2_m"] >> i & 1 and lane_byte + i < ob}
        if req["rz2_hit"]:
            for b in range(ob):
                if rz_bytes(req["rz2_idx"], req["lo"], req["hi"], ob, ob_shift) >> b & 1:
                    bytes_.setdefault(b, None)
        writes.append((2, word, bytes_))
    if req["re"] and req["ra"] < cap:
        read = req["ra"]
    return writes, read


def random_request(rng, ob, ob_shift, mem_words):
    cap = mem_words * ob
    addr = lambda: rng.randrange(cap, cap + 2 * ob) if rng.random() < 0.05 else rng.randrange(cap)
    req = dict(we=0, wa=0, wd=0, wbe=0, wz=0, wz_n=0, w2=0, w2d=0, w2m=0, rz_hit=0, rz_idx=0,
               o2_we=0, o2_a=0, o2_d=0, o2_m=0, rz2_hit=0, rz2_idx=0, re=0, ra=0, zw=0, zw_a=0,
               lo=rng.randrange(ob), hi=0)
    req["hi"] = req["lo"] + rng.randrange((1 << RZB) * ob - req["lo"] + 1)
    kind = rng.choice(["plain", "zero", "w16", "none"])
    if kind != "none":
        req["we"] = 1
        req["wa"] = addr()
        lane_byte = req["wa"] & (ob - 1)
        if kind == "plain":
            n = rng.randint(1, 8 - (req["wa"] & 7))
            req["wd"] = rng.getrandbits(64) & ((1 << (8 * n)) - 1)   # the core's lowbytes
            req["wd"] <<= 8 * (req["wa"] & 7)
            req["wd"] &= (1 << 64) - 1
            req["wbe"] = ((1 << n) - 1) << (req["wa"] & 7)
        elif kind == "zero":
            req["wz"] = 1
            req["wz_n"] = rng.randint(0, ob - lane_byte)
        else:
            req["w2"] = 1
            n = rng.randint(1, min(16, ob - lane_byte))
            req["w2m"] = (1 << n) - 1
            req["w2d"] = rng.getrandbits(8 * n)
        if rng.random() < 0.3:
            req["rz_hit"], req["rz_idx"] = 1, rng.randrange(1 << RZB)
    elif rng.random() < 0.5:
        # the zeroer's write in the slot an idle port 1 leaves (its word: rz_idx)
        req["zw"], req["zw_a"], req["rz_hit"], req["rz_idx"] = 1, addr() & ~(ob - 1), 1, rng.randrange(1 << RZB)
    if rng.random() < 0.3:
        req["o2_we"] = 1
        req["o2_a"] = addr()
        n = rng.randint(1, min(16, ob - (req["o2_a"] & (ob - 1))))
        req["o2_m"] = (1 << n) - 1
        req["o2_d"] = rng.getrandbits(8 * n)
        if rng.random() < 0.3:
            req["rz2_hit"], req["rz2_idx"] = 1, rng.randrange(1 << RZB)
    elif rng.random() < 0.3:
        req["re"], req["ra"] = 1, addr()
    return req


def drive(dut, req, prev):
    """This cycle's request, and the zeroer's answers for the request of the cycle before
    (in stage 1 now)."""
    for k in ("we", "wa", "wd", "wbe", "wz", "wz_n", "w2", "w2d", "w2m", "o2_we", "o2_a", "o2_d", "o2_m", "re", "ra"):
        getattr(dut, k).value = req[k]
    for k in ("rz_hit", "rz_idx", "rz2_hit", "rz2_idx", "zw", "zw_a"):
        getattr(dut, k).value = prev[k]
    dut.rz_lo_rel.value = prev["lo"]
    dut.rz_hi_rel.value = prev["hi"]


@cocotb.test()
async def test_requests_reach_the_ports(dut):
    ob = len(dut.out_wr_be)
    ob_shift = ob.bit_length() - 1
    mem_words = 1 << len(dut.out_wr_addr)
    rng = random.Random(seed_for("pb_writer") + ob)
    cocotb.start_soon(Clock(dut.clk, 10, unit="ns").start())
    idle = random_request(random.Random(0), ob, ob_shift, mem_words)
    idle.update(we=0, o2_we=0, re=0, zw=0)
    drive(dut, idle, idle)
    dut.rst.value = 1
    dut.out_rd_data.value = 0
    await RisingEdge(dut.clk)
    await RisingEdge(dut.clk)
    dut.rst.value = 0

    n = 1500
    reqs = [random_request(rng, ob, ob_shift, mem_words) for _ in range(n)] + [idle] * 4
    mem = [rng.getrandbits(8 * ob) for _ in range(mem_words)]
    checked = {"w1": 0, "w2": 0, "rd": 0, "rz": 0, "zw": 0, "dropped": 0}
    read_q = {}   # cycle the lane is due -> (byte address, word value at the read)
    for t, req in enumerate(reqs):
        answer = None   # the word the memory answers the read port with, next cycle
        drive(dut, req, reqs[t - 1] if t >= 1 else idle)
        await ReadOnly()
        # the ports now show the request of cycle t - 2
        if t >= 2:
            writes, read = expected(reqs[t - 2], ob, ob_shift, mem_words)
            ports = {1: (dut.out_wr_en, dut.out_wr_addr, dut.out_wr_data, dut.out_wr_be),
                     2: (dut.out2_wr_en, dut.out2_wr_addr, dut.out2_wr_data, dut.out2_wr_be)}
            want_ports = {p: (w, b) for p, w, b in writes}
            for p, (en, addr, data, be) in ports.items():
                if p not in want_ports:
                    assert int(en.value) == 0, f"cycle {t}: port {p} writes, no request"
                    r = reqs[t - 2]
                    if (p == 1 and (r["we"] or r["zw"])) or (p == 2 and r["o2_we"]):
                        checked["dropped"] += 1
                    continue
                word, bytes_ = want_ports[p]
                assert int(en.value) == 1, f"cycle {t}: port {p} idle"
                assert int(addr.value) == word, f"cycle {t}: port {p} word {int(addr.value)} != {word}"
                be_v, d_v = int(be.value), int(data.value)
                want_be = sum(1 << b for b in bytes_)
                assert be_v == want_be, f"cycle {t}: port {p} be {be_v:x} != {want_be:x}"
                for b, v in bytes_.items():
                    got = (d_v >> (8 * b)) & 0xFF
                    assert got == (0 if v is None else v), f"cycle {t}: port {p} byte {b}: {got:x}"
                checked["w1" if p == 1 else "w2"] += 1
                checked["zw"] += int(p == 1 and reqs[t - 2]["zw"])
                if (reqs[t - 2]["rz_hit"] if p == 1 else reqs[t - 2]["rz2_hit"]):
                    checked["rz"] += 1
            if read is not None:
                assert int(dut.out_rd_en.value) == 1 and int(dut.out_rd_addr.value) == read >> ob_shift
                answer = mem[read >> ob_shift]
                read_q[t + 1] = (read, answer)
            else:
                assert int(dut.out_rd_en.value) == 0, f"cycle {t}: read, no request"
        # pending: stage 1 holds the request of cycle t - 1, or the zeroer's write is given;
        # stage 1's writes (the zeroer's q_* inputs)
        if t >= 1:
            r = reqs[t - 1]
            assert int(dut.pending.value) == int(bool(r["we"] or r["o2_we"] or r["re"] or r["zw"])), \
                f"cycle {t}: pending"
            assert int(dut.q_we.value) == r["we"] and int(dut.q_we2.value) == r["o2_we"], f"cycle {t}: q_we, q_we2"
            assert int(dut.q_wa.value) == r["wa"] and int(dut.q_wa2.value) == r["o2_a"], f"cycle {t}: q_wa, q_wa2"
        # the read lane of a request made in cycle t - 3
        if t in read_q:
            a, word = read_q.pop(t)
            lane = (a & (ob - 1)) >> 3
            assert int(dut.rd_lane.value) == (word >> (64 * lane)) & ((1 << 64) - 1), f"cycle {t}: rd_lane"
            checked["rd"] += 1
        await RisingEdge(dut.clk)
        # the memory answers the read port a cycle after out_rd_en (the model keeps the
        # memory fixed: the writes are checked on the ports)
        if answer is not None:
            dut.out_rd_data.value = answer
    # every kind was seen and checked often enough for the bars to mean something
    for k, at_least in (("w1", n // 2), ("w2", n // 8), ("rd", n // 20), ("rz", n // 10), ("zw", n // 20),
                        ("dropped", 10)):
        assert checked[k] >= at_least, f"only {checked[k]} {k} checks"


def _build_and_test(width):
    run_cocotb(TB_DIR, "hw_pb_writer", [RTL_DIR / "hw_pb_writer.v"], f"w{width}",
               {"OUT_WIDTH": width, "OUT_ADDR_WIDTH": 5, "RZB": RZB})


@pytest.mark.parametrize("width", [64, 128, 256])
def test_hw_pb_writer(width):
    _build_and_test(width)


def test_bad_parameters_rejected(tmp_path):
    expect_param_error(tmp_path, "hw_pb_writer", RTL_DIR / "hw_pb_writer.v", "OUT_WIDTH=32",
                       "OUT_WIDTH must be 64, 128 or 256")


if __name__ == "__main__":
    _build_and_test(64)

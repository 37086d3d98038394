"""cocotb testbench for rtl/hw_pb_zeroer.v (cocotb 2.x on Icarus Verilog): the protobuf
core's zeroer (the lazily zeroed allocation, and the range zeroed at once a word a cycle:
test_range_at_once).

The model keeps the allocation byte by byte: arming [a, a+n) makes its bytes dirty; a write
on either port to a word with dirty bytes cleans the allocation's bytes in that word (the
writer widens the write's byte enables to them); a clear (or reset) cleans everything. The
zeroer checks each cycle's writes a cycle later, from the writer's stage 1 (the testbench
drives the writes of cycle t - 1 there in cycle t, as the writer does; their `hold` is
registered in the zeroer), and the model does the same: in cycle t it answers for the
requests of cycle t - 1 (none checked when t - 1 armed). The module's word-level view is checked against it every
cycle: the idle-port write (`zw` only when the registered port 1 has no request, was not
held and something is dirty; the lowest dirty word first), the hits of both registered
ports (a hit exactly when the written word holds dirty bytes, with its index from the
allocation's first word), and, with those hits taken out (words whose write is checked now
count as clean), `any`, `count` (words holding dirty bytes) and `pa_pending` (the probed
byte of this cycle is dirty), and `lo_rel` / `hi_rel` (the writer's masks, which must cover
exactly the allocation's bytes of a word). Random sequences with a fixed seed: allocations
armed whenever `any` is low (as the core arms them; often while the last words' hits are
still being checked), at any alignment and size up to 2^RZB words, writes in and around
them (none into an allocation in the cycle that arms it, and port 2 mostly beside a port-1
write to another word, as in the core; in some cycles beyond the core's use, port 2 alone,
often on the idle-port write's word, or on port 1's word: two hits on one word must count
once in `count` / `any`), holds, clears;
64-, 128- and 256-bit words, and RZB=2 (a 4-word allocation, so the whole allocation is
often the edge case), and the narrow address of the core (AW=16: every address below 2^15,
allocations up to that edge, probed bytes also at 2^16 and above, where the kept bits alias
pending ones but they are never pending).

Beside the word-level model, an image-level one: the output memory's bytes as the writer
puts the module's answers on the ports (zw in the cycle after it, a request with its
widened byte enables two cycles after it was made; the bytes zeroed are the writer's
masks from `hit_idx`, `lo_rel`, `hi_rel`). An armed allocation starts as garbage; every
time `any` falls, each of its bytes must hold zero or the last data written to it, so a
word zeroed after a data write to it, or left unzeroed, fails.
"""

import os
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
# the module's AW (its address bits; the pytest entry passes it): addresses below LIM
AW = int(os.environ.get("HW_TB_ZR_AW", "40"))
LIM = 1 << (AW - 1) if AW < 40 else 1 << 40


class Model:
    """The lazily zeroed allocation, byte by byte."""

    def __init__(self, ob, rzb):
        self.ob, self.rzw = ob, 1 << rzb
        self.lo = self.hi = 0
        self.dirty = set()          # bytes of [lo, hi) still to be zeroed

    def word(self, a):
        return a // self.ob

    def index(self, a):
        """The allocation's word index of byte a (None outside its 2^RZB words)."""
        d = self.word(a) - self.word(self.lo)
        return d if 0 <= d < self.rzw else None

    def dirty_words(self):
        return sorted({self.index(b) for b in self.dirty})

    def pending(self, a):
        """The word of byte a holds dirty bytes: {hit, index}."""
        i = self.index(a)
        return i is not None and i in self.dirty_words(), i

    def clean_word(self, a):
        w = self.word(a)
        self.dirty = {b for b in self.dirty if self.word(b) != w}

    def arm(self, a, n):
        self.lo, self.hi = a, a + n
        self.dirty = set(range(a, a + n))


def random_step(rng, m, ob, rzw, arm_ok):
    """One cycle's inputs."""
    step = dict(arm=0, arm_a=0, arm_n=0, clear=0, we=0, wa=0, hold=0, we2=0, wa2=0, pa=0)
    if arm_ok and rng.random() < 0.3:
        a = rng.choice([rng.randrange(1 << 20), rng.randrange(1 << 32), (1 << 32) - rng.randrange(1, 4 * ob)])
        if AW < 40:
            a = rng.choice([a % (LIM - rzw * ob), LIM - rzw * ob - rng.randrange(4 * ob)])
        if rng.random() < 0.5:
            a &= ~7             # the core's allocations are 8-byte aligned
        room = rzw * ob - a % ob
        n = rng.choice([0, rng.randint(1, room), room, rng.randint(1, min(room, 2 * ob))])
        if rng.random() < 0.5:
            n &= ~7
        step.update(arm=1, arm_a=a, arm_n=n)
    if rng.random() < 0.02:
        step["clear"] = 1

    def near():
        base = m.word(m.lo) * ob
        if rng.random() < 0.1:
            return rng.randrange(LIM)
        return max(0, min(LIM - 1, rng.randrange(base - 2 * ob, base + (rzw + 2) * ob)))

    def outside_new(a):
        """(the core writes nothing into an allocation in the cycle that arms it)"""
        return not step["arm"] or not step["arm_a"] <= a < step["arm_a"] + step["arm_n"]

    if rng.random() < 0.4:
        step.update(we=1, wa=near())
    step["hold"] = int(rng.random() < 0.2)
    if rng.random() < 0.15:
        # beyond the core's use: port 2 alone (beside the idle-port write, which may take the
        # same word: its lowest pending one), or on port 1's word (the image model then stops
        # checking the allocation: the two writes would race)
        words = m.dirty_words()
        wa2 = (m.word(m.lo) + words[0]) * ob + rng.randrange(ob) if words and rng.random() < 0.6 else near()
        if rng.random() < 0.5:
            step.update(we=0, wa=0, we2=1, wa2=wa2)
        else:
            step.update(we=1, wa=wa2, we2=1, wa2=wa2 - wa2 % ob + rng.randrange(ob))
        step["free"] = 1
    elif rng.random() < 0.3:
        # (in the core port 2 writes only beside a port-1 write, to another word)
        step.update(we=1, we2=1, wa2=near())
        if not step["wa"]:
            step["wa"] = near()
        if m.word(step["wa2"]) == m.word(step["wa"]):
            step["wa2"] += ob
    if not outside_new(step["wa"]):
        step["we"] = 0
    if not outside_new(step["wa2"]) or not (step["we"] or step.get("free")):
        step["we2"] = 0
    step["pa"] = near() if rng.random() < 0.7 else rng.choice([m.lo, m.hi, max(0, m.lo - 1), max(0, m.hi - 1)])
    if AW < 40 and rng.random() < 0.2:
        # the same kept bits, out of range (never pending)
        step["pa"] += rng.randrange(1, 1 << (40 - AW)) << AW
    return step


class Image:
    """The output memory's bytes the zeroer's answers produce (see the module docstring):
    data writes put a byte (a value unique to the write) at their address; the zeroing
    clears the allocation's bytes of a word, except the byte a data write in the same port
    write puts there."""

    GARBAGE = "garbage"

    def __init__(self):
        self.mem, self.want = {}, {}
        self.alloc = None           # the allocation's bytes, while it is to be checked
        self.serial = 0

    def arm(self, lo, hi):
        self.alloc = range(lo, hi)
        for b in self.alloc:
            self.mem[b], self.want[b] = self.GARBAGE, 0

    def forget(self):
        self.alloc = None

    def port_write(self, data_at, zero_bytes):
        """One port write: a data byte at data_at (None: a zero write only), and the bytes
        its widened enables zero."""
        for b in zero_bytes:
            if b != data_at:
                self.mem[b] = 0
        if data_at is not None:
            self.serial += 1
            self.mem[data_at] = self.want[data_at] = self.serial

    def check(self, at):
        if self.alloc is None:
            return 0
        bad = [b for b in self.alloc if self.mem.get(b) != self.want.get(b)]
        assert not bad, (f"{at}: the allocation [{self.alloc.start:#x}, {self.alloc.stop:#x}) drained, "
                         f"but byte {bad[0]:#x} holds {self.mem.get(bad[0])} (want {self.want.get(bad[0])})")
        return len(self.alloc)


def drive(dut, step, prev):
    """This cycle's inputs from the state machine, and the writes of the cycle before as
    the writer's stage 1 holds them."""
    for k in ("arm", "arm_a", "arm_n", "clear", "hold", "pa"):
        getattr(dut, k).value = step[k]
    for k in ("we", "wa", "we2", "wa2"):
        getattr(dut, "q_" + k).value = prev[k]


@cocotb.test()
async def test_lazy_allocation(dut):
    rzb = len(dut.count) - 1                     # count: RZB+1 bits
    rzp = len(dut.lo_rel)                        # RZB + log2(bytes per word) + 1 bits
    ob, rzw = 1 << (rzp - rzb - 1), 1 << rzb
    rng = random.Random(seed_for("pb_zeroer") + ob + rzb)
    cocotb.start_soon(Clock(dut.clk, 10, unit="ns").start())
    m = Model(ob, rzb)
    img = Image()
    idle = dict(arm=0, arm_a=0, arm_n=0, clear=0, we=0, wa=0, hold=0, we2=0, wa2=0, pa=0)
    drive(dut, idle, idle)
    dut.z_set.value, dut.z_step.value = 0, 0     # (the range at once: test_range_at_once)
    dut.rst.value = 1
    await RisingEdge(dut.clk)
    await RisingEdge(dut.clk)
    dut.rst.value = 0

    def word_bytes(i, lo_rel, hi_rel):
        """The writer's mask: the allocation's bytes of its word i, as byte addresses."""
        base = (m.word(m.lo) + i) * ob
        return [base + b for b in range(ob) if lo_rel <= i * ob + b < hi_rel]

    n = 20000 if thorough() else 4000
    checked = dict(cycles=0, zw=0, hit=0, hit2=0, miss=0, pa=0, armed=0, armed_in_flight=0, clears=0,
                   drained=0, resets=0, image_bytes=0, same_word=0, two_hits=0)
    prev, chk = idle, False                      # the requests checked this cycle
    for t in range(n):
        reset = rng.random() < 0.005
        # this cycle's answers, for the requests of cycle t - 1 (registered)
        words = m.dirty_words()
        zw = chk and bool(words) and not prev["we"] and not prev["hold"]
        a1 = (m.word(m.lo) + words[0]) * ob if zw else prev["wa"]
        hit, idx = m.pending(a1)
        hit = hit and chk and (prev["we"] or zw)
        hit2, idx2 = m.pending(prev["wa2"])
        hit2 = hit2 and chk and prev["we2"]
        left = [i for i in words if not (hit and i == idx) and not (hit2 and i == idx2)]
        if hit and hit2 and idx == idx2:
            checked["same_word"] += 1
            if not zw:
                img.forget()
        step = random_step(rng, m, ob, rzw, not left)
        dut.rst.value = int(reset)
        drive(dut, step, prev)
        await ReadOnly()
        at = f"cycle {t} ({step}; checking {prev})"
        assert int(dut.any.value) == int(bool(left)), f"{at}: any"
        assert int(dut.count.value) == len(left), f"{at}: count {int(dut.count.value)} != {len(left)}"
        # the writer's masks: lo_rel/hi_rel cover exactly the allocation's bytes of a word
        lo_rel, hi_rel = int(dut.lo_rel.value), int(dut.hi_rel.value)
        assert lo_rel == m.lo - m.word(m.lo) * ob, f"{at}: lo_rel"
        if m.hi - m.lo > 0:
            assert hi_rel == (m.hi - m.word(m.lo) * ob) % (1 << rzp), f"{at}: hi_rel"
            for i in words:
                cover = set(word_bytes(i, lo_rel, hi_rel))
                want = {b for b in range(m.lo, m.hi) if m.index(b) == i}
                assert cover == want, f"{at}: the masks of word {i}: {sorted(cover)} != {sorted(want)}"
        # port 1: the idle-port write, lowest dirty word first
        assert int(dut.zw.value) == int(zw), f"{at}: zw"
        if zw:
            assert int(dut.zw_a.value) == a1, f"{at}: zw_a {int(dut.zw_a.value):#x} != {a1:#x}"
            checked["zw"] += 1
        assert int(dut.hit.value) == int(hit), f"{at}: hit"
        if hit:
            assert int(dut.hit_idx.value) == idx, f"{at}: hit_idx"
            checked["hit"] += 1
        assert int(dut.hit2.value) == int(hit2), f"{at}: hit2"
        if hit2:
            assert int(dut.hit2_idx.value) == idx2, f"{at}: hit2_idx"
            checked["hit2"] += 1
        checked["two_hits"] += int(hit and hit2 and idx != idx2)
        if (prev["we"] and not hit) or (prev["we2"] and not hit2):
            checked["miss"] += 1
        pa = step["pa"] in m.dirty and m.index(step["pa"]) in left
        assert int(dut.pa_pending.value) == int(pa), f"{at}: pa_pending({step['pa']:#x})"
        checked["pa"] += int(pa)
        checked["cycles"] += 1
        # the ports this cycle's answers drive next cycle (written at the edge after it):
        # zw, and the requests of t - 1, their enables widened by the DUT's hits
        # (a reset drops them: the writer's port registers are reset too)
        if not reset:
            if zw:
                img.port_write(None, word_bytes(int(dut.hit_idx.value), lo_rel, hi_rel))
            if prev["we"]:
                img.port_write(prev["wa"], word_bytes(int(dut.hit_idx.value), lo_rel, hi_rel)
                               if int(dut.hit.value) and not zw else [])
            if prev["we2"]:
                img.port_write(prev["wa2"], word_bytes(int(dut.hit2_idx.value), lo_rel, hi_rel)
                               if int(dut.hit2.value) else [])
            # nothing pending: every byte of the allocation is zero or its last data
            if not left:
                checked["image_bytes"] += img.check(at)
        await RisingEdge(dut.clk)
        # the edge: an arm or a clear, else the hits clean their words
        before = bool(words)
        if step["arm"]:
            checked["armed"] += 1
            checked["armed_in_flight"] += int(bool(words))
            m.arm(step["arm_a"], step["arm_n"])
            img.arm(step["arm_a"], step["arm_a"] + step["arm_n"])
        if step["clear"] or reset:
            m.dirty = set()
            img.forget()
            checked["clears" if step["clear"] else "resets"] += 1
        elif not step["arm"]:
            if hit:
                m.clean_word(a1)
            if hit2:
                m.clean_word(prev["wa2"])
            if before and not m.dirty:
                checked["drained"] += 1
        prev, chk = (idle, False) if reset else (step, not step["arm"])
    dut.rst.value = 0
    # every kind was seen often enough for the checks to mean something
    for k, at_least in (("zw", n // 10), ("hit", n // 8), ("hit2", n // 40), ("miss", n // 10), ("pa", n // 20),
                        ("armed", n // 20), ("armed_in_flight", n // 200), ("clears", n // 200),
                        ("drained", n // 40), ("resets", 3), ("image_bytes", n), ("same_word", n // 200),
                        ("two_hits", n // 200)):
        assert checked[k] >= at_least, f"only {checked[k]} {k} ({checked})"
    dut._log.info(f"checked: {checked}")


@cocotb.test()
async def test_range_at_once(dut):
    """The range zeroed at once (the core's S_ZERO): after z_set [a, a+n), each z_step
    zeroes z_n bytes at za, never past za's word nor the range's end, z_last on the step
    that reaches it; the steps cover the range exactly, one cycle per word it spans."""
    rzb = len(dut.count) - 1
    ob = 1 << (len(dut.lo_rel) - rzb - 1)
    rng = random.Random(seed_for("pb_zeroer_range") + ob + rzb)
    cocotb.start_soon(Clock(dut.clk, 10, unit="ns").start())
    for k in ("arm", "arm_a", "arm_n", "clear", "q_we", "q_wa", "hold", "q_we2", "q_wa2", "pa", "z_set", "z_set_a", "z_set_n",
              "z_step"):
        getattr(dut, k).value = 0
    dut.rst.value = 1
    await RisingEdge(dut.clk)
    dut.rst.value = 0
    n = 15000 if thorough() else 3000
    za = ze = 0
    rng_a = rng_e = 0              # the range as last set
    covered, steps = set(), 0
    checked = dict(steps=0, done=0, idle=0, overridden=0)
    for t in range(n):
        z_set = int((za >= ze and rng.random() < 0.5) or rng.random() < 0.03)
        a = rng.choice([rng.randrange(1 << 20), rng.randrange(1 << 33)])
        if rng.random() < 0.5:
            a &= ~7
        length = rng.choice([0, rng.randint(1, 8), rng.randint(1, 3 * ob), rng.randint(1, 40 * ob)])
        if AW < 40:
            a = rng.choice([a % (LIM - length + 1), LIM - length])
        z_step = int(rng.random() < 0.75)
        dut.z_set.value, dut.z_set_a.value, dut.z_set_n.value, dut.z_step.value = z_set, a, length, z_step
        await ReadOnly()
        at = f"cycle {t} (range [{rng_a:#x}, {rng_e:#x}), left [{za:#x}, {ze:#x}))"
        assert (int(dut.za.value), int(dut.ze.value)) == (za, ze), f"{at}: za, ze"
        assert int(dut.z_left.value) == int(za < ze), f"{at}: z_left"
        if za < ze:
            zn = int(dut.z_n.value)
            assert zn == min(ob - za % ob, ze - za), f"{at}: z_n {zn}"
            assert int(dut.z_last.value) == int(za + zn >= ze), f"{at}: z_last"
        await RisingEdge(dut.clk)
        if z_set:
            if za < ze:
                checked["overridden"] += 1
            za, ze = a, a + length
            rng_a, rng_e = za, ze
            covered, steps = set(), 0
        elif z_step and za < ze:
            zn = min(ob - za % ob, ze - za)
            assert (za + zn - 1) // ob == za // ob and not covered & set(range(za, za + zn)), f"{at}: a step"
            covered |= set(range(za, za + zn))
            za += zn
            steps += 1
            checked["steps"] += 1
            if za >= ze:
                assert covered == set(range(rng_a, rng_e)), f"{at}: the steps did not cover the range"
                assert steps == (rng_e - 1) // ob - rng_a // ob + 1, f"{at}: {steps} steps for the range"
                checked["done"] += 1
        elif z_step:
            checked["idle"] += 1
    for k, at_least in (("steps", n // 3), ("done", n // 30), ("idle", n // 50), ("overridden", n // 100)):
        assert checked[k] >= at_least, f"only {checked[k]} {k} ({checked})"
    dut._log.info(f"checked: {checked}")


def _build_and_test(width, rzb=4, aw=40):
    run_cocotb(TB_DIR, "hw_pb_zeroer", [RTL_DIR / "hw_pb_zeroer.v"], f"w{width}_rzb{rzb}_aw{aw}",
               {"OUT_WIDTH": width, "RZB": rzb, "AW": aw}, extra_env={"HW_TB_ZR_AW": str(aw)})


@pytest.mark.parametrize("width,rzb,aw", [(64, 4, 40), (128, 4, 40), (256, 4, 40), (64, 2, 40), (64, 4, 16), (256, 4, 16)])
def test_hw_pb_zeroer(width, rzb, aw):
    _build_and_test(width, rzb, aw)


def test_bad_parameters_rejected(tmp_path):
    expect_param_error(tmp_path, "hw_pb_zeroer", RTL_DIR / "hw_pb_zeroer.v", "OUT_WIDTH=32",
                       "OUT_WIDTH must be 64, 128 or 256")
    expect_param_error(tmp_path, "hw_pb_zeroer", RTL_DIR / "hw_pb_zeroer.v", "RZB=9", "RZB must be in 1..8")
    expect_param_error(tmp_path, "hw_pb_zeroer", RTL_DIR / "hw_pb_zeroer.v", "AW=8", "AW must be in 9..40")


if __name__ == "__main__":
    _build_and_test(64)

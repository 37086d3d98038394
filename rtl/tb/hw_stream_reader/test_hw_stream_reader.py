"""cocotb testbench for rtl/hw_stream_reader.v (cocotb 2.x).

The DUT's memory port is served by a Python BRAM model with exactly one cycle of read
latency; the consumer side is driven from a list of operations and every response is
checked against a byte-exact Python reference model (offset, data, past-end, the move
adv_en / adv_len, window, status outputs). Run with `python3 -m pytest rtl/tb/hw_stream_reader` (builds once per
configuration with Icarus Verilog). The configurations include the protobuf core's settings
FAST_FLUSH=1 (a far skip requests its word in the same cycle), BACK_SKIP=1 (a skip length
with bit 31 set goes back) and FAST_START=1 (a start requests word 0 in the same cycle); the
harness learns them from HW_SR_FAST_FLUSH / HW_SR_BACK_SKIP / HW_SR_FAST_START. With
SKIP_IN_BOUNDS=1 (the core's too: its skips are never past the end) the harness clips every
forward skip past the end to one to the end, so the tests run unchanged and their
past-end expectations say which ops the clipping made exact (HW_SR_SKIP_IN_BOUNDS).
"""

import os
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
MASK64 = (1 << 64) - 1
# the build's FAST_FLUSH / BACK_SKIP (set by _build_and_test for the simulator process)
FAST_FLUSH = os.environ.get("HW_SR_FAST_FLUSH") == "1"
BACK_SKIP = os.environ.get("HW_SR_BACK_SKIP") == "1"
FAST_START = os.environ.get("HW_SR_FAST_START") == "1"
SKIP_IN_BOUNDS = os.environ.get("HW_SR_SKIP_IN_BOUNDS") == "1"
# the largest forward skip length (with BACK_SKIP, bit 31 set means back)
MAX_FWD = 0x7FFFFFFF if BACK_SKIP else 0xFFFFFFFF

# --------------------------------------------------------------------------- reference model


class Stream:
    """Input memory contents: a deterministic pseudo-random byte function, so even a
    4 GiB input needs no storage. Bytes at or beyond `length` are junk that must never
    show up on the DUT's outputs."""

    def __init__(self, length, salt):
        self.length = length
        self.salt = salt

    def byte(self, p):
        x = ((p ^ self.salt) * 0x9E3779B97F4A7C15) & MASK64
        x ^= x >> 29
        x = (x * 0xBF58476D1CE4E5B9) & MASK64
        x ^= x >> 32
        return x & 0xFF

    def bytes(self, p, n):
        return bytes(self.byte(q) for q in range(p, p + n))

    def word(self, addr, wb):
        return int.from_bytes(self.bytes(addr * wb, wb), "little")


READ = "read"
SKIP = "skip"


class Model:
    """What the stream reader must answer, operation by operation."""

    def __init__(self, stream):
        self.s = stream
        self.pos = 0
        self.past_end = False

    def apply(self, op):
        """Returns (past_end, data) for op and advances the model."""
        kind, arg = op
        n = (1 << arg) if kind == READ else arg
        if kind == SKIP and BACK_SKIP and arg >> 31:
            n = arg - (1 << 32)  # back 2^32 - arg bytes: kept within the stream by the test
            assert self.pos + n >= 0, f"test error: back skip of {-n} at {self.pos}"
        if self.pos + n > self.s.length:
            self.past_end = True
            return True, None
        data = int.from_bytes(self.s.bytes(self.pos, n), "little") if kind == READ else 0
        self.pos += n
        return False, data


class Timing:
    """The reader's cycle behaviour, cycle by cycle: which word it requests (mem_rd_en,
    mem_addr), whether it takes the op (rd_ready, adv_en) and how many bytes the window
    shows (win_avail, win_eof), from the inputs of each cycle. This is the fetch rule the
    module documents (a word is requested whenever the buffer, the word in flight and one
    more word fit; a far skip or a back skip flushes; FAST_FLUSH / FAST_START request the
    new position's word in the same cycle), written from byte counts, so a restructured
    reader that requests a word a cycle later or earlier, or counts a landing word's bytes
    differently, fails here even when its data is right."""

    def __init__(self, wb, win):
        self.wb, self.win = wb, win
        self.buf = max(-(-win // wb), 3) * wb
        self.cnt = self.pos = self.rem = self.len = self.fpos = self.fdrop = 0
        self.land = None  # bytes of the word landing this cycle

    def step(self, start, in_len, valid, skip, size, skip_len):
        wb, M32 = self.wb, (1 << 32) - 1
        need = 1 << size
        back = BACK_SKIP and skip_len >> 31
        op_past = (not SKIP_IN_BOUNDS and not back and skip_len > self.rem) if skip else self.rem < need
        near = not back and skip_len <= self.cnt
        ready = not start and (skip or self.rem < need or need <= self.cnt)
        adv = valid and ready and not op_past
        alen = skip_len if skip else need
        flush = adv and skip and not near
        fill = self.cnt + (self.land or 0)
        issue = not start and fill + wb <= self.buf and self.fpos < self.len
        new_pos = (self.pos + alen) & M32
        fw = new_pos // wb * wb
        flush_issue = flush and FAST_FLUSH and fw < self.len
        if start:
            rd_en, addr = FAST_START and in_len > 0, 0
        elif flush and FAST_FLUSH:
            rd_en, addr = flush_issue, fw // wb
        else:  # (without FAST_FLUSH a flush cycle's request is made, and its word dropped)
            rd_en, addr = issue, self.fpos // wb
        out = {"rd_ready": int(ready), "adv_en": int(adv), "mem_rd_en": int(rd_en)}
        if not start:  # (in a start cycle the window still shows the stream before)
            out.update(win_avail=min(self.cnt, self.win), win_eof=int(self.cnt == self.rem))
        if rd_en:
            out["mem_addr"] = addr
        landing = self.land or 0
        self.land = None
        if start:
            self.cnt = self.pos = self.fpos = self.fdrop = 0
            self.rem = self.len = in_len
            if rd_en:
                self.land, self.fpos = min(wb, in_len), wb
        elif flush:
            self.cnt, self.pos, self.rem = 0, new_pos, (self.rem - alen) & M32
            self.fpos, self.fdrop = fw, new_pos - fw
            if flush_issue:
                self.land = min(wb, self.len - fw) - (new_pos - fw)
                self.fpos, self.fdrop = fw + wb, 0
        else:
            self.cnt += landing
            if adv:
                self.cnt -= alen
                self.pos, self.rem = new_pos, (self.rem - alen) & M32
            if issue:
                self.land = min(wb, self.len - self.fpos) - self.fdrop
                self.fpos, self.fdrop = self.fpos + wb, 0
        return out


# --------------------------------------------------------------------------- driver


class Harness:
    def __init__(self, dut, seed):
        self.dut = dut
        # hold_mem: between reads the memory's data output keeps the last word served (as a
        # block RAM and the Verilated device do) instead of junk
        self.hold_mem = False
        self.rng = random.Random(seed)
        self.wb = len(dut.mem_rd_data) // 8
        self.win = len(dut.win_data) // 8
        self.cycle = 0

    async def setup(self):
        dut = self.dut
        Clock(dut.clk, 10, unit="ns").start()
        dut.rst.value = 1
        dut.start.value = 0
        dut.in_len.value = 0
        dut.rd_valid.value = 0
        dut.rd_skip.value = 0
        dut.rd_size.value = 0
        dut.rd_skip_len.value = 0
        dut.mem_rd_data.value = 0
        for _ in range(3):
            await RisingEdge(dut.clk)
        dut.rst.value = 0

    async def run(self, stream, ops, stall=0.0, max_cycles=None, log=None):
        """Start a stream of stream.length bytes and perform ops. Returns the list of
        cycles (relative to the start pulse) at which each op was accepted."""
        dut, rng, wb = self.dut, self.rng, self.wb
        if SKIP_IN_BOUNDS:
            ops = in_bounds(stream, ops)
        model = Model(stream)
        timing = Timing(wb, self.win)
        accepted_at = []
        pending = None  # word address requested in the previous cycle
        idx = 0
        cyc = -1
        if max_cycles is None:
            max_cycles = 200 + 20 * len(ops)
        while idx < len(ops):
            await RisingEdge(dut.clk)
            cyc += 1
            assert cyc < max_cycles, f"stalled: op {idx} {ops[idx]} pos {model.pos}"
            # memory: data for last cycle's request, junk otherwise
            if pending is not None:
                dut.mem_rd_data.value = stream.word(pending, wb)
            elif not self.hold_mem:
                dut.mem_rd_data.value = rng.getrandbits(8 * wb)
            # control
            dut.start.value = 1 if cyc == 0 else 0
            dut.in_len.value = stream.length if cyc == 0 else rng.getrandbits(32)
            # consumer
            want = cyc > 0 and rng.random() >= stall
            op = ops[idx]
            if want:
                dut.rd_valid.value = 1
                if op[0] == READ:
                    dut.rd_skip.value = 0
                    dut.rd_size.value = op[1]
                    dut.rd_skip_len.value = rng.getrandbits(32)
                else:
                    dut.rd_skip.value = 1
                    dut.rd_size.value = rng.getrandbits(2)
                    dut.rd_skip_len.value = op[1]
            else:
                dut.rd_valid.value = 0
                dut.rd_skip.value = rng.getrandbits(1)
                dut.rd_size.value = rng.getrandbits(2)
                dut.rd_skip_len.value = rng.getrandbits(32)

            await ReadOnly()
            # the cycle behaviour: the same requests, moves and window fill as the timing model
            exp = timing.step(cyc == 0, int(dut.in_len.value), int(dut.rd_valid.value), int(dut.rd_skip.value),
                              int(dut.rd_size.value), int(dut.rd_skip_len.value))
            for sig, val in exp.items():
                got = int(getattr(dut, sig).value)
                assert got == val, f"cycle {cyc} (op {idx} {ops[idx]}, pos {model.pos}, len {stream.length}): {sig} {got} expected {val}"
            # memory request
            if int(dut.mem_rd_en.value):
                pending = int(dut.mem_addr.value)
                assert pending * wb < stream.length, f"read of word {pending} beyond input"
            else:
                pending = None
            if cyc == 0:
                # FAST_START: word 0 requested in the start cycle, unless the input is empty
                assert int(dut.mem_rd_en.value) == (FAST_START and stream.length > 0), "read in the start cycle"
                assert pending in (None, 0), f"start cycle reads word {pending}"
                assert int(dut.rd_ready.value) == 0, "ready during start"
                assert int(dut.adv_en.value) == 0, "adv_en during start"
                continue
            self.check_status(model)
            if want and int(dut.rd_ready.value):
                before = model.pos
                past, data = model.apply(op)
                got_past = int(dut.rd_past_end.value)
                assert int(dut.rd_offset.value) == before, "rd_offset"
                assert got_past == int(past), f"op {idx} {op}: past_end {got_past} expected {past} (pos {before}, len {stream.length})"
                # the move (next cycle's offset, checked there against the model)
                assert int(dut.adv_en.value) == int(not past), f"op {idx} {op}: adv_en"
                if not past:
                    assert int(dut.adv_len.value) == (model.pos - before) % (1 << 32), f"op {idx} {op}: adv_len"
                    got = int(dut.rd_data.value)
                    assert got == data, f"op {idx} {op} at {before}: data {got:#x} expected {data:#x}"
                if log is not None:
                    log.append((cyc, op, past))
                accepted_at.append(cyc)
                idx += 1
            else:
                assert int(dut.adv_en.value) == 0, "adv_en without an operation taken"
            if want and not int(dut.rd_ready.value):
                # not ready: the op must be a READ whose bytes are not buffered yet
                assert op[0] == READ, "SKIP must always be ready"
                n = 1 << op[1]
                assert model.pos + n <= stream.length, "past-end READ must be ready"
                assert int(dut.win_avail.value) < n or self.win < n, "READ not ready though buffered"
        await RisingEdge(dut.clk)
        dut.rd_valid.value = 0
        return accepted_at, model

    @staticmethod
    def _len(op):  # bytes an op moves the stream (negative: a back skip)
        if op[0] == READ:
            return 1 << op[1]
        return op[1] - (1 << 32) if BACK_SKIP and op[1] >> 31 else op[1]

    def check_status(self, model):
        dut = self.dut
        s = model.s
        assert int(dut.offset.value) == model.pos
        rem = s.length - model.pos
        assert int(dut.rem_bytes.value) == rem
        assert int(dut.at_end.value) == int(rem == 0)
        assert int(dut.past_end.value) == int(model.past_end), "sticky past_end"
        avail = int(dut.win_avail.value)
        assert avail <= min(rem, self.win)
        win = int(dut.win_data.value).to_bytes(self.win, "little")
        assert win[:avail] == s.bytes(model.pos, avail), f"window at {model.pos}"
        assert win[avail:] == bytes(self.win - avail), "window bytes beyond win_avail must be zero"
        if int(dut.win_eof.value):
            assert avail == min(rem, self.win)


def in_bounds(stream, ops):
    """SKIP_IN_BOUNDS: ops with every forward skip past the end (where the model would be
    when it is presented) replaced by a skip to the end."""
    m, out = Model(stream), []
    for op in ops:
        if op[0] == SKIP and not (BACK_SKIP and op[1] >> 31) and m.pos + op[1] > stream.length:
            op = (SKIP, stream.length - m.pos)
        m.apply(op)
        out.append(op)
    return out


def skip_past(past):
    """A forward skip's expected past-end flag: never with SKIP_IN_BOUNDS (clipped)."""
    return past and not SKIP_IN_BOUNDS


async def start(dut, seed):
    h = Harness(dut, seed)
    await h.setup()
    return h


# --------------------------------------------------------------------------- tests


@cocotb.test()
async def test_every_alignment_and_size(dut):
    """For every start alignment 0..2*word and every field size, reads that cross word
    boundaries, back to back, with no stalls and with stalls."""
    h = await start(dut, seed_for("align"))
    wb = h.wb
    for align in range(2 * wb + 1):
        for size in range(4):
            ops = [(SKIP, align)] + [(READ, size)] * (3 * wb // (1 << size) + 3)
            length = align + sum(1 << o[1] for o in ops[1:])
            for stall in (0.0, 0.5):
                await h.run(Stream(length, salt=align * 7 + size), ops, stall=stall)
    # mixed sizes in every rotation
    for align in range(wb):
        ops = [(SKIP, align)] + [(READ, s) for s in (0, 1, 2, 3, 3, 2, 1, 0, 3, 0, 3, 1, 3, 2)] * 3
        await h.run(Stream(align + 200, salt=align), ops)


@cocotb.test()
async def test_read_past_end(dut):
    """Exact-end and past-end behaviour: the stream never moves on a past-end op, the
    past_end flag is sticky until the next start, and exactly-fitting ops succeed."""
    h = await start(dut, seed_for("past"))
    wb = h.wb
    for length in list(range(0, 2 * wb + 3)) + [3 * wb - 1, 3 * wb, 3 * wb + 1]:
        for size in range(4):
            n = 1 << size
            ops = [(READ, size)] * (length // n) + [(READ, size)] * 2  # last two run past
            ops += [(READ, 0)] * (length % n)  # the tail still readable byte by byte
            ops += [(READ, 0), (SKIP, 1), (SKIP, 0)]  # at end: past, past, ok
            log = []
            _, model = await h.run(Stream(length, salt=length), ops, log=log)
            pasts = [p for (_, _, p) in log]
            exp = [False] * (length // n) + [True, True] + [False] * (length % n) + [True, skip_past(True), False]
            assert pasts == exp, f"length {length} size {n}: {pasts}"
            assert model.pos == length
            assert int(dut.at_end.value) == 1
            assert int(dut.past_end.value) == 1
    # skips: exactly to the end, one past the end, huge
    for length in (0, 1, wb, 5 * wb + 3, 1000):
        ops = [(SKIP, length + 1), (SKIP, MAX_FWD), (SKIP, length), (READ, 0), (SKIP, 0)]
        log = []
        _, model = await h.run(Stream(length, salt=3), ops, log=log)
        assert [p for (_, _, p) in log] == [skip_past(True), skip_past(True), False, True, False]
        assert model.pos == length
    # a fresh start clears past_end
    await h.run(Stream(4, salt=1), [(READ, 2)])
    assert int(dut.past_end.value) == 0


@cocotb.test()
async def test_skips(dut):
    """Near skips (inside the buffer), far skips (flush and refetch at an unaligned
    position), zero skips, and skips landing exactly on word boundaries."""
    h = await start(dut, seed_for("skips"))
    wb = h.wb
    rng = h.rng
    for trial in range(80):
        ops = []
        for _ in range(30):
            r = rng.random()
            if r < 0.5:
                ops.append((READ, rng.randrange(4)))
            elif r < 0.7:
                ops.append((SKIP, rng.randrange(0, 2 * wb)))
            elif r < 0.85:
                ops.append((SKIP, rng.randrange(2 * wb, 8 * wb)))
            else:
                ops.append((SKIP, rng.choice([wb, 2 * wb, wb - 1, wb + 1, 0])))
        length = sum(Harness._len(o) for o in ops) + rng.randrange(0, 3)
        await h.run(Stream(length, salt=trial), ops, stall=rng.choice([0.0, 0.3]))


@cocotb.test()
async def test_random(dut):
    """Seeded random operation mixes, lengths, stalls; runs past the end at random."""
    h = await start(dut, seed_for("random"))
    rng = h.rng
    for trial in range(150):
        length = rng.choice([rng.randrange(0, 16), rng.randrange(0, 300)])
        ops = []
        budget = length + rng.randrange(0, 12)
        used = 0
        while used < budget:
            r = rng.random()
            if r < 0.8:
                op = (READ, rng.randrange(4))
            elif r < 0.95:
                op = (SKIP, rng.randrange(0, 40))
            else:
                op = (SKIP, rng.randrange(MAX_FWD + 1))
            ops.append(op)
            used += Harness._len(op)
        await h.run(Stream(length, salt=trial), ops, stall=rng.choice([0.0, 0.1, 0.5, 0.9]))


@cocotb.test()
async def test_skip_every_offset(dut):
    """Skips of every length from 0 to past the buffer (3 words) and 2 words beyond it, from
    a fill level and alignment the reads before it leave (at random: none, up to a word, up
    to two words of one-byte reads; a word landing or not), in inputs ending a few bytes after the skip's target, at it, on a word
    boundary and inside a word: the in-buffer step, the flush and refetch of the word holding
    the target (the input's last word too, and the end on a word boundary, where nothing is
    requested), then reads to the end. Every cycle's requests and window fill are checked
    against the timing model, every window against the data; half the runs with the
    memory's data held between reads (as the Verilated device serves it)."""
    h = await start(dut, seed_for("offsets"))
    wb, rng = h.wb, h.rng
    buf = max(-(-h.win // wb), 3) * wb
    runs = 0
    for skip in range(0, buf + 2 * wb + 2):
        for lead in (rng.choice((0, rng.randrange(1, wb + 1), rng.randrange(wb + 1, 2 * wb + 1))),):
            for tail in (rng.choice((0, 1)), rng.choice((wb - 1, wb, rng.randrange(0, 3 * wb)))):
                # lead one-byte reads (no stalls: the fill level after them is deterministic)
                ops = [(READ, 0)] * lead + [(SKIP, skip)] + [(READ, 0)] * tail
                length = lead + skip + tail
                h.hold_mem = bool(runs & 1)
                await h.run(Stream(length, salt=runs), ops, stall=0.0 if runs % 3 else 0.4)
                runs += 1
    h.hold_mem = False
    dut._log.info("skip_every_offset: %d runs", runs)


@cocotb.test()
async def test_large_offsets(dut):
    """A 4 GiB - 1 byte input (2 GiB - 1 with BACK_SKIP, whose streams stay below 2 GiB):
    skip to near its end, read across the last words, run past the end; offsets and
    remaining counts stay exact in 32 bits."""
    h = await start(dut, seed_for("large"))
    wb = h.wb
    length = MAX_FWD
    for back in (40, 17, 9, 8 + wb):
        ops = [(SKIP, length - back)] + [(READ, 3)] * (back // 8) + [(READ, 0)] * (back % 8)
        ops += [(READ, 0), (SKIP, 1), (SKIP, 0)]
        log = []
        _, model = await h.run(Stream(length, salt=back), ops, log=log)
        assert model.pos == length and [p for (_, _, p) in log][-3:] == [True, skip_past(True), False]


@cocotb.test()
async def test_throughput(dut):
    """Back-to-back full-width reads with no stalls: cycles are deterministic, so the
    steady state is checked exactly (one read per cycle) and bytes/cycle printed."""
    h = await start(dut, seed_for("tput"))
    wb = h.wb
    size = 3 if wb >= 8 else 2  # 8-byte reads, or 4-byte reads on a 32-bit datapath
    n = 1 << size
    nreads = 512
    acc, _ = await h.run(Stream(n * nreads, salt=99), [(READ, size)] * nreads)
    first, last = acc[0], acc[-1]
    steady = n * (nreads - 1) / (last - first)
    overall = n * nreads / (last + 1)
    dut._log.info(
        "THROUGHPUT DATA_WIDTH=%d: %d-byte reads, first field in cycle %d after start, "
        "steady %.3f bytes/cycle, overall %.3f bytes/cycle (%d bytes in %d cycles)",
        8 * wb, n, first, steady, overall, n * nreads, last + 1)
    # deterministic in simulation: the first read is possible 3 cycles after start (2 with
    # FAST_START) and then one read every cycle (memory bandwidth == consumer bandwidth, or better)
    assert first == (2 if FAST_START else 3)
    assert last - first == nreads - 1, f"not one read per cycle: {last - first + 1} cycles"
    # a SKIP beyond the buffer: the new position is readable 3 cycles after the skip, 2
    # with FAST_FLUSH (plus one cycle per further word the field touches)
    lat = 2 if FAST_FLUSH else 3
    for skip in (3 * wb + 1, 1000, 4 * wb, 5 * wb - 1):
        acc, _ = await h.run(Stream(2000, salt=6), [(SKIP, skip), (READ, 0)])
        assert acc[1] - acc[0] == lat, f"far skip latency {acc[1] - acc[0]}"
        acc, _ = await h.run(Stream(2000, salt=6), [(SKIP, skip), (READ, 3)])
        words = -(-((skip % wb) + 8) // wb)  # words the field touches, one requested per cycle
        assert acc[1] - acc[0] == lat - 1 + words, f"far skip + 8-byte read latency {acc[1] - acc[0]}"
    if BACK_SKIP:
        # a back skip flushes like a far one, also when the target is still buffered
        for fwd, back in ((1000, 1000), (1000, 1), (5 * wb, 2 * wb)):
            acc, _ = await h.run(Stream(2000, salt=7), [(SKIP, fwd), (SKIP, (1 << 32) - back), (READ, 0)])
            assert acc[2] - acc[1] == lat, f"back skip latency {acc[2] - acc[1]}"
    # 1-byte reads must also go one per cycle
    acc, _ = await h.run(Stream(256, salt=5), [(READ, 0)] * 256)
    assert acc[-1] - acc[0] == 255


@cocotb.test(skip=not BACK_SKIP)
async def test_back_skips(dut):
    """BACK_SKIP=1: skips back (to the start, by one byte, by a word, to word boundaries,
    into the bytes still buffered) mixed with reads and forward skips, with stalls; every
    window and offset after them checked against the model."""
    h = await start(dut, seed_for("back"))
    wb, rng = h.wb, h.rng
    for trial in range(120):
        length = rng.choice([rng.randrange(1, 3 * wb), rng.randrange(3 * wb, 400)])
        ops, pos = [], 0
        for _ in range(25):
            r = rng.random()
            if r < 0.45 and pos < length:
                n = rng.randrange(4)
                if pos + (1 << n) <= length:
                    ops.append((READ, n))
                    pos += 1 << n
                    continue
            if r < 0.7 and pos > 0:
                back = rng.choice([pos, 1, min(pos, wb), pos % wb or pos, rng.randrange(1, pos + 1)])
                ops.append((SKIP, (1 << 32) - back))
                pos -= back
            else:
                n = rng.randrange(0, length - pos + 1)
                ops.append((SKIP, n))
                pos += n
        _, model = await h.run(Stream(length, salt=trial), ops, stall=rng.choice([0.0, 0.3]))
        assert model.pos == pos


# --------------------------------------------------------------------------- pytest entry


def _build_and_test(data_width, win_bytes=16, fast_back=False, in_bounds=False, testcase=None):
    word_shift = {32: 2, 64: 3, 128: 4}[data_width]
    params = {"DATA_WIDTH": data_width, "ADDR_WIDTH": 32 - word_shift, "WIN_BYTES": win_bytes,
              "FAST_FLUSH": int(fast_back), "BACK_SKIP": int(fast_back), "FAST_START": int(fast_back),
              "SKIP_IN_BOUNDS": int(in_bounds)}
    env = {"HW_SR_FAST_FLUSH": str(int(fast_back)), "HW_SR_BACK_SKIP": str(int(fast_back)),
           "HW_SR_FAST_START": str(int(fast_back)), "HW_SR_SKIP_IN_BOUNDS": str(int(in_bounds))}
    run_cocotb(TB_DIR, "hw_stream_reader", [RTL_DIR / "hw_stream_reader.v"],
               f"dw{data_width}_win{win_bytes}" + ("_fast_back" if fast_back else "") + ("_in_bounds" if in_bounds else ""),
               params, testcase=testcase, extra_env=env)


# (DATA_WIDTH, WIN_BYTES, FAST_FLUSH = BACK_SKIP = FAST_START, SKIP_IN_BOUNDS): (32, 12) is the
# MSR paper's 3-word buffer; (64|128, 16, on, on) are the protobuf core's settings
@pytest.mark.parametrize("data_width,win_bytes,fast_back,in_bounds",
                         [(32, 12, False, False), (32, 16, False, False), (64, 16, False, False),
                          (128, 16, False, False), (128, 32, False, False), (64, 16, True, False),
                          (64, 16, True, True), (128, 16, True, True)])
def test_hw_stream_reader(data_width, win_bytes, fast_back, in_bounds):
    _build_and_test(data_width, win_bytes, fast_back, in_bounds)


def test_bad_parameters_rejected(tmp_path):
    """DATA_WIDTH=48 must stop elaboration with $error."""
    expect_param_error(tmp_path, "hw_stream_reader", RTL_DIR / "hw_stream_reader.v", "DATA_WIDTH=48",
                       "DATA_WIDTH must be 32, 64 or 128")


if __name__ == "__main__":
    for w in (32, 64, 128):
        _build_and_test(w)

"""cocotb testbench for rtl/hw_pb_scan.v (cocotb 2.x): every output for every byte of every
word, against the model (tb/scanmodel.py: the CPU engine's reading of a tag and the value
after it, crates/cpu/src/protobuf/wire.rs), on valid nested streams, hostile bytes
(continuation runs, over-long tags and varints, 5- and 6-byte length prefixes, lengths past
2^32, field number 0, every wire type) and mutated streams, back to back (offsets start again
after each stream's last word), one to four streams interleaved, with random input gaps and
output stalls and runs of them. At each field of the valid streams the number, wire type and
end are also those the official protobuf library reads. Also: a word leaves every cycle when
nothing waits (rate), a reset with words in flight, two streams' last words ready to go on
in the same cycle, bad parameters."""

import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import FallingEdge, ReadOnly, RisingEdge
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # rtl/tb (tbutil) when run as a script
from tbutil import run_cocotb, seed_for
from scanmodel import hostile, mutate, scan_model
from google.protobuf.internal.encoder import _VarintBytes as varint   # the official encoder

RTL_DIR = Path(__file__).resolve().parents[2]
TB_DIR = Path(__file__).resolve().parent
W = 16
NB = 5


FIELDS = dict(tl=3, hl=4, wt=3, n=NB, big=1, bad=2, e=32, hx=2 * W, nx=2 * W, z=1)


def unpack(dut):
    """The output word as per-byte dicts."""
    vals = {k: int(getattr(dut, f"o_{k}").value) for k in FIELDS}
    return [{k: (vals[k] >> (b * p)) & ((1 << b) - 1) for k, b in FIELDS.items()} for p in range(W)]


# ---------------------------------------------------------------- streams
def gen_message(rng, depth, truth, base=0):
    """A valid message (minimal encodings) with nested sub-messages; appends
    (offset, number, wire type, end, depth) of every field, at every level, to `truth`."""
    out = bytearray()
    for _ in range(rng.randint(0, 12 if depth else 40)):
        num = rng.choice([rng.randint(1, 15), rng.randint(16, 2047), rng.randint(2048, (1 << 29) - 1), 1, 31, 32])
        wt = rng.choice([0, 0, 1, 2, 2, 5])
        pos = base + len(out)
        tag = varint(num << 3 | wt)
        if wt == 0:
            body = varint(rng.choice([0, 1, 127, 128, rng.getrandbits(64), rng.getrandbits(35), (1 << 64) - 1]))
        elif wt == 1:
            body = rng.randbytes(8)
        elif wt == 5:
            body = rng.randbytes(4)
        elif depth < 3 and rng.random() < 0.4:
            mark = len(truth)
            payload = gen_message(rng, depth + 1, truth, 0)
            hdr = tag + varint(len(payload))
            for k in range(mark, len(truth)):   # the sub-message's fields, moved to stream offsets
                o, n, t, e, d = truth[k]
                truth[k] = (o + pos + len(hdr), n, t, e + pos + len(hdr), d)
            body = varint(len(payload)) + payload
        else:
            n = rng.choice([0, 1, rng.randint(0, 40), rng.randint(100, 300), rng.randint(0, 3000)])
            body = varint(n) + rng.randbytes(n)
        out += tag + body
        truth.append((pos, num, wt, pos + len(tag) + len(body), depth))
    return bytes(out)


def to_words(data, rng):
    """The stream as W-byte words, the last one padded with random bytes (the scan reads
    them as the stream's; a walk stops at the frame's end)."""
    pad = (-len(data)) % W
    data = data + rng.randbytes(pad)
    return [data[i:i + W] for i in range(0, len(data), W)] or [rng.randbytes(W)]


def official_check(data, truth, base=0, depth=0):
    """The fields of `truth` (offset, number, wire type, end, depth) at `depth` within
    data (at stream offset base) are those the official library reads, and so on down into
    each sub-message the generator made (the encodings are minimal, so each field's end
    follows from its contents)."""
    from google.protobuf import empty_pb2, unknown_fields
    m = empty_pb2.Empty()
    m.MergeFromString(data)
    got, pos = [], base
    for f in unknown_fields.UnknownFieldSet(m):
        tl = len(varint(f.field_number << 3 | f.wire_type))
        body = {0: lambda: len(varint(f.data)), 1: lambda: 8, 5: lambda: 4,
                2: lambda: len(varint(len(f.data))) + len(f.data)}[f.wire_type]()
        got.append((pos, f.field_number, f.wire_type, pos + tl + body))
        if f.wire_type == 2 and any(d == depth + 1 and pos < o < pos + tl + body for o, _, _, _, d in truth):
            start = pos + tl + body - len(f.data)
            official_check(f.data, truth, start, depth + 1)
        pos += tl + body
    want = [t[:4] for t in truth if t[4] == depth and base <= t[0] < base + len(data)]
    assert got == sorted(want), f"the official library reads the fields at {base} as {got}, generated {sorted(want)}"


# ---------------------------------------------------------------- the test
async def reset(dut, cycles=2, o_ready=0, o_tid_next=0):
    """Holds reset for `cycles` rising edges, no input on offer, o_ready and o_tid_next as given."""
    dut.rst.value = 1
    dut.in_valid.value = 0
    dut.in_tid.value = 0
    dut.in_last.value = 0
    dut.o_ready.value = o_ready
    dut.o_tid_next.value = o_tid_next
    for _ in range(cycles):
        await RisingEdge(dut.clk)
    dut.rst.value = 0


async def run_streams(dut, lanes, rng, stall, clock=True, reset_cycles=2):
    """Feeds each lane's streams back to back (lane t as stream t of the scan; a random lane a
    cycle, random gaps) and collects the output words (a random lane read a cycle, random
    stalls, now and then a run of them to fill the queues): per lane, per stream, a list of
    (o_pos, per-byte dicts). `clock`: start the clock (the first call of a test)."""
    if clock:
        cocotb.start_soon(Clock(dut.clk, 10, unit="ns").start())
    await reset(dut, cycles=reset_cycles)
    feeds = [[(w, k == len(ws) - 1) for ws in streams for k, w in enumerate(ws)] for streams in lanes]
    fed = [0] * len(lanes)
    got = [[] for _ in lanes]
    cur = [[] for _ in lanes]
    t_in = None   # the lane whose word is on offer (held until taken)
    hold = 0      # cycles left of a run of output stalls
    total = sum(len(f) for f in feeds)
    for cycle in range(6 * total + 100):
        await FallingEdge(dut.clk)
        if t_in is None:
            left = [t for t in range(len(lanes)) if fed[t] < len(feeds[t])]
            t_in = rng.choice(left) if left and rng.random() < 0.8 else None
        if t_in is not None:
            word, last = feeds[t_in][fed[t_in]]
            dut.in_tid.value = t_in
            dut.in_data.value = int.from_bytes(word, "little")
            dut.in_last.value = int(last)
        dut.in_valid.value = int(t_in is not None)
        dut.o_tid_next.value = rng.randrange(len(lanes))   # (the stream shown next cycle)
        t_out = int(dut.o_tid.value)
        if stall and hold == 0 and rng.random() < 0.01:
            hold = rng.randint(10, 40)
        hold = max(0, hold - 1)
        dut.o_ready.value = ready = int(rng.random() >= stall and hold == 0)
        await ReadOnly()   # what the next rising edge takes
        if t_in is not None and int(dut.in_ready.value):
            fed[t_in] += 1
            t_in = None
        if ready and int(dut.o_valid.value):
            cur[t_out].append((int(dut.o_pos.value), unpack(dut)))
            if int(dut.o_last.value):
                got[t_out].append(cur[t_out])
                cur[t_out] = []
                if all(len(g) == len(streams) for g, streams in zip(got, lanes)):
                    return got
    raise AssertionError(f"only {[len(g) for g in got]} of {[len(l) for l in lanes]} streams came out "
                         f"({fed} of {[len(f) for f in feeds]} words taken)")


def check(got, words, name):
    want = scan_model(b"".join(words), W, len(words), NB)
    assert len(got) == len(want), f"{name}: {len(got)} words out, want {len(want)}"
    for i, ((pos, g), x) in enumerate(zip(got, want)):
        assert pos == i * W, f"{name}, word {i}: o_pos {pos}, want {i * W}"
        for p in range(W):
            for k in FIELDS:
                assert g[p][k] == x[p][k], (f"{name}, byte {i * W + p}: o_{k} {g[p][k]:#x}, want "
                                            f"{x[p][k]:#x} (bytes {b''.join(words)[i * W + p:i * W + p + 16].hex()})")


@cocotb.test()
async def streams(dut):
    """Valid, hostile and mutated streams, back to back: every output of every byte; the
    fields of the valid ones also as the official library reads them."""
    rng = random.Random(int(os.environ["SCAN_SEED"]))
    n = 30 if os.environ.get("HW_TB_QUICK") else 90
    cases = []    # (name, words, truth or None)
    for k in range(n):
        truth = []
        data = gen_message(rng, 0, truth)
        official_check(data, truth)
        kind = k % 3
        if kind == 0:
            cases.append((f"valid {k}", to_words(data, rng), truth))
        elif kind == 1:
            cases.append((f"hostile {k}", to_words(hostile(rng, rng.randint(1, 400)), rng), None))
        else:
            cases.append((f"mutated {k}", to_words(mutate(rng, data), rng), None))
    cases.append(("one byte", [bytes([0x08]) + bytes(W - 1)], None))
    cases.append(("all 0xff", [bytes([0xFF] * W)] * 3, None))
    # zero lengths in non-minimal prefixes of 5 bytes (valid) and 6 (not), 11 bytes of 0x80;
    # field numbers at 2^28 and 2^29 - 1; a length of 2^35 - 1
    fixed = (b"\x0a\x80\x80\x80\x80\x00" + b"\x0a\x80\x80\x80\x80\x80\x00" + b"\x08" + b"\x80" * 11 + b"\x00"
             + varint((1 << 28) << 3) + b"\x00" + varint((1 << 28 | 1) << 3 | 5) + bytes(4)
             + varint(((1 << 29) - 1) << 3) + b"\x01" + b"\x12\xff\xff\xff\xff\x7f")
    cases.append(("edges", to_words(fixed, rng), None))
    # a 5-byte tag at a word's last byte and a varint after it up to the window's last byte
    cases.append(("window end", [bytes(15) + b"\x88", b"\x80\x80\x80\x00" + b"\x80" * 10 + b"\x00\x00", bytes(16)], None))
    rng.shuffle(cases)   # (every lane gets every kind)
    lanes = int(os.environ.get("SCAN_STREAMS", "1"))
    split = [cases[t::lanes] for t in range(lanes)]     # lane t: every lanes-th case
    got = await run_streams(dut, [[w for _, w, _ in part] for part in split], rng,
                            stall=float(os.environ.get("SCAN_STALL", "0.3")))
    fields = 0
    for part, g_lane in zip(split, got):
        for (name, words, truth), g in zip(part, g_lane):
            check(g, words, name)
            for off, num, wt, end, _ in truth or []:
                x = g[off // W][1][off % W]
                assert (x["bad"], x["n"], x["big"], x["wt"], x["e"]) == (0, num & 31, int(num >= 32), wt, end), \
                    f"{name}: field at {off} (number {num}, type {wt}, end {end}) read as {x}"
                fields += 1
    assert fields >= 200 and sum(len(w) for _, w, _ in cases) >= 300, f"only {fields} fields checked"


@cocotb.test()
async def rate(dut):
    """Input always offered and output always taken: after the pipeline fills, a word comes
    out every cycle (each stream's queue covers the words in flight; with STREAMS streams fed
    in turn, the same over all of them)."""
    lanes = int(os.environ.get("SCAN_STREAMS", "1"))
    cocotb.start_soon(Clock(dut.clk, 10, unit="ns").start())
    await reset(dut, o_ready=1)
    n, taken, outs, cycle = 64 * lanes, 0, [], 0
    while len(outs) < n - lanes and cycle < 20 * n:   # (each stream's last word waits for its next)
        await FallingEdge(dut.clk)
        t_in = taken % lanes
        dut.in_tid.value = t_in
        dut.in_data.value = taken
        dut.in_valid.value = int(taken < n)
        # (the stream shown next cycle: the one after this cycle's word if it is taken)
        dut.o_tid_next.value = (len(outs) + int(dut.o_valid.value)) % lanes
        await ReadOnly()
        if taken < n and int(dut.in_ready.value):
            taken += 1
        if int(dut.o_valid.value):
            outs.append(cycle)
        cycle += 1
    assert len(outs) == n - lanes, f"{len(outs)} words out of {n} in"
    assert outs[-1] - outs[0] == len(outs) - 1, f"gaps in the output: {outs}"


@cocotb.test()
async def reset_midway(dut):
    """A reset while words are in the pipeline and the queue: afterwards a stream comes out
    alone and right (nothing of the one before, no word counted twice)."""
    rng = random.Random(int(os.environ["SCAN_SEED"]) + 2)
    cocotb.start_soon(Clock(dut.clk, 10, unit="ns").start())
    await reset(dut, cycles=1)
    for i in range(12):   # words in, none out: the pipeline and the queue hold some
        await FallingEdge(dut.clk)
        dut.in_valid.value = 1
        dut.in_data.value = rng.getrandbits(128)
    words = [bytes([0x08, 0x96, 0x01]) + bytes(13), bytes(16)]
    # (a reset of one cycle: what was in flight must not come out after it)
    got = await run_streams(dut, [[words]], rng, stall=0.3, clock=False, reset_cycles=1)
    check(got[0][0], words, "after reset")


@cocotb.test(skip=os.environ.get("SCAN_STREAMS", "1") == "1")
async def flushes_together(dut):
    """Two streams' last words ready to go on in the same cycle (one's last word arrives as
    the other's queue gets room back): one goes on, then the other, each stream's words
    right. Stream 1 fills its queue and waits with its last word; stream 0 comes; two words
    of stream 1 are taken at each of several cycles in turn (a run each), so in one run both
    wait together."""
    rng = random.Random(int(os.environ["SCAN_SEED"]) + 3)
    cocotb.start_soon(Clock(dut.clk, 10, unit="ns").start())
    together = 0
    for pop_at in range(12):
        s1 = [rng.randbytes(W) for _ in range(9)]
        s0 = [rng.randbytes(W) for _ in range(3)]
        await FallingEdge(dut.clk)   # (out of the read-only phase the last run ended in)
        await reset(dut, o_tid_next=1)
        feed = [(1, w, k == 8) for k, w in enumerate(s1)] + [None] * 4 + [(0, w, k == 2) for k, w in enumerate(s0)]
        got = {0: [], 1: []}
        ends = set()
        cycle, start0 = 0, 9 + 4 + 2
        while len(ends) < 2 and cycle < 400:
            await FallingEdge(dut.clk)
            item = feed[0] if feed else None
            dut.in_valid.value = int(item is not None)
            if item:
                dut.in_tid.value, word, last = item
                dut.in_data.value = int.from_bytes(word, "little")
                dut.in_last.value = int(last)
            draining = cycle > start0 + 20
            # two words of stream 1 taken (its count reached QD: one uncounted entry)
            dut.o_ready.value = int(draining or start0 + pop_at - 6 <= cycle <= start0 + pop_at - 5)
            if draining:
                dut.o_tid_next.value = rng.randrange(2)
            await ReadOnly()
            if bin(int(dut.fcand.value)).count("1") >= 2:
                together += 1
            if feed and (item is None or int(dut.in_ready.value)):
                feed.pop(0)
            if int(dut.o_valid.value) and int(dut.o_ready.value):
                t = int(dut.o_tid.value)
                got[t].append((int(dut.o_pos.value), unpack(dut)))
                if int(dut.o_last.value):
                    ends.add(t)
            cycle += 1
        assert ends == {0, 1}, f"pop at {pop_at}: streams {ends} ended, {len(feed)} items not taken"
        check(got[1], s1, f"stream 1 (pop at {pop_at})")
        check(got[0], s0, f"stream 0 (pop at {pop_at})")
    assert together, "no run had two last words waiting in the same cycle"


@pytest.mark.parametrize("streams,stall", [(1, "0.3"), (1, "0"), (3, "0.3"), (2, "0"), (2, "0.3"), (4, "0.3")])
def test_hw_pb_scan(streams, stall):
    env = {"SCAN_SEED": str(seed_for(f"hw_pb_scan_{streams}_{stall}")), "SCAN_STALL": stall,
           "SCAN_STREAMS": str(streams)}
    run_cocotb(TB_DIR, "hw_pb_scan", [RTL_DIR / "hw_pb_scan.v", RTL_DIR / "hw_varint_decoder.v"],
               f"s{streams}_stall{stall}", parameters={"W": W, "NB": NB, "STREAMS": streams}, extra_env=env)


@pytest.mark.parametrize("param,message", [("W=8", "W must be 16"), ("STREAMS=5", "STREAMS must be in 1..4"),
                                           ("NB=30", "NB must be in 1..29")])
def test_bad_parameters(tmp_path, param, message):
    out = tmp_path / "bad.vvp"
    subprocess.run(["iverilog", "-g2012", f"-Phw_pb_scan.{param}", "-o", str(out), str(RTL_DIR / "hw_pb_scan.v"),
                    str(RTL_DIR / "hw_varint_decoder.v")], check=True, capture_output=True)
    r = subprocess.run(["vvp", "-n", str(out)], capture_output=True, text=True)
    assert message in r.stdout + r.stderr

"""cocotb testbench for the field-loop timing experiments rtl/experiments/hw_x_shift_loop.v
and rtl/experiments/hw_x_chase.v (cocotb 2.x): the circuits whose clock docs/hardware.md
"What the field loop can reach" quotes must be walks that work. Random protobuf streams
(nested messages by the experiment's kind table down to a full frame stack, wire types 0,
1, 2 and 5, tags of 1-5 bytes, long fields that need a far skip), fed with random input
gaps; the records (position, number's low bits, message type, entered or skipped) must be
exactly the fields of the stream in order. For
hw_x_chase the per-byte decodes a decoder ahead of the loop would deliver are computed
here. Each stream's expected fields (numbers, types, entered or not; not the offsets) are
first read back with the official protobuf library (as the unknown fields of an empty
message at every level)."""

import os
import random
import sys
from pathlib import Path

import pytest

import cocotb
from cocotb.triggers import FallingEdge, ReadOnly, RisingEdge
from cocotb.clock import Clock
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # rtl/tb (tbutil) when run as a script
from tbutil import run_cocotb, seed_for
from scanmodel import scan_model
from google.protobuf.internal.encoder import _VarintBytes as varint   # the official encoder

RTL_DIR = Path(__file__).resolve().parents[2]
TB_DIR = Path(__file__).resolve().parent


def kind(t, n):
    """hw_x_chase's kind table: sub-message type + 1 of field number n (low 5 bits) in type t."""
    return ((t * 3 + n) % 5 + 1) if (t - n) % 4 == 1 else 0


def gen_message(rng, t, depth, max_depth, lookup, nfields, wide=True, deep=False):
    """(bytes, records): records (offset, number & 31, type, entered) in stream order.
    Wire types 0, 1, 2 (bytes or, by the kind table, a sub-message) and 5; field numbers up
    to 2^29 - 1 (tags of 1-5 bytes) and a few lengths of 3-byte prefixes when `wide` (W=16:
    every header ends within the next word), else tags of 1-2 bytes. `deep`: the first field
    opens a chain of sub-messages down to max_depth (the full frame stack)."""
    out, recs = bytearray(), []
    for i in range(nfields):
        num = rng.choice([rng.randint(1, 31), rng.randint(1, 31), rng.randint(32, 2000),
                          rng.randint(2001, (1 << 29) - 1) if wide else rng.randint(1, 31)])
        wt = rng.choice([0, 0, 1, 5, 2, 2, 2])
        chain = deep and i == 0 and lookup and depth < max_depth
        if chain or (lookup and rng.random() < 0.25):  # a sub-message more often: deep nesting
            num, wt = rng.choice([n for n in range(1, 32) if kind(t, n)]), 2
        k = kind(t, num & 31) if lookup else 0
        if wt == 2 and k and depth >= max_depth:
            wt = 0  # a sub-message here would nest deeper than the loop's frames
        pos = len(out)
        if wt == 2 and k:
            # (down to the last frame and the full stack: at least one field a level)
            body, sub = gen_message(rng, k - 1, depth + 1, max_depth, lookup,
                                    rng.randint(1 if chain else 0, max(1, 4 - depth)), wide, chain)
            hdr = varint(num << 3 | 2) + varint(len(body))
            recs.append((pos, num & 31, t, True))
            recs += [(pos + len(hdr) + p, n, ty, e) for p, n, ty, e in sub]
            out += hdr + body
            continue
        recs.append((pos, num & 31, t, False))
        out += varint(num << 3 | wt)
        if wt == 0:
            out += varint(rng.choice([0, 1, 300, rng.getrandbits(64), rng.getrandbits(20)]))
        elif wt == 1:
            out += rng.randbytes(8)
        elif wt == 5:
            out += rng.randbytes(4)
        else:
            n = rng.choice([0, 3, rng.randint(0, 70), rng.randint(20, 200)])
            if rng.random() < 0.01:
                n = rng.randint(1 << 14, 20000)  # a 3-byte length prefix, a long far skip
            out += varint(n) + rng.randbytes(n)
    return bytes(out), recs


def chase_words(data, w, nwords):
    """The per-byte decodes of each word hw_x_chase takes (its in_* ports, packed): what
    hw_pb_scan delivers (tb/scanmodel.py; hw_x_front has the two in series)."""
    words = []
    for row in scan_model(data, w, nwords):
        word = dict(in_nx=0, in_hx=0, in_e=0, in_z=0, in_n=0, in_w=0)
        for p, d in enumerate(row):
            for port, key, bits in (("in_nx", "nx", 2 * w), ("in_hx", "hx", 2 * w), ("in_e", "e", 32),
                                    ("in_z", "z", 1), ("in_n", "n", 5)):
                word[port] |= d[key] << (bits * p)
            word["in_w"] |= int(d["wt"] == 2) << p
        words.append(word)
    return words


async def run_walk(dut, streams, rng, expect_stuck=False):
    """Feeds each stream's words (random gaps; with several streams, a word of the stream
    the input takes this cycle, `in_tid`) and returns each stream's records at positions below
    its length (the walk runs on into the zero words after it)."""
    cocotb.start_soon(Clock(dut.clk, 10, unit="ns").start())
    dut.rst.value = 1
    dut.in_valid.value = 0
    await RisingEdge(dut.clk)
    await RisingEdge(dut.clk)
    dut.rst.value = 0
    threaded = len(streams) > 1
    driven_tid = hasattr(dut, "in_last")   # hw_x_front: the driver says whose word it offers
    offer = None
    recs = [[] for _ in streams]
    done = [False] * len(streams)
    taken = [0] * len(streams)
    limit = 40 * sum(len(w) for w, _ in streams) + 200
    for cycle in range(limit):
        await FallingEdge(dut.clk)
        if int(dut.o_valid.value):
            t = int(dut.o_tid.value) if threaded else 0
            pos = int(dut.o_pos.value)
            if pos >= streams[t][1]:
                done[t] = True
            elif not done[t]:
                rec = [pos, int(dut.o_num.value)]
                if hasattr(dut, "o_type"):
                    rec += [int(dut.o_type.value), bool(int(dut.o_sub.value))]
                recs[t].append(tuple(rec))
        if expect_stuck and int(dut.o_stuck.value):
            return recs
        if all(done):
            return recs
        # a word on offer is taken at the next rising edge when in_ready: of the stream the
        # walk names (in_tid, hw_x_chase) or, hw_x_front, of one the driver picks (held until taken)
        if driven_tid:
            if offer is None:
                left = [t for t in range(len(streams)) if taken[t] < len(streams[t][0])]
                offer = rng.choice(left) if left and rng.random() < 0.75 else None
            t = offer
        else:
            t = int(dut.in_tid.value) if threaded else 0
            if taken[t] >= len(streams[t][0]) or rng.random() >= 0.75:
                t = None
        if t is None:
            dut.in_valid.value = 0
            continue
        for k, v in streams[t][0][taken[t]].items():
            getattr(dut, k).value = v
        if driven_tid:
            dut.in_tid.value = t
        dut.in_valid.value = 1
        await ReadOnly()   # (hw_x_front's in_ready depends on in_tid)
        if int(dut.in_ready.value):
            taken[t] += 1
            offer = None
    raise AssertionError(f"the walk did not reach the end in {limit} cycles: "
                         f"{[len(r) for r in recs]} records, {taken} words taken")


def official_fields(data):
    """The official library's reading of one level of a stream: the unknown fields of an
    empty message."""
    from google.protobuf import empty_pb2, unknown_fields
    m = empty_pb2.Empty()
    m.MergeFromString(data)
    return list(unknown_fields.UnknownFieldSet(m))


def official_walk(data, t, lookup):
    """The official library's reading of a stream: (number & 31, type, entered) of every
    field, in stream order, entering the length-delimited fields the kind table names."""
    out = []
    for f in official_fields(data):
        k = kind(t, f.field_number & 31) if lookup and f.wire_type == 2 else 0
        out.append((f.field_number & 31, t, bool(k)))
        if k:
            out += official_walk(f.data, k - 1, lookup)
    return out


def nesting(data, t, lookup):
    """How deep the kind table nests the stream's sub-messages (official library's reading)."""
    return max([0] + [1 + nesting(f.data, kind(t, f.field_number & 31) - 1, lookup)
                      for f in official_fields(data)
                      if lookup and f.wire_type == 2 and kind(t, f.field_number & 31)])


def test_generator_against_official_library():
    """The generated streams, read by the official library, have the fields the generator
    expects the walk to report (numbers, types, entered), so the expectation is not only the
    generator's own."""
    rng = random.Random(seed_for("loop_limits_gen"))
    for i in range(60):
        lookup = i % 3 != 0
        data, recs = gen_message(rng, 0, 0, 4, lookup, rng.randint(1, 30))
        assert official_walk(data, 0, lookup) == [(n, t, e) for _, n, t, e in recs]


def stream_words(dut, data, w, nwords):
    """The stream as the DUT takes it: raw words (in_last on the last when it has the port),
    or for hw_x_chase the per-byte decodes of each word."""
    if not hasattr(dut, "in_data"):
        return chase_words(data, w, nwords)
    padded = data + bytes(nwords * w - len(data))
    words = [dict(in_data=int.from_bytes(padded[i * w:(i + 1) * w], "little")) for i in range(nwords)]
    if hasattr(dut, "in_last"):
        for i, word in enumerate(words):
            word["in_last"] = int(i == nwords - 1)
    return words


@cocotb.test()
async def walk(dut):
    """Random streams (THREADS at once, interleaved): the records are the stream's fields, in order."""
    rng = random.Random(int(os.environ["LOOP_SEED"]))
    w = len(dut.in_data) // 8 if hasattr(dut, "in_data") else len(dut.in_z)
    full = hasattr(dut, "o_type")   # records with the message type and entered or not
    lookup = full and os.environ.get("LOOP_LOOKUP") == "1"
    depth = int(os.environ.get("LOOP_DEPTH", "4"))
    nfields = 400 if os.environ.get("HW_TB_QUICK") else 1200
    streams, wants, datas = [], [], []
    for _ in range(int(os.environ.get("LOOP_THREADS", "1"))):
        # (without the lookup every field is at the top level: none is entered)
        data, recs = gen_message(rng, 0, 0, depth, lookup, nfields, wide=w == 16, deep=True)
        # the fields, types and entered sub-messages as the official library reads them
        assert official_walk(data, 0, lookup) == [(n, t, e) for _, n, t, e in recs]
        datas.append(data)
        nwords = (len(data) + w - 1) // w + 4  # zero words after the stream: the walk runs into them
        wants.append(recs if full else [(p, n) for p, n, _, _ in recs])
        streams.append((stream_words(dut, data, w, nwords), len(data)))
    gots = await run_walk(dut, streams, rng)
    for t, (got, want) in enumerate(zip(gots, wants)):
        assert len(got) >= 100, f"stream {t}: only {len(got)} records"
        for k, (g, x) in enumerate(zip(got, want)):
            assert g == x, f"stream {t}, record {k}: got {g}, want {x}"
        assert len(got) == len(want), f"stream {t}: {len(got)} records, want {len(want)}"
        if lookup:
            assert sum(1 for r in want if r[3]) >= 20 and max(r[2] for r in want) >= 2, "too few sub-messages"
            data_t = datas[t]
            assert nesting(data_t, 0, True) == depth, f"stream {t}: the frame stack never filled"


@cocotb.test(skip=os.environ.get("LOOP_LOOKUP") != "1")
async def too_deep(dut):
    """hw_x_chase with the lookup: a nesting deeper than its frames stops it, flagged."""
    w = len(dut.in_data) // 8 if hasattr(dut, "in_data") else len(dut.in_z)
    depth = int(os.environ.get("LOOP_DEPTH", "4"))
    # a chain of sub-messages: type t's field number n with kind(t, n) naming the next type
    body, t, chain = b"\x08\x01", 0, []
    for _ in range(depth + 1):
        n = next(n for n in range(1, 32) if kind(t, n))
        chain.append((t, n))
        t = kind(t, n) - 1
    for t, n in reversed(chain):
        body = varint(n << 3 | 2) + varint(len(body)) + body
    nwords = (len(body) + w - 1) // w + 4
    streams = [(stream_words(dut, body, w, nwords), len(body))]
    for _ in range(int(os.environ.get("LOOP_THREADS", "1")) - 1):  # good ones: not to be stopped
        streams.append((stream_words(dut, b"\x08\x01" * 40, w, 80 // w + 4), 80))
    recs = await run_walk(dut, streams, random.Random(1), expect_stuck=True)
    for _ in range(200):
        await FallingEdge(dut.clk)
    assert int(dut.o_stuck.value) == 1, f"o_stuck {dut.o_stuck.value}: want stream 0 only"
    assert len(recs[0]) == depth and all(r[3] for r in recs[0]), recs


CONFIGS = {
    "shift16": ("hw_x_shift_loop", {"W": 16}, {}),
    "chase16": ("hw_x_chase", {"W": 16, "LOOKUP": 1, "DEPTH": 4}, {"LOOP_LOOKUP": "1", "LOOP_DEPTH": "4"}),
    "chase16_nolookup": ("hw_x_chase", {"W": 16, "LOOKUP": 0}, {"LOOP_LOOKUP": "0"}),
    "chase8_depth8": ("hw_x_chase", {"W": 8, "LOOKUP": 1, "DEPTH": 8}, {"LOOP_LOOKUP": "1", "LOOP_DEPTH": "8"}),
    "chase16_2threads": ("hw_x_chase", {"W": 16, "LOOKUP": 1, "DEPTH": 4, "THREADS": 2},
                         {"LOOP_LOOKUP": "1", "LOOP_DEPTH": "4", "LOOP_THREADS": "2"}),
    "chase8_2threads_nolookup": ("hw_x_chase", {"W": 8, "LOOKUP": 0, "THREADS": 2},
                                 {"LOOP_LOOKUP": "0", "LOOP_THREADS": "2"}),
    "chase16_3threads": ("hw_x_chase", {"W": 16, "LOOKUP": 1, "DEPTH": 4, "THREADS": 3},
                         {"LOOP_LOOKUP": "1", "LOOP_DEPTH": "4", "LOOP_THREADS": "3"}),
    "front16": ("hw_x_front", {"DEPTH": 4}, {"LOOP_LOOKUP": "1", "LOOP_DEPTH": "4"}),
    "front16_3threads": ("hw_x_front", {"DEPTH": 4, "THREADS": 3},
                         {"LOOP_LOOKUP": "1", "LOOP_DEPTH": "4", "LOOP_THREADS": "3"}),
}
# the experiments' files beside the top's own
FILES = {"hw_x_front": [RTL_DIR / "experiments" / "hw_x_chase.v", RTL_DIR / "hw_pb_scan.v",
                        RTL_DIR / "hw_varint_decoder.v"]}


@pytest.mark.parametrize("config", sorted(CONFIGS))
def test_loop_limits(config):
    top, params, env = CONFIGS[config]
    env = dict(env, LOOP_SEED=str(seed_for(f"loop_limits_{config}")))
    run_cocotb(TB_DIR, top, [RTL_DIR / "experiments" / f"{top}.v", *FILES.get(top, [])], config,
               parameters=params, extra_env=env)

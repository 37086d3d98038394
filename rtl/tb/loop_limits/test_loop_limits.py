"""cocotb testbench for the field-loop timing experiments rtl/experiments/hw_x_shift_loop.v,
hw_x_chase.v and hw_x_front.v (cocotb 2.x): the circuits whose clock docs/hardware.md
"What the field loop can reach" and "The decode-ahead stage" quote must be walks that work.
Random protobuf streams (nested messages by the experiment's kind table down to a full frame
stack, wire types 0, 1, 2 and 5, tags of 1-5 bytes, long fields that need a far skip), fed
with random input gaps; the records (position, number's low bits, message type, entered or
skipped) must be exactly the fields of the stream in order. hw_x_chase takes the per-byte
decodes a decoder ahead of the loop would deliver (tb/scanmodel.py: hw_pb_scan's model);
hw_x_shift_loop and hw_x_front (hw_pb_scan and the chase) take the bytes. Each stream's
expected fields (numbers, types, entered or not; not the offsets) are first read back with
the official protobuf library (as the unknown fields of an empty message at every level).
hw_x_front's check of each field is compared with the CPU engine's verdict (heapwire
decode, the kind table as a schema) on valid, mutated, hostile and edge streams."""

import os
import random
import re
import subprocess
import sys
from pathlib import Path

import pytest

import cocotb
from cocotb.triggers import FallingEdge, ReadOnly, RisingEdge
from cocotb.clock import Clock
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # rtl/tb (tbutil) when run as a script
from tbutil import heapwire_bin, run_cocotb, seed_for
from scanmodel import hostile, mutate, scan_model
from google.protobuf.internal.encoder import _VarintBytes as varint   # the official encoder

RTL_DIR = Path(__file__).resolve().parents[2]
TB_DIR = Path(__file__).resolve().parent


def kind(t, n):
    """hw_x_chase's kind table: sub-message type + 1 of field number n (low 5 bits) in type t."""
    return ((t * 3 + n) % 5 + 1) if (t - n) % 4 == 1 and n != 0 else 0


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
        if lookup and wt == 2 and num >= 32 and kind(t, num & 31):
            num -= 1   # (then (t - num) % 4 == 2: no kind. hw_x_chase reads the low bits of a
            # number, hw_x_front none of one >= 32: a field both skip)
        k = kind(t, num & 31) if lookup else 0
        if wt == 2 and k and depth >= max_depth:
            wt = 0  # a sub-message here would nest deeper than the loop's frames
        pos = len(out)
        if wt == 2 and k:
            # (down to the last frame and the full stack: at least one field a level)
            body, sub = gen_message(rng, k - 1, depth + 1, max_depth, lookup,
                                    rng.randint(1 if chain else 0, max(1, 4 - depth)), wide, chain)
            hdr = varint(num << 3 | 2) + varint(len(body))
            recs.append((pos, num, t, True))
            recs += [(pos + len(hdr) + p, n, ty, e) for p, n, ty, e in sub]
            out += hdr + body
            continue
        recs.append((pos, num, t, False))
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


async def run_walk(dut, streams, rng, expect_stuck=False, errs=None, clock=True):
    """Feeds each stream's words (random gaps; with several streams, a word of the stream
    the input takes this cycle, `in_tid`) and returns each stream's records at positions below
    its length (the walk runs on into the zero words after it). `errs` (hw_x_front): filled
    per stream with its first (o_err, o_eoff) that is not 0, or "stuck" (nesting past the
    frames); a stream is done there. `clock`: start the clock (the first call of a test)."""
    if clock:
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
                if errs is not None and int(dut.o_err.value):
                    errs[t] = (int(dut.o_err.value), int(dut.o_eoff.value))
                    done[t] = True
        if expect_stuck and int(dut.o_stuck.value):
            return recs
        if errs is not None:
            for t in range(len(streams)):
                if (int(dut.o_stuck.value) >> t) & 1 and not done[t]:
                    errs[t], done[t] = "stuck", True
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
        assert official_walk(data, 0, lookup) == [(n & 31, t, e) for _, n, t, e in recs]


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
            word["in_len"] = len(data)
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
        assert official_walk(data, 0, lookup) == [(n & 31, t, e) for _, n, t, e in recs]
        datas.append(data)
        nwords = (len(data) + w - 1) // w + 4  # zero words after the stream: the walk runs into them
        # the record's number: its low bits (hw_x_chase), 0 for one of 32 or more (hw_x_front:
        # no field of the kind table)
        front = hasattr(dut, "in_len")
        recs = [(p, (0 if front and n >= 32 else n & 31), t, e) for p, n, t, e in recs]
        wants.append(recs if full else [(p, n) for p, n, _, _ in recs])
        streams.append((stream_words(dut, data, w, nwords), len(data)))
    errs = [None] * len(streams) if hasattr(dut, "o_err") else None
    gots = await run_walk(dut, streams, rng, errs=errs)
    assert errs is None or errs == [None] * len(streams), f"valid streams flagged: {errs}"
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


KIND_NAMES = {1: "truncated", 2: "varint_too_long", 3: "field_number_zero", 4: "invalid_wire_type",
              5: "length_past_end", 14: "unsupported"}


def kinds_proto(path):
    """The kind table as a schema the CPU engine reads: message Tt has, for each number n
    below 32 that kind(t, n) names, a field of the message type it names."""
    lines = ['syntax = "proto3";', "package k;"]
    for t in range(5):
        fields = " ".join(f"T{kind(t, n) - 1} f{n} = {n};" for n in range(1, 32) if kind(t, n))
        lines.append(f"message T{t} {{ {fields} }}")
    path.write_text("\n".join(lines) + "\n")


def cpu_verdict(proto, data, tmp):
    """The CPU engine's verdict on a stream as k.T0: None (accepted) or (kind name, offset)."""
    tmp.write_bytes(data)
    r = subprocess.run([heapwire_bin(), "decode", "--schema", str(proto), "--type", "k.T0", str(tmp)],
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    if r.returncode == 0:
        return None
    err = r.stderr.decode(errors="replace")
    m = re.search(r"rejected: (\w+) at byte (\d+)", err)
    assert m, f"heapwire decode: {err}"
    return m.group(1), int(m.group(2))


@cocotb.test(skip=not os.environ.get("LOOP_ERRORS"))
async def errors(dut):
    """hw_x_front: valid, mutated and hostile streams; the first field the check flags is
    where the CPU engine (heapwire decode, the kind table as a schema) rejects the stream,
    with the same kind and offset; none flagged, the CPU engine accepts it."""
    rng = random.Random(int(os.environ["LOOP_SEED"]) + 1)
    threads = int(os.environ.get("LOOP_THREADS", "1"))
    depth = int(os.environ.get("LOOP_DEPTH", "4"))
    build = TB_DIR / "sim_build" / f"errors{threads}"
    build.mkdir(parents=True, exist_ok=True)
    proto = build / "kinds.proto"
    kinds_proto(proto)
    n = 60 if os.environ.get("HW_TB_QUICK") else 180
    # edges: varints and length prefixes over-long or cut by the stream's or a frame's end,
    # tags cut or over 32 bits, number 0, wire type 7, a group
    sub = next(k for k in range(1, 32) if kind(0, k))
    datas = [b"\x08" + b"\xff" * 5, b"\x08" + b"\xff" * 9, b"\x08" + b"\xff" * 10 + b"\x01",
             b"\x0a" + b"\x80" * 5, b"\x0a" + b"\x80" * 5 + b"\x00", b"\x0a" + b"\x80" * 4 + b"\x00",
             b"\x80", b"\xff\xff\xff\xff", b"\xff\xff\xff\xff\x7f\x00", b"\x00\x01", b"\x0f", b"\x0b\x0c",
             varint(sub << 3 | 2) + b"\x03" + b"\x08\xff\xff" + b"\x08\x01",
             varint(sub << 3 | 2) + b"\x0c" + b"\x08" + b"\xff" * 10 + b"\x01",
             varint(sub << 3 | 2) + b"\x02" + b"\x12\x05" + b"\x08\x01\x08\x01"]
    n += len(datas)
    for i in range(n - len(datas)):
        data, _ = gen_message(rng, 0, 0, depth, True, rng.randint(1, 40), wide=True)
        if i % 3 == 1:
            data = mutate(rng, data)
        elif i % 3 == 2:
            data = hostile(rng, rng.randint(1, 120))
        datas.append(data)
    tally = {"same": 0, "accepted": 0, "unsupported": 0, "stuck": 0}
    for b in range(0, n, threads):
        batch = datas[b:b + threads]
        streams = [(stream_words(dut, d, 16, (len(d) + 15) // 16 + 4), len(d)) for d in batch]
        errs = [None] * len(batch)
        await run_walk(dut, streams, rng, errs=errs, clock=b == 0)
        for k, (data, err) in enumerate(zip(batch, errs)):
            if err == "stuck" or (err and err[0] == 14):   # nesting past the frames, a group: not handled
                tally["stuck" if err == "stuck" else "unsupported"] += 1
                continue
            want = cpu_verdict(proto, data, build / f"s{k}.bin")
            got = err and (KIND_NAMES[err[0]], err[1])
            assert got == want, f"stream {b + k} ({data.hex()}): the check says {got}, the CPU engine {want}"
            tally["same" if want else "accepted"] += 1
    dut._log.info(f"verdicts: {tally}")
    assert tally["same"] >= n // 4 and tally["accepted"] >= n // 4, tally


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
    "front16": ("hw_x_front", {"DEPTH": 4}, {"LOOP_LOOKUP": "1", "LOOP_DEPTH": "4", "LOOP_ERRORS": "1"}),
    "front16_3threads": ("hw_x_front", {"DEPTH": 4, "THREADS": 3},
                         {"LOOP_LOOKUP": "1", "LOOP_DEPTH": "4", "LOOP_THREADS": "3", "LOOP_ERRORS": "1"}),
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

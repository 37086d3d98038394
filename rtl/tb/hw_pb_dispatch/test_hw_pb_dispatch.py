"""cocotb testbench for the protobuf core's tag dispatch (cocotb 2.x, Icarus Verilog).

The descriptor ROMs are generated per schema into `<stem>_core.gen.v`
(crates/emit/src/verilog/protobuf.rs): hw_pb_desc_field (per (message, field number): hit, kind,
wire type, flags, offset, presence and its index, sub-type, slot, element size, scalar
size, oneof case/storage; three lookups a cycle ahead into registered rows, with the core's
late selects of the message and the repeated number), hw_pb_desc_msg (per message) and
hw_pb_desc_enum (closed enums). hw_pb_dispatch.v (this folder) puts the three side by
side; the cocotb test sweeps every (message, field number) of the schema, absent numbers (0, gaps, one past
the last, 2^29-1, 2^32-1, other messages' numbers, message indices past the last) and
every message and closed-enum value, and compares every output with a Python reference
model built from the compiled table file (`heapwire compile` writes `<stem>.hwsc`; read
by rtl/tb/hwsc.py from docs/table-format.md) -- the table the CPU engine decodes with.

Schemas: crates/cpu/testdata/unit.proto (64-bit), the differential suite's
proto2.proto (groups, closed enums, required, maps; 64-bit with header words) and
scalars3.proto (oneofs, maps; 32-bit pointers), bench/schemas/social.proto.
"""

import os
import random
import sys
from pathlib import Path

import pytest

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import FallingEdge, ReadOnly, RisingEdge, Timer

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # rtl/tb (tbutil, hwsc) when run as a script
import hwsc
from hwsc import NONE
from tbutil import REPO, generated_core, run_cocotb, seed_for

TB_DIR = Path(__file__).resolve().parent
DIFF_SCHEMAS = REPO / "tests" / "differential" / "schemas"

# --------------------------------------------------------------------------- reference model


def slots(m: hwsc.Message):
    """Per field: its count slot (repeated fields, 0..) or state slot (singular message
    fields, 0..); the slot counts (docs/image-layout.md; the CPU engine's numbering)."""
    slot, nc, ns = [], 0, 0
    for f in m.fields:
        if f.repeated:
            slot.append(nc)
            nc += 1
        elif hwsc.is_message(f.kind):
            slot.append(ns)
            ns += 1
        else:
            slot.append(0)
    return slot, nc, ns


def element_size(s: hwsc.Schema, f: hwsc.Field):
    if f.kind in (hwsc.STRING, hwsc.BYTES):
        return 2 * s.ptr
    if hwsc.is_message(f.kind):
        return s.messages[f.sub].size
    return hwsc.scalar_size(f.kind)


def expect_msg(s: hwsc.Schema, mi):
    m = s.messages[mi]
    _, nc, ns = slots(m)
    return dict(m_size=m.size, m_size8=(m.size + 7) & ~7, m_hasoff=m.hasbits_offset, m_unkoff=m.unknown_offset,
                m_nc=nc + 1, m_ns=ns + len(m.oneofs), m_nms=ns,
                m_req=int(any(f.flags & hwsc.F_REQUIRED for f in m.fields)),
                m_hwords=-(-m.hasbit_count // 32), m_map=int(bool(m.flags & hwsc.M_MAP_ENTRY)))


def expect_field(s: hwsc.Schema, mi, fi):
    m = s.messages[mi]
    f = m.fields[fi]
    slot, _, _ = slots(m)
    oneof = m.oneofs[f.presence_index] if f.presence == hwsc.P_ONEOF else None
    return dict(
        f_hit=1, f_kind=f.kind, f_kwt=hwsc.wire_type(f.kind), f_rep=int(f.repeated),
        f_closed=int(f.kind == hwsc.ENUM and bool(f.flags & hwsc.F_CLOSED)),
        f_utf8=int(f.kind == hwsc.STRING and bool(f.flags & hwsc.F_UTF8)),
        f_packable=int(f.kind not in (hwsc.STRING, hwsc.BYTES, hwsc.MESSAGE, hwsc.GROUP)),
        f_off=f.offset, f_pres=f.presence,
        f_pidx=f.presence_index if f.presence in (hwsc.P_HASBIT, hwsc.P_ONEOF) else 0,
        f_sub=0 if f.sub == NONE else f.sub, f_slot=slot[fi],
        f_elem=element_size(s, f) if f.repeated else 0, f_size=hwsc.scalar_size(f.kind) or 0,
        f_ocase=oneof.case_offset if oneof else 0, f_ostor=oneof.storage_offset if oneof else 0,
        f_osize=oneof.storage_size if oneof else 0, f_map=int(bool(f.flags & hwsc.F_MAP)))


# --------------------------------------------------------------------------- tests


async def settle():
    await Timer(1, unit="ns")


def compare(dut, want, ctx):
    for k, v in want.items():
        got = int(getattr(dut, k).value)
        assert got == v, f"{ctx}: {k} = {got}, table file says {v}"


# the field row's parts, top (f_hit) first, and their widths: hw_pb_desc_field's row
ROW_FIELDS = [("f_hit", 1), ("f_kind", 5), ("f_kwt", 3), ("f_rep", 1), ("f_closed", 1), ("f_utf8", 1),
              ("f_packable", 1), ("f_off", 32), ("f_pres", 2), ("f_pidx", 16), ("f_sub", 16), ("f_slot", 8),
              ("f_elem", 32), ("f_size", 4), ("f_ocase", 32), ("f_ostor", 32), ("f_osize", 32), ("f_map", 1)]
ROW_W = sum(w for _, w in ROW_FIELDS)
PORTS, MC = 3, 5


def unpack_row(bits):
    out, pos = {}, ROW_W
    for name, w in ROW_FIELDS:
        pos -= w
        out[name] = (bits >> pos) & ((1 << w) - 1)
    return out


@cocotb.test()
async def test_every_field_and_absent_numbers(dut):
    """hw_pb_desc_field, built as the core uses it: every (message, field number) of the
    schema and absent numbers, looked up on port 0 a cycle ahead (the row of the inputs
    before an edge shows after it, and stays while the inputs change); the message is one
    of five candidates (the others random indices) chosen by the one-hot select, or none
    (every port misses); port 1 looks up another number of the same message and port 2
    repeats the number port 0, 1 or 2 looked up the cycle before. Every port's row is
    compared with the table file's, a miss with hit low and the row zero."""
    s = hwsc.read(os.environ["HW_DISPATCH_HWSC"])
    # (low first: the first edge takes the first lookup, so the repeated numbers are known)
    cocotb.start_soon(Clock(dut.clk, 10, unit="ns").start(start_high=False))
    rng = random.Random(seed_for("dispatch"))
    all_numbers = sorted({f.number for m in s.messages for f in m.fields})
    probes = []   # (message index, field number)
    for mi, m in enumerate(s.messages):
        present = {f.number for f in m.fields}
        last = max(present, default=0)
        absent = {0, last + 1, last + 2, (1 << 29) - 1, 1 << 29, (1 << 32) - 1, 1 << 31}
        absent |= set(range(1, min(last, 256)))  # the gaps among small numbers
        absent |= {n + d for n in present for d in (-1, 1) if n + d > 0}  # each number's neighbours
        absent |= set(rng.sample(all_numbers, min(8, len(all_numbers))))  # other messages' numbers
        absent |= {rng.getrandbits(32) for _ in range(4)}
        absent |= {num | (1 << b) for num in sorted(present)[:4] for b in (16, 29, 31)}  # high bits set
        probes += [(mi, num) for num in sorted(present | absent)]
    # message indices past the last: nothing hits
    for mi in (len(s.messages), len(s.messages) + 1, 0xFFFF):
        probes += [(mi, num) for num in all_numbers[:20]]

    def expect(mi, num):
        if mi < len(s.messages):
            for fi, f in enumerate(s.messages[mi].fields):
                if f.number == num:
                    return expect_field(s, mi, fi)
        return None

    hits = misses = 0
    prev = [0] * PORTS          # the number each port looked up at the last edge
    for mi, num in probes:
        cands = [rng.randrange(len(s.messages) + 2) for _ in range(MC)]
        c = rng.randrange(MC)
        cands[c] = mi
        sel = 0 if rng.random() < 0.03 else 1 << c
        num1 = rng.choice(probes)[1] if rng.random() < 0.5 else rng.choice(all_numbers + [0])
        q = rng.randrange(PORTS)
        dut.l_msgs.value = sum(m << (16 * i) for i, m in enumerate(cands))
        dut.l_msel.value = sel
        dut.l_num.value = (rng.getrandbits(32) << 64) | (num1 << 32) | num   # port 2's own number unused
        dut.l_rep.value = 1 << (2 * PORTS + q)
        nums = [num, num1, prev[q]]
        await RisingEdge(dut.clk)
        # the inputs change for the next edge: the rows must not follow before it
        dut.l_msel.value = (1 << MC) - 1 - sel
        dut.l_num.value = rng.getrandbits(96)
        dut.l_rep.value = 1 << (2 * PORTS + (q + 1) % PORTS)
        await ReadOnly()
        rows = int(dut.f_row.value)
        hit = int(dut.f_hit.value)
        for p, n_p in enumerate(nums):
            bits = (rows >> (ROW_W * p)) & ((1 << ROW_W) - 1)
            exp = expect(mi, n_p) if sel else None
            ctx = f"port {p}, message {mi} (selected: {bool(sel)}), field number {n_p}"
            if exp is None:
                assert (hit >> p) & 1 == 0 and bits == 0, f"{ctx}: absent, but hit={(hit >> p) & 1} row={bits:#x}"
                misses += 1
            else:
                assert (hit >> p) & 1 == 1, f"{ctx}: a field of the table file, but no hit"
                got = unpack_row(bits)
                for k, v in exp.items():
                    assert got[k] == v, f"{ctx}: {k} = {got[k]}, table file says {v}"
                hits += 1
        await FallingEdge(dut.clk)
        prev = nums
    dut._log.info("%d messages, %d lookups: %d rows match the table file, %d absent (message, number) miss",
                  len(s.messages), len(probes), hits, misses)
    n_fields = sum(len(m.fields) for m in s.messages)
    assert hits >= n_fields and misses > 0


@cocotb.test()
async def test_messages(dut):
    """The message table's registered read: the entry of the index presented before a clock
    edge is out after it (and stays until the next edge), in any order; an index past the
    last message reads as the empty entry."""
    s = hwsc.read(os.environ["HW_DISPATCH_HWSC"])
    cocotb.start_soon(Clock(dut.clk, 10, unit="ns").start())
    rng = random.Random(seed_for("dispatch_msg"))
    n = len(s.messages)
    past = (n, n + 1, 0x7FFF, 0xFFFF)
    order = list(range(n)) + list(past) + [rng.randrange(n) for _ in range(3 * n)] + [rng.choice(past) for _ in range(4)]
    empty = dict(m_size=0, m_size8=0, m_hasoff=0, m_unkoff=0, m_nc=1, m_ns=0, m_nms=0, m_req=0, m_hwords=0, m_map=0)
    checked = 0
    for mi in order:
        dut.m_idx_next.value = mi
        await RisingEdge(dut.clk)
        dut.m_idx_next.value = (mi + 1) % n   # the next index must not show before the next edge
        await ReadOnly()
        want = expect_msg(s, mi) if mi < n else empty
        compare(dut, want, s.messages[mi].full_name if mi < n else f"index {mi} past the last message")
        checked += 1
        await FallingEdge(dut.clk)
    assert checked == len(order) and checked >= n + len(past)


@cocotb.test()
async def test_closed_enums(dut):
    """hw_pb_desc_enum: a closed enum knows exactly its declared values; open enums (and
    indices past the last) accept everything."""
    s = hwsc.read(os.environ["HW_DISPATCH_HWSC"])
    rng = random.Random(seed_for("enums"))
    closed = 0
    for ei, e in enumerate(s.enums + [None, None]):
        dut.e_idx.value = ei if e is not None else len(s.enums) + rng.randrange(100)
        declared = {v & 0xFFFFFFFF for _, v in e.values} if e else set()
        probes = set(declared) | {v & 0xFFFFFFFF for v in range(-8, 200)} | {0x80000000, 0x7FFFFFFF}
        probes |= {rng.getrandbits(32) for _ in range(16)}
        probes |= {(v + d) & 0xFFFFFFFF for v in declared for d in (-1, 1)}
        for v in sorted(probes):
            dut.e_val.value = v
            await settle()
            want = int(v in declared) if (e is not None and e.closed) else 1
            got = int(dut.e_known.value)
            assert got == want, f"{e.full_name if e else 'enum index past the last'}: value {v:#x} known={got}, expected {want}"
        closed += bool(e and e.closed)
    dut._log.info("%d enums (%d closed) checked", len(s.enums), closed)


# --------------------------------------------------------------------------- pytest entry

SCHEMAS = {
    # name: (schema, compile options)
    "unit": (REPO / "crates" / "cpu" / "testdata" / "unit.proto", []),
    "proto2_hdr": (DIFF_SCHEMAS / "proto2.proto", ["-I", str(DIFF_SCHEMAS), "--header-word"]),
    "scalars3_p32": (DIFF_SCHEMAS / "scalars3.proto", ["-I", str(DIFF_SCHEMAS), "--pointer-width", "32"]),
    "social": (REPO / "bench" / "schemas" / "social.proto", []),
}


def _build_and_test(name):
    proto, opts = SCHEMAS[name]
    gen, sources = generated_core(TB_DIR, name, proto, opts)
    run_cocotb(TB_DIR, "hw_pb_dispatch", [TB_DIR / "hw_pb_dispatch.v", *sources], name,
               extra_env={"HW_DISPATCH_HWSC": str(gen / f"{proto.stem}.hwsc")})


@pytest.mark.parametrize("name", list(SCHEMAS))
def test_hw_pb_dispatch(name):
    _build_and_test(name)


if __name__ == "__main__":
    _build_and_test("unit")

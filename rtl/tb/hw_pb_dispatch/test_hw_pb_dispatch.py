"""cocotb testbench for the protobuf core's tag dispatch (cocotb 2.x, Icarus Verilog).

The descriptor ROMs are generated per schema into `<stem>_core.gen.v`
(crates/emit/src/verilog/protobuf.rs): hw_pb_desc_field (per (message, field number): hit, kind,
wire type, flags, offset, presence and its index, sub-type, slot, element size, scalar
size, oneof case/storage), hw_pb_desc_msg (per message) and hw_pb_desc_enum (closed
enums). hw_pb_dispatch.v (this folder) puts the three side by side; the cocotb test
sweeps every (message, field number) of the schema, absent numbers (0, gaps, one past
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


@cocotb.test()
async def test_every_field_and_absent_numbers(dut):
    s = hwsc.read(os.environ["HW_DISPATCH_HWSC"])
    rng = random.Random(seed_for("dispatch"))
    all_numbers = sorted({f.number for m in s.messages for f in m.fields})
    hits = misses = 0
    for mi, m in enumerate(s.messages):
        dut.f_msg.value = mi
        present = {f.number: fi for fi, f in enumerate(m.fields)}
        for num, fi in present.items():
            dut.f_num.value = num
            await settle()
            compare(dut, expect_field(s, mi, fi), f"{m.full_name} field {num} ({m.fields[fi].name})")
            hits += 1
        last = max(present, default=0)
        absent = {0, last + 1, last + 2, (1 << 29) - 1, 1 << 29, (1 << 32) - 1, 1 << 31}
        absent |= set(range(1, min(last, 256)))  # the gaps among small numbers
        absent |= {n + d for n in present for d in (-1, 1) if n + d > 0}  # each number's neighbours
        absent |= set(rng.sample(all_numbers, min(8, len(all_numbers))))  # other messages' numbers
        absent |= {rng.getrandbits(32) for _ in range(4)}
        absent |= {num | (1 << b) for num in list(present)[:4] for b in (16, 29, 31)}  # high bits set
        for num in sorted(absent - set(present)):
            dut.f_num.value = num
            await settle()
            assert int(dut.f_hit.value) == 0, f"{m.full_name}: hit for absent field number {num}"
            misses += 1
    # message indices past the last: nothing hits
    for mi in (len(s.messages), len(s.messages) + 1, 0xFFFF):
        dut.f_msg.value = mi
        for num in all_numbers[:20]:
            dut.f_num.value = num
            await settle()
            assert int(dut.f_hit.value) == 0, f"hit for message index {mi} field {num}"
            misses += 1
    dut._log.info("%d messages: %d (message, field) entries match the table file, %d absent numbers miss",
                  len(s.messages), hits, misses)
    assert hits > 0


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

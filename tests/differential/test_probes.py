"""Hand-written wire inputs for semantics the brief names explicitly.

Each probe is decoded by the official library and by heapwire; they must
agree (same JSON, or both reject). The descriptions say what is probed,
not what the answer is: the official library decides.
"""
import pytest

from hwdiff import harness, mutate, runner
from hwdiff.mutate import group, padded_varint, tag
from hwdiff.runner import varint
from hwdiff.schemas import case_by_id

S = "scalars3:hw.p3.Scalars"
R = "scalars3:hw.p3.Repeated"
O = "scalars3:hw.p3.Oneofs"
M = "scalars3:hw.p3.Maps"
T = "scalars3:hw.p3.Tree"
B = "proto2:hw.p2.Basic"
N = "proto2:hw.p2.Node"
C1 = "evolution2:hw.evo2.ClosedV1<-ClosedV2"


def ld(num, payload):
    return tag(num, 2) + varint(len(payload)) + payload


def vi(num, v):
    return tag(num, 0) + varint(v & 0xFFFFFFFFFFFFFFFF)


def nest_tree(depth):
    b = vi(1, 1)
    for _ in range(depth):
        b = ld(4, b)
    return b


PROBES = [
    (S, vi(3, 1) + vi(3, 2), "last value wins for a singular scalar"),
    (S, ld(17, vi(1, 5)) + ld(17, ld(2, b"x")), "sub-message fields merge"),
    (S, ld(17, vi(1, 5)) + ld(17, vi(1, 6) + ld(5, varint(2))) + ld(17, ld(5, varint(4))), "merge of repeated inside sub-message"),
    (S, vi(3, -1), "int32 -1 as a 10-byte varint"),
    (S, vi(3, 0x1_0000_0005), "int32 from a varint wider than 32 bits (truncates)"),
    (S, vi(5, 0xFFFF_FFFF_FFFF), "uint32 from a 48-bit varint"),
    (S, vi(13, 2), "bool encoded as 2"),
    (S, vi(13, 1 << 40), "bool encoded as a wide varint"),
    (S, vi(16, -5), "open enum: unknown negative value"),
    (S, vi(16, 2), "enum alias value (GREEN/VERDE)"),
    (S, tag(3, 0) + padded_varint(7, 10), "non-minimal 10-byte varint"),
    (S, tag(3, 0) + padded_varint(7, 11), "11-byte varint"),
    (S, padded_varint(3 << 3, 5) + b"\x01", "non-minimal 5-byte tag"),
    (S, padded_varint(3 << 3, 6) + b"\x01", "non-minimal 6-byte tag"),
    (S, tag(3, 1) + b"\x00" * 8, "known varint field sent as fixed64 (wrong wire type)"),
    (S, tag(14, 0) + b"\x01", "known string field sent as varint"),
    (S, tag(14, 2) + varint(3) + b"\xed\xa0\x80", "proto3 string with a UTF-16 surrogate in UTF-8"),
    (S, tag(14, 2) + varint(2) + b"\xc0\x80", "proto3 string with an overlong NUL"),
    (S, tag(14, 2) + varint(4) + b"\xf4\x8f\xbf\xbf", "proto3 string U+10FFFF"),
    (S, tag(15, 2) + varint(3) + b"\xff\xfe\xfd", "bytes are not UTF-8 checked"),
    (S, tag(536870911, 0) + b"\x01", "largest field number"),
    (S, tag(0, 0) + b"\x01", "field number 0"),
    (S, varint((1 << 29) << 3) + b"\x01", "field number 2^29"),
    (S, tag(14, 2) + varint(10) + b"abc", "length past the end"),
    (S, tag(14, 2) + varint(1 << 31), "length 2^31"),
    (S, tag(14, 2) + varint((1 << 32) + 1) + b"a", "length 2^32+1"),
    (S, tag(14, 2) + padded_varint(1, 5) + b"a", "non-minimal 5-byte length prefix"),
    (S, tag(14, 2) + padded_varint(1, 6) + b"a", "non-minimal 6-byte length prefix"),
    (S, tag(17, 2) + padded_varint(2, 10) + vi(1, 1), "10-byte length prefix of a sub-message"),
    (R, tag(3, 2) + padded_varint(1, 6) + b"\x01", "6-byte length prefix of a packed run"),
    (S, tag(99, 2) + padded_varint(1, 6) + b"x", "6-byte length prefix of an unknown field"),
    (S, tag(1, 1) + b"\x00" * 7, "truncated fixed64"),
    (S, tag(2, 5) + b"\x00\x00\xc0\x7f", "float NaN"),
    (S, tag(2, 5) + b"\x01\x00\x80\x7f", "float signalling NaN"),
    (S, tag(1, 1) + b"\x00\x00\x00\x00\x00\x00\x00\x80", "double -0.0"),
    (S, tag(2, 5) + b"\x01\x00\x00\x00", "float smallest denormal"),
    (S, tag(99, 3) + tag(1, 0) + b"\x01" + tag(99, 4), "unknown group"),
    (S, tag(99, 3) + tag(100, 4), "group with mismatched end"),
    (S, tag(99, 4), "stray end-group"),
    (S, tag(3, 3) + tag(3, 4), "known varint field sent as a group"),
    (S, tag(99, 6), "wire type 6"),
    (S, tag(99, 7) + b"\x00", "wire type 7"),
    (S, mutate.nested_groups(99, 100), "100 nested unknown groups"),
    (S, mutate.nested_groups(99, 101), "101 nested unknown groups"),
    (R, ld(3, varint(1) + varint(2)) + vi(3, 3) + ld(3, varint(4)), "packed and unpacked mixed"),
    (R, ld(103, varint(1) + varint(2)), "packed data for a [packed=false] field"),
    (R, ld(3, b""), "empty packed run"),
    (R, ld(9, b"\x01\x00\x00"), "packed fixed32 with a partial element"),
    (R, ld(3, b"\x80"), "packed varint truncated inside"),
    (R, ld(13, b"\x00\x01\x02\xff\x01"), "packed bools incl. 2 and 255"),
    (R, ld(16, varint(2) + varint(0xFFFFFFFFFFFFFFFF) + varint(99)), "packed open enum with unknowns"),
    (O, vi(1, 5) + ld(2, b"s"), "oneof: last member wins"),
    (O, ld(3, vi(1, 1)) + vi(1, 5) + ld(3, ld(2, b"t")), "oneof: message member after another member"),
    (O, ld(3, vi(1, 1)) + ld(3, ld(2, b"t")), "oneof: message member merges"),
    (O, vi(1, 0), "oneof: member set to default is printed"),
    (M, ld(1, vi(1, 5) + ld(2, b"a")) + ld(1, vi(1, 5) + ld(2, b"b")), "map: duplicate key, last wins"),
    (M, ld(1, ld(2, b"v")), "map entry without key"),
    (M, ld(1, vi(1, 3)), "map entry without value"),
    (M, ld(1, b""), "empty map entry"),
    (M, ld(1, ld(2, b"v") + vi(1, 3)), "map entry with value before key"),
    (M, ld(1, vi(1, 3) + vi(1, 4) + ld(2, b"v")), "map entry with the key twice"),
    (M, ld(1, vi(1, 3) + ld(2, b"v") + vi(3, 1)), "map entry with an unknown field"),
    (M, ld(11, vi(1, 2) + ld(2, b"v")), "bool map key encoded as 2"),
    (M, ld(12, ld(1, b"k") + ld(2, vi(1, 1)) + ld(2, ld(2, b"s"))), "map message value given twice (merge or replace)"),
    (M, ld(14, ld(1, b"\xff") + ld(2, b"v")), "map<string,..> key with invalid UTF-8"),
    (B, vi(1, 1) + ld(2, b"r"), "proto2: required fields present"),
    (B, vi(1, 1), "proto2: a required field missing"),
    (B, vi(1, 1) + ld(2, b"r") + vi(18, 99), "proto2: closed enum unknown value"),
    (B, vi(1, 1) + ld(2, b"r") + vi(35, 1) + vi(35, 99) + vi(35, 2), "proto2: repeated closed enum with an unknown"),
    (B, vi(1, 1) + ld(2, b"r") + ld(36, varint(1) + varint(99) + varint(2)), "proto2: packed closed enum with an unknown"),
    (B, vi(1, 1) + ld(2, b"r") + ld(52, ld(1, b"k") + vi(2, 99)), "proto2: map value closed enum unknown"),
    (B, vi(1, 1) + ld(2, b"r") + vi(63, 99), "proto2: oneof closed enum unknown"),
    (B, vi(1, 1) + ld(2, b"r") + ld(16, b"\xff"), "proto2: string with invalid UTF-8"),
    (B, vi(1, 1) + ld(2, b"r") + ld(37, b"a\xff'") + ld(37, b"\"\xc3"), "proto2: repeated string with invalid UTF-8"),
    (B, vi(1, 1) + ld(2, b"r") + ld(52, ld(1, b"\xff") + vi(2, 1)), "proto2: map<string,..> key with invalid UTF-8"),
    (B, vi(1, 1) + ld(2, b"r") + ld(53, vi(1, 3) + ld(2, vi(1, 1) + ld(2, b"\xfe"))), "proto2: map value holding a string with invalid UTF-8"),
    (B, vi(1, 1) + ld(2, b"r") + ld(50, vi(1, 1) + vi(6, 12345)), "proto2 message with open (proto3) enum unknown value"),
    (B, vi(1, 1) + ld(2, b"r") + vi(3, 0) + vi(5, 42), "proto2: optional fields set to their defaults are printed"),
    (N, ld(2, ld(2, vi(1, 1))) + ld(2, vi(4, 1)), "proto2 nested merge"),
    (T, nest_tree(99), "nesting depth 100"),
    (T, nest_tree(100), "nesting depth 101"),
    (T, nest_tree(101), "nesting depth 102"),
    (C1, vi(1, 7) + vi(5, 1), "closed enum from a wider writer"),
]


@pytest.mark.parametrize("case_id,data,what", PROBES, ids=[f"{i:02d}-{p[2]}" for i, p in enumerate(PROBES)])
def test_probe(case_id, data, what):
    if not runner.available():
        pytest.fail(f"heapwire binary not found at {runner.heapwire_bin()}", pytrace=False)
    case = case_by_id(case_id)
    f = harness.check_single(case, data, "probe: " + what)
    if f:
        harness.save_repro(f, "probe")
        r = f.actual
        pytest.fail(f"[{f.klass}] {what}\n  schema={case.schema} type={case.reader} hex={data.hex()}\n"
                    f"  official: {f.expected.kind} {f.expected.json or f.expected.detail}\n"
                    f"  heapwire: {r.describe()} {r.out.decode('utf-8', 'replace').strip()[:400]} {r.stderr_text[:300]}\n"
                    f"  {f.note}\n  repro: {f.repro_path}", pytrace=False)

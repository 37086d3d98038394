"""Self-tests of the generator and oracle side (need no heapwire binary)."""
import pytest

from hwdiff import gen, harness, mutate, oracle, schemas
from hwdiff.schemas import CASES


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_corpus_is_valid_and_deterministic(case):
    msgs = harness.corpus(case)
    assert len(msgs) == harness.N_VALID + 1
    for b in msgs:
        v = oracle.verdict(case.reader, b)
        assert v.kind == oracle.ACCEPT, f"{case.id}: generated message rejected by the official library: {b[:64].hex()}"
    # same seed, same bytes
    g1 = gen.Gen(7).message(case.writer).SerializePartialToString(deterministic=True)
    g2 = gen.Gen(7).message(case.writer).SerializePartialToString(deterministic=True)
    assert g1 == g2


_CORPUS_DIGEST = """
import hashlib
from hwdiff import gen
from hwdiff.schemas import CASES
h = hashlib.sha256()
for case in CASES:
    g = gen.Gen(7)
    for _ in range(20):
        h.update(g.message(case.writer).SerializePartialToString(deterministic=True))
print(h.hexdigest())
"""


def test_corpus_is_the_same_in_every_process():
    # The pool's extension order (and set/dict order under another hash seed) can change
    # from one process to the next; the corpus must not, or a failure cannot be replayed.
    import os
    import subprocess
    import sys

    here = os.path.dirname(os.path.abspath(__file__))
    digests = set()
    for hash_seed in ("1", "2", "3"):
        env = dict(os.environ, PYTHONHASHSEED=hash_seed)
        out = subprocess.run([sys.executable, "-c", _CORPUS_DIGEST], cwd=here, env=env,
                             capture_output=True, text=True, check=True)
        digests.add(out.stdout.strip())
    assert len(digests) == 1, f"the same seed gave different corpora: {digests}"


@pytest.mark.parametrize("case", [c for c in CASES if c.reader == c.writer], ids=lambda c: c.id)
def test_generator_covers_every_field(case):
    g = gen.Gen(harness.case_seed(case, "coverage"))
    msgs = harness.written_messages(case) + [g.message(case.writer) for _ in range(150)]
    want = set(gen.all_fields(case.writer))
    missing = sorted(want - harness.covered_fields(msgs))
    assert not missing, f"{case.id}: fields never set by the generator: {missing}"


def test_edge_values_present():
    import math
    import struct

    g = gen.Gen(1)
    ds = {struct.pack("<d", g.double()) for _ in range(4000)}
    for v in [math.nan, math.inf, -math.inf, -0.0, 0.0, 5e-324, -5e-324, 2.2250738585072014e-308,
              2.225073858507201e-308, 1.7976931348623157e308, float(2**53), 9007199254740993.0]:
        assert struct.pack("<d", v) in ds, v
    fs = {struct.pack("<f", g.float32()) for _ in range(4000)}
    for bits in [0x80000000, 0x00000001, 0x007FFFFF, 0x7F7FFFFF, 0x7F800000, 0xFF800000, 0x7FC00000]:
        assert struct.pack("<I", bits) in fs, hex(bits)
    fd = schemas.descriptor("hw.p3.Scalars").fields_by_name
    i64 = {g.scalar(fd["f_int64"]) for _ in range(4000)}
    u64 = {g.scalar(fd["f_uint64"]) for _ in range(4000)}
    assert {-2**63, 2**63 - 1, 2**53 - 1, 2**53 + 1, 0, 1, -1} <= i64 and {2**64 - 1, 0} <= u64
    strs = [g.string() for _ in range(2000)]
    assert "" in strs and any(any(ord(c) > 0xFFFF for c in s) for s in strs) and any("\u00e9" in s for s in strs)
    # across the default corpus: huge payloads and deep nesting are present
    sizes = [len(b) for c in CASES for b in harness.corpus(c)]
    assert max(sizes) > 20_000
    depths = [op for op, _ in harness.deep_specials(schemas.case_by_id("scalars3:hw.p3.Tree"))]
    assert "deep99" in depths and "deep120" in depths


def test_deep_messages_straddle_the_limit():
    case = schemas.case_by_id("scalars3:hw.p3.Tree")
    kinds = {op: oracle.verdict(case.reader, b).kind for op, b in harness.deep_specials(case)}
    assert kinds["deep99"] == oracle.ACCEPT and kinds["deep100"] == oracle.ACCEPT
    assert kinds["deep102"] == oracle.REJECT and kinds["deep120"] == oracle.REJECT


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_mutants_are_classified(case):
    ms = harness.mutants(case)
    kinds = {}
    for op, b in ms:
        kinds.setdefault(oracle.verdict(case.reader, b).kind, 0)
        kinds[oracle.verdict(case.reader, b).kind] += 1
    assert kinds.get(oracle.ACCEPT, 0) > len(ms) // 10, kinds
    assert kinds.get(oracle.REJECT, 0) > len(ms) // 10, kinds


def test_oracle_semantics_probes():
    """Facts about the official parser the suite relies on."""
    t = "hw.p2.Node"
    assert oracle.verdict(t, b"\x08" + b"\xff" * 9 + b"\x01").kind == oracle.ACCEPT     # 10-byte varint
    assert oracle.verdict(t, b"\x08" + b"\xff" * 10 + b"\x01").kind == oracle.REJECT    # 11-byte varint
    assert oracle.verdict(t, b"\x00\x01").kind == oracle.REJECT                         # field number 0
    assert oracle.verdict(t, b"\x12\x05\x08").kind == oracle.REJECT                     # length past the end
    assert oracle.verdict(t, mutate.group(77, b"\x08\x01")).kind == oracle.ACCEPT       # unknown group skipped
    assert oracle.verdict(t, mutate.tag(77, 3)).kind == oracle.REJECT                   # unterminated group
    assert oracle.verdict("hw.p3.Inner", b"\x12\x01\xff").kind == oracle.REJECT          # proto3 bad UTF-8
    bad_str = oracle.verdict("hw.p2.Basic", b"\x82\x01\x01\xff")                     # proto2 bad UTF-8: printed
    assert bad_str.kind == oracle.ACCEPT and "b'\\\\xff'" in bad_str.json, bad_str   # as the bytes' repr
    bad_key = b"\xa2\x03\x05\x0a\x01\xff\x10\x01"                                  # ... but as a map key
    assert oracle.verdict("hw.p2.Basic", bad_key).kind == oracle.UNPRINTABLE             # the printer refuses
    assert oracle.verdict(t, b"\x12" + mutate.padded_varint(0, 6)).kind == oracle.REJECT  # 6-byte length (7.x)
    assert oracle.verdict("hw.p2.Basic", b"").kind == oracle.ACCEPT                      # required not checked


def test_json_compare_is_exact():
    eq = lambda a, b: oracle.first_difference(oracle.loads(a), oracle.loads(b)) is None
    assert eq('{"a": 1.0, "b": {"x": [1, 2]}}', '{"b":{"x":[1,2]},"a":1}')
    assert not eq('{"a": -0.0}', '{"a": 0}')
    assert eq('{"a": -0.0}', '{"a": -0}')
    assert not eq('{"a": 0.1}', '{"a": 0.10000000149011612}')
    assert not eq('{"a": true}', '{"a": 1}')
    assert not eq('{"a": "1"}', '{"a": 1}')
    assert not eq('{"a": 1}', '{"a": 1, "b": 0}')
    with pytest.raises(oracle.JsonSyntaxError):
        oracle.loads('{"a": NaN}')

"""Differential tests: heapwire vs the official protobuf library (upb).

Valid messages: one `--delimited --json` run per (schema, type), compared line
by line with the official MessageToJson. Mutants: wherever the official
parser rejects (or its printer refuses), heapwire must exit 1 with one stderr
line; wherever it accepts, the JSON must be identical. Encode: `encode
--from-json` of the official JSON gives the official deterministic bytes where
those are defined (no maps, no extensions), and otherwise parses back
(officially) to the same message; `decode | encode --from-image` gives the
official bytes of accepted mutants, unknown fields included.

Knobs: HEAPWIRE_DIFF_CASES (valid messages per type, default 60; --thorough
600), HEAPWIRE_DIFF_MUTANTS_PER_MESSAGE (10), HEAPWIRE_DIFF_SEED,
HEAPWIRE_BIN. Reproducers of failures go to tests/differential/repro/new/.
"""
import glob
import json
import os

import pytest
from google.protobuf import unknown_fields

from hwdiff import harness, mutate, oracle, runner, schemas
from hwdiff.schemas import CASES


@pytest.fixture(scope="session", autouse=True)
def heapwire():
    if not runner.available():
        pytest.fail(f"heapwire binary not found at {runner.heapwire_bin()}: build it with "
                    "`cargo build --release -p heapwire-cli` (scripts/test_differential.sh does) or set HEAPWIRE_BIN",
                    pytrace=False)
    return runner.heapwire_bin()


def _ids(c):
    return c.id


@pytest.mark.parametrize("case", CASES, ids=_ids)
def test_valid_messages(case):
    msgs = harness.corpus(case)
    items = []
    for i, b in enumerate(msgs):
        v = oracle.verdict(case.reader, b)
        assert v.kind == oracle.ACCEPT, f"generator produced a message the official library rejects: {b[:80].hex()}"
        items.append((f"valid#{i}", b, v))
    fails = harness.check_batch(case, items)
    if fails:
        pytest.fail(harness.report(case, fails, len(items), harness.seed_note(case, "corpus"), "valid messages"),
                    pytrace=False)


@pytest.mark.parametrize("case", CASES, ids=_ids)
def test_mutants(case):
    ms = harness.mutants(case)
    accepted, single = [], []
    for op, b in ms:
        v = oracle.verdict(case.reader, b)
        (accepted if v.kind == oracle.ACCEPT else single).append((op, b, v))
    fails = harness.check_batch(case, accepted)
    fails += [f for f in harness.parallel(lambda it: harness.check_single(case, it[1], it[0], it[2]), single) if f]
    if fails:
        pytest.fail(harness.report(case, fails, len(ms),
                                   harness.seed_note(case, "mutants") + f"; {len(accepted)} accepted / "
                                   f"{len(single)} rejected-or-undefined by the official library", "mutants"),
                    pytrace=False)


@pytest.mark.parametrize("case", CASES, ids=_ids)
def test_encode_from_json_roundtrip(case):
    msgs = harness.corpus(case)
    jsons = [oracle.verdict(case.reader, b).json for b in msgs]
    # The official parser rejects some of its own output (a float field holding
    # FLT_MAX prints as 3.4028235e+38, above FLT_MAX as a double): heapwire must too.
    refused = [j for j in jsons if not oracle.official_parses(case.reader, j)]
    jsons = [j for j in jsons if j not in refused]
    for j in refused:
        r = runner.encode_json(case, j.encode(), delimited=False)
        assert r.rc == 1, f"{case.id}: the official parser rejects {j[:300]}; heapwire encode --from-json: {r.describe()}"
    text = "".join(j + "\n" for j in jsons).encode()
    r = runner.encode_json(case, text, delimited=True)
    if r.rc != 0:
        pytest.fail(f"{case.id}: encode --from-json of the official JSON of {len(jsons)} valid messages: "
                    f"{r.describe()}: {r.stderr_text[:500]}; {harness.seed_note(case, 'corpus')}", pytrace=False)
    try:
        outs = runner.split_delimited(r.out)
    except IndexError:
        pytest.fail(f"{case.id}: encode output is not a well-formed delimited stream ({len(r.out)} bytes)")
    assert len(outs) == len(jsons), f"{case.id}: {len(jsons)} JSON lines in, {len(outs)} messages out"
    problems, exact = [], 0
    for i, (j, b) in enumerate(zip(jsons, outs)):
        # Where the official deterministic serialization is defined (no maps, no
        # extensions), the bytes must be it: packing, field order and defaults show.
        official = oracle.official_bytes(case.reader, j)
        if official is not None:
            exact += 1
            if b != official:
                at = next((k for k, (x, y) in enumerate(zip(b, official)) if x != y), min(len(b), len(official)))
                problems.append(f"#{i}: bytes differ from the official serialization at byte {at}: heapwire "
                                f"{b[max(0, at - 8):at + 24].hex()} official {official[max(0, at - 8):at + 24].hex()}; "
                                f"json={j[:300]}")
                continue
        v = oracle.verdict(case.reader, b)
        if v.kind != oracle.ACCEPT:
            problems.append(f"#{i}: official parser rejects heapwire's encoding ({v.detail}); json={j[:300]} hex={b[:160].hex()}")
        else:
            d = harness.compare_json(j, v.json)
            if d:
                problems.append(f"#{i}: parsed back differently: {d}\n      json={j[:300]}\n      hex={b[:160].hex()}")
    if problems:
        pytest.fail(f"{case.id}: {len(problems)} of {len(jsons)} messages do not round-trip through encode "
                    f"--from-json ({exact} compared byte for byte); {harness.seed_note(case, 'corpus')}\n  "
                    + "\n  ".join(problems[:6]), pytrace=False)


# Readers where upb 7.x writes unknown bytes of its own making are left out (README,
# "Differential testing"): it re-encodes an unknown closed-enum value with all 64 bits
# (heapwire's image keeps the low 32), and a map entry it keeps among the unknown fields
# as key, value, then the entry's unknown fields (heapwire keeps the entry's bytes).
IMAGE_CASES = [c for c in CASES
               if not oracle.reaches(schemas.descriptor(c.reader), lambda f: oracle.is_closed_enum(f) or oracle.is_map(f))]
IMAGE_MESSAGES = 24


def _unknown_tail(desc) -> bytes:
    """An unknown field of each wire type (a group included) for messages of type `desc`."""
    n = next(n for n in range(20000, 30000)
             if n not in desc.fields_by_number and not _is_extension_number(desc, n))
    return (mutate.tag(n, 0) + runner.varint(300) + mutate.tag(n, 1) + bytes(8) + mutate.tag(n, 2) + b"\x03abc"
            + mutate.group(n, mutate.tag(1, 5) + bytes(4)))


def _is_extension_number(desc, n) -> bool:
    try:
        schemas.pool().FindExtensionByNumber(desc, n)
        return True
    except KeyError:
        return False


@pytest.mark.parametrize("case", IMAGE_CASES, ids=_ids)
def test_encode_from_image_roundtrip(case):
    """`decode | encode --from-image` (no JSON between): mutants the official library
    accepts, unknown fields of every wire type among them, come back as the official
    deterministic serialization (where defined: no maps, no extensions)."""
    cls = schemas.message_class(case.reader)
    with_unknown, without = [], []
    for op, b in harness.mutants(case):
        if len(with_unknown) == IMAGE_MESSAGES:
            break
        if oracle.verdict(case.reader, b).kind != oracle.ACCEPT:
            continue
        m = cls()
        m.ParseFromString(b)
        if oracle.serialization_is_defined(m):
            item = (op, b, m.SerializePartialToString(deterministic=True))
            (with_unknown if len(unknown_fields.UnknownFieldSet(m)) else without).append(item)
    # Mutants holding unknown fields first: they are what this path must keep. Where the
    # mutator made few, unknown fields of each wire type are appended to the others.
    extra = _unknown_tail(schemas.descriptor(case.reader))
    without.append(("empty", b"", b""))
    for op, b, _ in without[: max(0, 8 - len(with_unknown))]:
        m = cls()
        m.ParseFromString(b + extra)
        with_unknown.append((op + "+unknown_tail", b + extra, m.SerializePartialToString(deterministic=True)))
    picked = (with_unknown + without)[:IMAGE_MESSAGES]
    assert with_unknown, f"{case.id}: no accepted mutant to check"

    def check(item):
        op, b, official = item
        d = runner.decode_image(case, b)
        if d.rc != 0:
            return f"{op}: decode {d.describe()}: {d.stderr_text[:200]}; hex={b[:160].hex()}"
        e = runner.encode_image(case, d.out)
        if e.rc != 0:
            return f"{op}: encode --from-image {e.describe()}: {e.stderr_text[:200]}; hex={b[:160].hex()}"
        if e.out != official:
            at = next((k for k, (x, y) in enumerate(zip(e.out, official)) if x != y), min(len(e.out), len(official)))
            return (f"{op}: bytes differ from the official serialization at byte {at}: heapwire "
                    f"{e.out[max(0, at - 8):at + 24].hex()} official {official[max(0, at - 8):at + 24].hex()}; "
                    f"input hex={b[:160].hex()}")
        return None

    problems = [p for p in harness.parallel(check, picked) if p]
    if problems:
        pytest.fail(f"{case.id}: {len(problems)} of {len(picked)} messages do not round-trip through decode | encode "
                    f"--from-image; {harness.seed_note(case, 'mutants')}\n  " + "\n  ".join(problems[:6]), pytrace=False)


REPROS = sorted(glob.glob(os.path.join(schemas.HERE, "repro", "*.json")))


@pytest.mark.parametrize("path", REPROS, ids=[os.path.basename(p)[:-5] for p in REPROS])
def test_committed_reproducers(path):
    """Regression tests: every committed reproducer must agree with the official library."""
    with open(path) as fh:
        doc = json.load(fh)
    case = schemas.Case(os.path.basename(doc["schema"]), doc["type"], doc.get("written_as", doc["type"]))
    data = bytes.fromhex(doc["hex"])
    f = harness.check_single(case, data, doc.get("mutation", "repro"))
    if f:
        pytest.fail(f"{os.path.relpath(path, runner.REPO)} [{doc['class']}]: still failing as [{f.klass}]: {f.note}\n"
                    f"  official: {f.expected.kind} {f.expected.json or f.expected.detail}\n"
                    f"  heapwire: {f.actual.describe()} {f.actual.out.decode('utf-8', 'replace').strip()[:400]} "
                    f"{f.actual.stderr_text[:300]}", pytrace=False)

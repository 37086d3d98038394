"""Well-known types in the JSON mapping, both directions, against the official library.

Schema `schemas/wkt.proto` (hw.wkt.Wkt): Timestamp, Duration, FieldMask, Struct,
Value, ListValue, NullValue, Any, Empty, the nine wrappers, singular, repeated, in
maps and in a oneof; Any payloads of a plain message and of well-known types (nested
Any included). The official side resolves Any type URLs in the suite's descriptor
pool (heapwire in the compiled schema).

* print: random messages → `decode --delimited --json`; each line must equal
  MessageToJson's text, compact, up to the order of object members (map entries come
  in upb's hash order): same spelling of every number and string, "@type" first.
* parse: the official JSON of the same messages → `encode --from-json`; hand-written
  texts in the special forms and at their edges → both accept with the same message,
  or both reject.
* print errors: values the official printer refuses (Any of a type not in the pool,
  payload bytes that do not parse, Value NaN, out-of-range Timestamp...) → exit 1.
"""
import json
import os
import random

import pytest

from google.protobuf import json_format

from hwdiff import harness, runner, schemas

CASE = schemas.Case("wkt.proto", "hw.wkt.Wkt", "hw.wkt.Wkt")
N = int(os.environ.get("HEAPWIRE_DIFF_WKT_CASES", "150")) * (10 if os.environ.get("HEAPWIRE_DIFF_THOROUGH") else 1)

TS_MIN, TS_MAX = -62135596800, 253402300799
DUR_MAX = 315576000000


@pytest.fixture(scope="module", autouse=True)
def heapwire():
    if not runner.available():
        pytest.fail(f"heapwire binary not found at {runner.heapwire_bin()}", pytrace=False)


def W():
    return schemas.message_class("hw.wkt.Wkt")()


def cls(name):
    return schemas.message_class(name)


def official_text(m) -> str:
    """MessageToJson's document, compact (MessageToJson itself puts spaces after , and :)."""
    d = json_format.MessageToDict(m, descriptor_pool=schemas.pool())
    return json.dumps(d, separators=(",", ":"), ensure_ascii=False)


def _members(pairs):
    # "@type" stays first (the official printer puts it there); other members are
    # sorted, since map entries (Struct's too) come in hash order from upb.
    head = [pairs[0]] if pairs and pairs[0][0] == "@type" else []
    return dict(head + sorted(pairs[len(head):]))


def canonical(text: str) -> str:
    """The JSON text with object members sorted (but "@type" first) and numbers and
    strings spelled exactly as written: texts compare equal iff they differ only in the
    order of object members."""
    v = json.loads(text, object_pairs_hook=_members, parse_float=lambda s: "\x00" + s,
                   parse_int=lambda s: "\x00" + s, parse_constant=lambda s: "\x01" + s)
    return json.dumps(v, separators=(",", ":"), ensure_ascii=False)


def official_parse(text: str):
    """The official parser's message, or None if it rejects."""
    m = W()
    try:
        json_format.Parse(text, m, descriptor_pool=schemas.pool())
    except json_format.ParseError:
        return None
    return m


def same_message(a, b) -> bool:
    if a.SerializeToString(deterministic=True) == b.SerializeToString(deterministic=True) or a == b:
        return True
    # Any payloads holding maps may be serialized in another order: compare unpacked.
    try:
        return canonical(official_text(a)) == canonical(official_text(b))
    except Exception:  # noqa: BLE001
        return False


# ------------------------------------------------------------------ generator
class Gen:
    def __init__(self, seed):
        self.r = random.Random(seed)

    def nanos(self):
        r = self.r
        k = r.randrange(5)
        if k == 0:
            return 0
        if k == 1:
            return r.randrange(1000) * 1_000_000
        if k == 2:
            return r.randrange(1_000_000) * 1000
        return r.choice([1, 999_999_999, r.randrange(1_000_000_000)])

    def timestamp(self, t):
        r = self.r
        t.seconds = r.choice([TS_MIN, TS_MAX, 0, -1, 951782400, 4107542400, r.randrange(TS_MIN, TS_MAX + 1)])
        t.nanos = self.nanos()

    def duration(self, d):
        r = self.r
        s = r.choice([0, 1, -1, DUR_MAX, -DUR_MAX, r.randrange(-DUR_MAX, DUR_MAX + 1), r.randrange(-100, 100)])
        n = self.nanos()
        if s < 0 or (s == 0 and r.random() < 0.5):
            n = -n
        d.seconds, d.nanos = s, n

    def word(self):
        return "".join(self.r.choice("abcxyz") for _ in range(self.r.randrange(1, 4)))

    def path(self):
        parts = []
        for _ in range(self.r.randrange(1, 4)):
            w = self.word()
            for _ in range(self.r.randrange(3)):
                w += "_" + self.word() + self.r.choice(["", "1", "2x"])
            parts.append(w)
        return ".".join(parts)

    def string(self):
        return self.r.choice(["", "a", "é😀", "x\"y\\z", "\u0000\n", "null", "1", self.word()])

    def number(self):
        return self.r.choice([0.0, -0.0, 1.0, -2.5, 1e300, 5e-324, 0.1, 123456789.0, float(2**53 + 1), self.r.uniform(-1e6, 1e6)])

    def value(self, v, depth=0):
        k = self.r.randrange(6 if depth < 3 else 4)
        if k == 0:
            v.null_value = 0
        elif k == 1:
            v.number_value = self.number()
        elif k == 2:
            v.string_value = self.string()
        elif k == 3:
            v.bool_value = self.r.random() < 0.5
        elif k == 4:
            self.struct(v.struct_value, depth + 1)
        else:
            self.list_value(v.list_value, depth + 1)

    def struct(self, s, depth=0):
        s.Clear()
        for _ in range(self.r.randrange(4)):
            self.value(s.fields[self.string()], depth)

    def list_value(self, lv, depth=0):
        lv.Clear()
        for _ in range(self.r.randrange(4)):
            self.value(lv.values.add(), depth)

    def plain(self, p, depth=0):
        r = self.r
        if r.random() < 0.5:
            p.id = r.choice([0, 1, -1, 2**31 - 1])
        if r.random() < 0.5:
            p.name = self.string()
        p.nums.extend(r.choice([0, -1, 2**63 - 1]) for _ in range(r.randrange(3)))
        for _ in range(r.randrange(3)):
            p.counts[self.word()] = r.randrange(-5, 5)
        p.color = r.randrange(3)
        if r.random() < 0.3:
            self.timestamp(p.at)
        if depth < 2 and r.random() < 0.3:
            self.plain(p.child, depth + 1)

    def any(self, a, depth=0):
        """Packs a random payload, under a random type URL prefix."""
        r = self.r
        k = r.randrange(12 if depth < 2 else 11)
        names = ["hw.wkt.Plain", "google.protobuf.Timestamp", "google.protobuf.Duration", "google.protobuf.FieldMask",
                 "google.protobuf.Struct", "google.protobuf.Value", "google.protobuf.ListValue", "google.protobuf.Empty",
                 "google.protobuf.Int32Value", "google.protobuf.StringValue", "google.protobuf.DoubleValue",
                 "google.protobuf.Any"]
        name = names[k]
        m = cls(name)()
        if k == 0:
            self.plain(m)
        elif k == 1:
            self.timestamp(m)
        elif k == 2:
            self.duration(m)
        elif k == 3:
            m.paths.extend(self.path() for _ in range(r.randrange(3)))
        elif k == 4:
            self.struct(m)
        elif k == 5:
            if r.random() < 0.8:
                self.value(m)
        elif k == 6:
            self.list_value(m)
        elif k == 8:
            m.value = r.choice([0, 7, -(2**31)])
        elif k == 9:
            m.value = self.string()
        elif k == 10:
            m.value = self.number()
        elif k == 11:
            self.any(m, depth + 1)
        a.type_url = r.choice(["type.googleapis.com/", "x/y/", "", "/"]) + name
        a.value = m.SerializeToString(deterministic=True)

    def message(self):
        r = self.r
        m = W()
        p = lambda: r.random() < 0.4  # noqa: E731
        if p():
            self.timestamp(m.ts)
        if p():
            self.duration(m.dur)
        if p():
            m.mask.paths.extend(self.path() for _ in range(r.randrange(4)))
        if p():
            self.struct(m.st)
        if p():
            self.value(m.val)
        if p():
            self.list_value(m.lst)
        if p():
            self.any(m.any)
        if p():
            m.empty.SetInParent()
        if p():
            m.opt_nul = 0
        for f, vals in [("dbl", [0.0, -0.0, 1.5, 1e300]), ("flt", [0.0, 0.1, 3.0, -1e30]), ("i64", [0, -1, 2**63 - 1]),
                        ("u64", [0, 2**64 - 1]), ("i32", [0, -(2**31)]), ("u32", [0, 2**32 - 1]), ("bool", [False, True]),
                        ("str", ["", "é", "x"]), ("byt", [b"", b"\x00\xff", b"abc"])]:
            if p():
                getattr(m, f).value = r.choice(vals)
        for _ in range(r.randrange(3)):
            self.timestamp(m.tss.add())
        for _ in range(r.randrange(3)):
            self.duration(m.durs.add())
        for _ in range(r.randrange(3)):
            self.any(m.anys.add())
        for _ in range(r.randrange(3)):
            self.value(m.vals.add())
        for _ in range(r.randrange(3)):
            m.i32s.add().value = r.choice([0, 5])
        for _ in range(r.randrange(3)):
            self.any(m.any_map[self.string()])
        for _ in range(r.randrange(3)):
            self.value(m.val_map[r.randrange(-3, 3)])
        for _ in range(r.randrange(2)):
            self.timestamp(m.ts_map[self.word()])
        if r.random() < 0.1:
            m.nuls.extend([0] * r.randrange(1, 3))
        k = r.randrange(4)
        if k == 1:
            self.duration(m.c_dur)
        elif k == 2:
            self.value(m.c_val)
        elif k == 3:
            m.c_str = self.string()
        if p():
            self.plain(m.plain)
        return m


@pytest.fixture(scope="module")
def corpus():
    g = Gen(harness.case_seed(CASE, "wkt"))
    return [g.message() for _ in range(N)]


def _seed_note():
    return f"seed {harness.case_seed(CASE, 'wkt')} (HEAPWIRE_DIFF_SEED={harness.BASE_SEED})"


# ------------------------------------------------------------------ print
def test_print_random(corpus):
    data = runner.delimit([m.SerializeToString() for m in corpus])
    r = runner.decode_json(CASE, data, delimited=True)
    assert r.rc == 0, f"decode --json: {r.describe()}: {r.stderr_text[:400]}; {_seed_note()}"
    lines = r.out.decode("utf-8").splitlines()
    assert len(lines) == len(corpus)
    bad = [(m, exp, got) for m, got in zip(corpus, lines) if canonical(exp := official_text(m)) != canonical(got)]
    if bad:
        m, exp, got = bad[0]
        pytest.fail(f"{len(bad)} of {len(corpus)} printed differently; {_seed_note()}\n  hex      {m.SerializeToString().hex()}\n"
                    f"  official {exp}\n  heapwire {got}", pytrace=False)


def _wire(build):
    m = W()
    build(m)
    return m.SerializeToString()


def _any(m, url, payload: bytes):
    m.any.type_url, m.any.value = url, payload


PRINT_ERRORS = {
    "any-type-not-in-pool": lambda m: _any(m, "type.googleapis.com/hw.nope.Missing", b""),
    "any-empty-url-with-value": lambda m: _any(m, "", b"\x08\x01"),
    "any-url-trailing-slash": lambda m: _any(m, "type.googleapis.com/hw.wkt.Plain/", b""),
    "any-leading-dot": lambda m: _any(m, "type.googleapis.com/.hw.wkt.Plain", b""),
    "any-payload-truncated": lambda m: _any(m, "x/hw.wkt.Plain", b"\x12\x05ab"),
    "any-payload-bad-utf8": lambda m: _any(m, "x/hw.wkt.Plain", b"\x12\x01\xff"),
    "any-payload-field-zero": lambda m: _any(m, "x/google.protobuf.Duration", b"\x00\x01"),
    "any-in-repeated-bad-payload": lambda m: m.anys.add(type_url="x/google.protobuf.Timestamp", value=b"\x08"),
    "any-in-map-unknown-type": lambda m: m.any_map["k"].MergeFrom(cls("google.protobuf.Any")(type_url="x/Nope")),
    "any-payload-invalid-timestamp": lambda m: _any(m, "x/google.protobuf.Timestamp", b"\x10\xff\xff\xff\xff\x0f"),
    "any-nested-unknown": lambda m: _any(m, "x/google.protobuf.Any", cls("google.protobuf.Any")(type_url="y/Nope").SerializeToString()),
    "value-nan": lambda m: setattr(m.val, "number_value", float("nan")),
    "value-inf-in-list": lambda m: m.lst.values.add(number_value=float("inf")),
    "timestamp-above-range": lambda m: setattr(m.ts, "seconds", TS_MAX + 1),
    "timestamp-negative-nanos": lambda m: setattr(m.ts, "nanos", -1),
    "duration-sign-mismatch": lambda m: (setattr(m.dur, "seconds", 1), setattr(m.dur, "nanos", -1)),
    "duration-above-range": lambda m: setattr(m.dur, "seconds", DUR_MAX + 1),
    "fieldmask-uppercase": lambda m: m.mask.paths.append("aB"),
    "fieldmask-trailing-underscore": lambda m: m.mask.paths.append("a_"),
    "fieldmask-underscore-digit": lambda m: m.mask.paths.append("a_1"),
}


@pytest.mark.parametrize("name", sorted(PRINT_ERRORS))
def test_print_errors(name):
    data = _wire(PRINT_ERRORS[name])
    m = W()
    m.ParseFromString(data)
    with pytest.raises(Exception):
        official_text(m)
    r = runner.decode_json(CASE, data)
    assert r.rc == 1 and len(r.stderr_text.splitlines()) == 1, (
        f"the official printer fails on {data.hex()}; heapwire: {r.describe()} {r.out[:300]!r} {r.stderr_text[:300]}")


# ------------------------------------------------------------------ parse
def test_parse_official_json(corpus):
    texts = [official_text(m) for m in corpus]
    # The official parser refuses some of its own output (a repeated NullValue prints
    # as [null]): heapwire must refuse those too.
    refused = [t for t in texts if official_parse(t) is None]
    fails = [f for f in harness.parallel(_check_parse, refused) if f]
    assert not fails, "\n".join(fails[:5])
    texts = [t for t in texts if t not in refused]
    r = runner.encode_json(CASE, "".join(t + "\n" for t in texts).encode(), delimited=True)
    assert r.rc == 0, f"encode --from-json: {r.describe()}: {r.stderr_text[:400]}; {_seed_note()}"
    outs = runner.split_delimited(r.out)
    assert len(outs) == len(texts)
    bad = []
    for t, b in zip(texts, outs):
        want = official_parse(t)
        got = W()
        got.ParseFromString(b)
        if want is None or not same_message(want, got):
            bad.append((t, b))
    if bad:
        t, b = bad[0]
        pytest.fail(f"{len(bad)} of {len(texts)} parsed differently; {_seed_note()}\n  json {t[:600]}\n  heapwire {b.hex()[:400]}",
                    pytrace=False)


def _ts(*vals):
    return [json.dumps({"ts": v}) for v in vals]


def _dur(*vals):
    return [json.dumps({"dur": v}) for v in vals]


PARSE_TEXTS = (
    _ts("0001-01-01T00:00:00Z", "9999-12-31T23:59:59.999999999Z", "9999-12-31T23:59:59.999999999+00:00",
        "0001-01-01T00:00:00.000000001Z", "1970-01-01T00:00:00Z", "1969-12-31T23:59:59.999Z",
        "1972-01-01T10:00:20.021-05:00", "1970-01-01T05:30:00+05:30", "1970-01-01T00:00:00-00:00",
        "2000-02-29T23:59:59.5Z", "2024-12-31T23:59:59.123456Z",
        "1970-01-01T00:00:00.1Z", "1970-01-01T00:00:00.12Z", "1970-01-01T00:00:00.1234Z", "1970-01-01T00:00:00.12345678Z",
        "1970-01-01T00:00:00.Z", "1970-01-01T00:00:00.5 Z", "1970-01-01T00:00:00.5e-1Z", "1970-01-01T00:00:00.1_5Z",
        "1970-1-1T0:0:0Z", "1970-01- 1T00:00:00Z", "1970-01-01T00:00:00+5:3", "1970-01-01T00:00:00+-5:00",
        "1970-01-01T00:00:00+ 1:00", "1970-01-01T00:00:00+99:99",
        # rejected
        "", "Z", "1970-01-01T00:00:00", "1970-01-01t00:00:00Z", "1970-01-01T00:00:00z", "1970-01-01 00:00:00Z",
        "1970-01-01T00:00:60Z", "1970-01-01T00:00:61Z", "1970-01-01T24:00:00Z", "1970-13-01T00:00:00Z",
        "1970-02-30T00:00:00Z", "1900-02-29T00:00:00Z", "0000-01-01T00:00:00Z", "10000-01-01T00:00:00Z",
        "1970-01-01T00:00:00.1234567890Z", "1970-01-01T00:00:00ZZ", "1970-01-01T00:00:00+0530",
        "1970-01-01T00:00:00+05:30:00", "1970-01-01T00:00:00+05", "0001-01-01T00:00:00+00:01",
        "9999-12-31T23:59:59-00:01", "1970-01-01T00:00:00.5e3Z", "1970-01-01T00:00:00._5Z", "1970-01-01T00:00:65Z",
        "+1970-01-01T00:00:00Z", "1970-01-01T00:00:00.-5Z", "70-01-01T00:00:00Z", 0, None, {}, ["1970-01-01T00:00:00Z"])
    + _dur("0s", "1s", "-1s", "-1.5s", "1.5s", "-0.5s", "0.000000001s", "-0.000000001s", "315576000000s", "-315576000000s",
           "315576000000.999999999s", "-315576000000.999999999s", "1.1s", "1.12s", "1.1234s", "1.123456789s",
           "+1.5s", "1.s", "1_0s", "1.5_0s", "1.0000000005s", "1.0000000015s", "1.5e-1s", " 7 s", "007s",
           # rejected
           "", "s", "1", "1S", "1e3s", " -1.5s", "1.9999999999s", "315576000001s", "-315576000001s",
           "315576000000.9999999999s", ".5s", "-.5s", "1.5.5s", "1.-5s", "1.5e9s", "--1s", "1ss", 1, None, {"seconds": 1})
    + [json.dumps({"mask": v}) for v in ["", "a", "a.bC,x", "fooBarBaz", "a,,b", ",", "aBC", "a1B", "a_b", "A", ["a"], 1]]
    + [json.dumps({f: v}) for f, v in [
        ("dbl", 1.5), ("dbl", "-Infinity"), ("dbl", "NaN"), ("dbl", -0), ("dbl", "1_0"), ("dbl", "nan"), ("dbl", {"value": 1}),
        ("flt", 3.4028234663852886e38), ("flt", 3.4028235e38), ("flt", 1e39), ("flt", "1e39"), ("flt", 0),
        ("i64", "-9223372036854775808"), ("i64", 9223372036854775808), ("i64", "1e3"), ("i64", 1.5),
        ("u64", "18446744073709551615"), ("u64", -1), ("i32", 2147483647), ("i32", 2147483648), ("i32", "0"),
        ("u32", 4294967295), ("bool", True), ("bool", False), ("bool", "true"), ("bool", 0), ("str", ""), ("str", "é"),
        ("str", 1), ("byt", "AAE="), ("byt", "-_8"), ("byt", "A"), ("byt", ""), ("i32", None), ("str", None)]]
    + [json.dumps(d) for d in [
        {"st": {}}, {"st": {"a": 1, "b": "s", "c": False, "d": None, "e": [1.5, None, [], {}], "f": {"g": {"h": None}}}},
        {"st": []}, {"st": "x"}, {"st": None}, {"lst": []}, {"lst": [1, "a", None, True, {"k": [None]}]}, {"lst": {}},
        {"val": None}, {"val": 0}, {"val": -0.0}, {"val": "s"}, {"val": True}, {"val": {}}, {"val": []}, {"val": 1e300},
        {"val": {"a": [1, 2, {"b": None}]}}, {"vals": [None, 1, "x", [], {}]}, {"val_map": {"1": None, "-2": [1]}},
        {"nul": None}, {"nul": "NULL_VALUE"}, {"nul": 0}, {"nul": 1}, {"nuls": [None]}, {"nuls": ["NULL_VALUE", 0]},
        {"opt_nul": None}, {"optNul": "NULL_VALUE"}, {"c_val": None}, {"cVal": None, "cStr": "x"}, {"cDur": "1s", "cStr": "x"},
        {"cDur": None, "cStr": "x"}, {"empty": {}}, {"empty": []}, {"empty": ""}, {"empty": "x"}, {"empty": [1]},
        {"plain": []}, {"plain": ""}, {"plain": {"at": "1970-01-01T00:00:00Z", "child": {"at": None}}},
        {"i32s": [1, 0]}, {"i32s": [None]}, {"tss": ["1970-01-01T00:00:00Z", None]}, {"tsMap": {"a": "1970-01-01T00:00:00Z"}},
        {"tsMap": {"a": None}}, {"anyMap": {"a": {}}},
        # Any
        {"any": {}}, {"any": None}, {"any": []}, {"any": "x"},
        {"any": {"@type": "type.googleapis.com/hw.wkt.Plain"}},
        {"any": {"@type": "type.googleapis.com/hw.wkt.Plain", "id": 5, "name": "x", "at": "1970-01-01T00:00:01Z"}},
        {"any": {"@type": "hw.wkt.Plain", "counts": {"a": 1}, "child": {"id": 1}}},
        {"any": {"@type": "a/b/c/hw.wkt.Plain", "nums": ["1", 2]}},
        {"any": {"@type": "type.googleapis.com/hw.wkt.Plain", "nope": 1}},
        {"any": {"@type": "type.googleapis.com/hw.wkt.Plain", "value": 1}},
        {"any": {"@type": "type.googleapis.com/hw.nope.Missing"}},
        {"any": {"@type": "type.googleapis.com/.hw.wkt.Plain"}},
        {"any": {"@type": "type.googleapis.com/hw.wkt.Plain/"}},
        {"any": {"@type": ""}}, {"any": {"@type": 5}}, {"any": {"@type": None}}, {"any": {"id": 5}},
        {"any": {"@type": "x/google.protobuf.Duration", "value": "1.5s"}},
        {"any": {"@type": "x/google.protobuf.Duration", "value": "1.5s", "ignored": [1, 2]}},
        {"any": {"@type": "x/google.protobuf.Duration"}},
        {"any": {"@type": "x/google.protobuf.Duration", "value": "1.5"}},
        {"any": {"@type": "x/google.protobuf.Timestamp", "value": "1970-01-01T00:00:00Z"}},
        {"any": {"@type": "x/google.protobuf.FieldMask", "value": "a.bC"}},
        {"any": {"@type": "x/google.protobuf.Struct", "value": {"a": [1, None]}}},
        {"any": {"@type": "x/google.protobuf.Struct", "value": []}},
        {"any": {"@type": "x/google.protobuf.ListValue", "value": [1, {}]}},
        {"any": {"@type": "x/google.protobuf.Value", "value": None}},
        {"any": {"@type": "x/google.protobuf.Value", "value": {"k": "v"}}},
        {"any": {"@type": "x/google.protobuf.Int32Value", "value": 5}},
        {"any": {"@type": "x/google.protobuf.Int32Value", "value": 0}},
        {"any": {"@type": "x/google.protobuf.Int32Value", "value": "5"}},
        {"any": {"@type": "x/google.protobuf.Int32Value", "value": None}},
        {"any": {"@type": "x/google.protobuf.Int32Value", "value": {"value": 5}}},
        {"any": {"@type": "x/google.protobuf.StringValue", "value": ""}},
        {"any": {"@type": "x/google.protobuf.BytesValue", "value": "AAE="}},
        {"any": {"@type": "x/google.protobuf.Empty"}},
        {"any": {"@type": "x/google.protobuf.Empty", "value": {}}},
        {"any": {"@type": "x/google.protobuf.Any", "value": {"@type": "x/hw.wkt.Plain", "id": 1}}},
        {"any": {"@type": "x/google.protobuf.Any", "value": {}}},
        {"any": {"@type": "x/google.protobuf.Any", "value": {"@type": "x/google.protobuf.Value", "value": [None]}}},
        {"any": {"@type": "x/google.protobuf.Any", "value": {"@type": "x/Nope"}}},
        {"anys": [{"@type": "x/hw.wkt.Plain", "id": 1}, {}, {"@type": "x/google.protobuf.Int64Value", "value": "-1"}]},
        {"anys": [None]},
        {"anyMap": {"k": {"@type": "x/google.protobuf.Timestamp", "value": "2000-01-01T00:00:00Z"}}},
        {"anyMap": {"k": None}},
    ]]
    + ["[]", '""', "null", '{"ts": "1970-01-01T00:00:00Z", "ts": "1970-01-01T00:00:01Z"}',
       # a JSON integer -0 is Python's int 0: +0.0 as a Value or double, -0.0 is kept
       '{"val": -0}', '{"vals": [-0, -0.0, -0e0, 0]}', '{"dbl": -0}', '{"flt": -0}', '{"st": {"a": -0}}',
       '{"val": 1' + '0' * 308 + '}', '{"val": 1' + '0' * 309 + '}', '{"val": 1e400}', '{"val": -1e400}']
)


def _check_parse(text: str):
    want = official_parse(text)
    r = runner.encode_json(CASE, text.encode(), delimited=False)
    if want is None:
        return None if r.rc == 1 else f"official rejects, heapwire {r.describe()} ({r.out.hex()[:200]}): {text}"
    if r.rc != 0:
        return f"official accepts ({want.SerializeToString().hex()}), heapwire {r.describe()} {r.stderr_text[:200]}: {text}"
    got = W()
    got.ParseFromString(r.out)
    return None if same_message(want, got) else f"different messages: official {want.SerializeToString().hex()} heapwire {r.out.hex()}: {text}"


def test_parse_special_forms():
    fails = [f for f in harness.parallel(_check_parse, PARSE_TEXTS) if f]
    if fails:
        pytest.fail(f"{len(fails)} of {len(PARSE_TEXTS)} texts parsed differently:\n  " + "\n  ".join(fails[:15]), pytrace=False)

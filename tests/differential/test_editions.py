"""Editions and the current descriptor.proto, against the official tools (issue 20).

The editions schemas themselves run through the generic suite (test_differential.py:
cases editions2023:* and editions2024:*). Here: every `.proto` that ships with
grpcio-tools (the current descriptor.proto with extension-range declarations, the
well-known types, compiler/plugin.proto, the editions feature protos) compiles; protoc's
own output, a FileDescriptorSet with source info, decodes to the official JSON; and
features heapwire cannot honour, or that protoc refuses, are refused with the file, the
feature and the value named.
"""
import os
import subprocess
import sys

import pytest

from google.protobuf import descriptor_pb2, json_format

from hwdiff import harness, mutate, runner, schemas


def _proto_dir() -> str:
    schemas.editions_protoc()  # a clear error if grpcio-tools is missing
    import grpc_tools

    return os.path.join(os.path.dirname(grpc_tools.__file__), "_proto")


def _shipped_protos():
    root = _proto_dir()
    out = []
    for d, _, files in os.walk(root):
        out += [os.path.relpath(os.path.join(d, f), root) for f in files if f.endswith(".proto")]
    return sorted(out)


def _run(args, data=b""):
    return subprocess.run([runner.heapwire_bin(), *args], input=data, capture_output=True, timeout=60)


def test_shipped_protos_compile(tmp_path):
    protos = _shipped_protos()
    assert "google/protobuf/descriptor.proto" in protos and "google/protobuf/java_features.proto" in protos
    for p in protos:
        r = _run(["compile", "-I", _proto_dir(), os.path.join(_proto_dir(), p), "-o", str(tmp_path)])
        assert r.returncode == 0, f"{p}: {r.stderr.decode()}"
    # descriptor.proto with no include path (named `descriptor.proto`), as protoc takes it.
    r = _run(["compile", os.path.join(_proto_dir(), "google/protobuf/descriptor.proto"), "-o", str(tmp_path)])
    assert r.returncode == 0, r.stderr.decode()


def test_descriptor_set_with_source_info_decodes_as_official(tmp_path):
    out = tmp_path / "set.pb"
    files = ["google/protobuf/descriptor.proto", "google/protobuf/compiler/plugin.proto",
             "google/protobuf/java_features.proto"]
    subprocess.run([*schemas.editions_protoc(), "-I", _proto_dir(), "--include_imports", "--include_source_info",
                    f"--descriptor_set_out={out}", *files], check=True)
    data = out.read_bytes()
    m = descriptor_pb2.FileDescriptorSet()
    m.ParseFromString(data)
    expected = json_format.MessageToJson(m, indent=None)
    r = _run(["decode", "--schema", os.path.join(_proto_dir(), "google/protobuf/descriptor.proto"), "-I", _proto_dir(),
              "--type", "google.protobuf.FileDescriptorSet", "--json"], data)
    assert r.returncode == 0, r.stderr.decode()
    assert harness.compare_json(expected, r.stdout.decode()) is None, harness.compare_json(expected, r.stdout.decode())


REFUSED = [
    # (source, words the error must contain)
    ('edition = "2025";\nmessage M { int32 a = 1; }\n', ["2025"]),
    ('edition = "2023";\nmessage M { optional int32 a = 1; }\n', ["optional", "editions"]),
    ('edition = "2023";\nmessage M { group G = 1 { int32 a = 2; } }\n', ["group", "editions"]),
    ('edition = "2023";\nmessage M { M sub = 1 [features.field_presence = IMPLICIT]; }\n',
     ["bad.proto", "M.sub", "field_presence", "IMPLICIT"]),
    ('edition = "2023";\nmessage M { int32 a = 1 [features.message_encoding = DELIMITED]; }\n',
     ["bad.proto", "M.a", "message_encoding", "DELIMITED"]),
    ('edition = "2023";\noption features.field_presence = IMPLICIT;\nmessage M { int32 a = 1 [default = 3]; }\n',
     ["bad.proto", "M.a", "field_presence", "IMPLICIT"]),
    ('edition = "2024";\nmessage M { int32 a = 1 [features.repeated_field_encoding = EXPANDED]; }\n',
     ["bad.proto", "M.a", "repeated_field_encoding", "EXPANDED"]),
]


@pytest.mark.parametrize("source,words", REFUSED, ids=[str(i) for i in range(len(REFUSED))])
def test_refused_with_a_clear_error(tmp_path, source, words):
    p = tmp_path / "bad.proto"
    p.write_text(source)
    r = _run(["compile", str(p), "-o", str(tmp_path)])
    err = r.stderr.decode()
    assert r.returncode == 2, err
    for w in words:
        assert w in err, f"{w!r} not in {err!r}"


ENCODE_CASES = [
    ("proto2.proto", "hw.p2.Basic", {"rSint64Packed": ["-3", "5"], "rFixed32Packed": [1, 2], "rInt32": [7, 8]}),
    ("scalars3.proto", "hw.p3.Repeated", {"uDouble": [1.5, 2.5]}),
    ("editions2023.proto", "hw.ed23.Explicit", {"r": [1, 2], "rp": [3, 4], "rl": [1, 0], "delimited": {"v": 5},
                                               "must": 1}),
    ("editions2023.proto", "hw.ed23.Delimited", {"items": [{"v": 1}, {"s": "x", "fx": ["3"]}], "one": {"v": 2}}),
    ("editions2024.proto", "hw.ed24.Implicit", {"packed": [1, -1], "expanded": [2, -2], "delimited": {"x": 1},
                                               "i32": 0, "explicitI32": 0, "legacy": "LEGACY_TWO"}),
    ("extensions2023.proto", "hw.ext.Base", {"a": 1, "[hw.ext.ptags]": [1, -1], "[hw.ext.tags]": [3, 4],
                                             "[hw.ext.grp]": {"g": 1}, "[hw.ext.Scope.subs]": [{"t": "a"}],
                                             "[hw.ext23.Holder.packed_by_default]": [1, 2],
                                             "[hw.ext23.Holder.delimited]": {"t": "b"}}),
]


@pytest.mark.parametrize("schema,type_,doc", ENCODE_CASES, ids=[c[1] for c in ENCODE_CASES])
def test_encode_bytes_as_official(schema, type_, doc):
    """Packed/expanded and delimited encodings (and [packed = ...] in proto2/proto3): the
    bytes `encode` writes equal the official serialization of the same message, and
    `decode --json` of those bytes prints the official JSON."""
    import json

    m = schemas.message_class(type_)()
    json_format.Parse(json.dumps(doc), m)
    d = _run(["decode", "--schema", os.path.join(schemas.SCHEMA_DIR, schema), "-I", schemas.SCHEMA_DIR,
              "--type", type_, "--json"], m.SerializePartialToString())
    assert d.returncode == 0, d.stderr.decode()
    assert harness.compare_json(json_format.MessageToJson(m, indent=None), d.stdout.decode()) is None
    r = _run(["encode", "--schema", os.path.join(schemas.SCHEMA_DIR, schema), "-I", schemas.SCHEMA_DIR,
              "--type", type_, "--from-json"], json.dumps(doc).encode())
    assert r.returncode == 0, r.stderr.decode()
    official = m.SerializePartialToString()
    if any(k.startswith("[") for k in doc):
        # upb writes extensions in an order of its own; compare the top-level fields
        # (each number's records in order, so packed vs expanded still shows) by number.
        def by_number(b):
            toks = mutate.fields(b)
            assert toks is not None, b.hex()
            return sorted(((t.num, b[t.start:t.end]) for t in toks), key=lambda x: x[0])

        assert by_number(r.stdout) == by_number(official), (r.stdout.hex(), official.hex())
    else:
        assert r.stdout == official, (r.stdout.hex(), official.hex())


SET_SCHEMAS = ["editions2023.proto", "editions2024.proto", "extensions2023.proto", "scalars3.proto", "proto2.proto",
               "imports.proto", "wkt.proto"]


def test_descriptor_set_as_schema_gives_the_same_tables(tmp_path):
    """`--schema` takes protoc's FileDescriptorSet: the table file compiled from it equals
    the one compiled from the `.proto` (editions resolved from the set's options)."""
    for s in SET_SCHEMAS:
        stem = s.rsplit(".", 1)[0]
        pb = tmp_path / f"{stem}.pb"
        subprocess.run([*schemas.editions_protoc(), "-I", schemas.SCHEMA_DIR, "--include_imports",
                        f"--descriptor_set_out={pb}", s], check=True, cwd=schemas.SCHEMA_DIR)
        r = _run(["compile", str(pb), "-o", str(tmp_path / "set")])
        assert r.returncode == 0, f"{s}: {r.stderr.decode()}"
        r = _run(["compile", os.path.join(schemas.SCHEMA_DIR, s), "-o", str(tmp_path / "proto")])
        assert r.returncode == 0, f"{s}: {r.stderr.decode()}"
        a = (tmp_path / "set" / f"{stem}.hwsc").read_bytes()
        b = (tmp_path / "proto" / f"{stem}.hwsc").read_bytes()
        assert a == b, f"{s}: tables differ"
    # And decoding through the set is the official decoding.
    m = schemas.message_class("hw.ed24.Implicit")()
    m.delimited.x = 3
    m.legacy = 2
    m.packed.extend([1, -2])
    r = _run(["decode", "--schema", str(tmp_path / "editions2024.pb"), "--type", "hw.ed24.Implicit", "--json"],
             m.SerializeToString())
    assert r.returncode == 0, r.stderr.decode()
    assert harness.compare_json(json_format.MessageToJson(m, indent=None), r.stdout.decode()) is None


def test_feature_targets_as_protoc(tmp_path):
    """A feature set where protoc refuses it (here utf8_validation on a message) is refused
    by both, with the file, entity, feature and value named."""
    p = tmp_path / "tgt.proto"
    p.write_text('edition = "2023";\nmessage M {\n  option features.utf8_validation = NONE;\n  string s = 1;\n}\n')
    official = subprocess.run([*schemas.editions_protoc(), "-I", str(tmp_path), "--descriptor_set_out=/dev/null",
                               "tgt.proto"], capture_output=True, cwd=tmp_path)
    assert official.returncode != 0
    r = _run(["compile", str(p), "-o", str(tmp_path)])
    err = r.stderr.decode()
    assert r.returncode == 2 and all(w in err for w in ["tgt.proto", "message M", "utf8_validation", "NONE"]), err


def test_edition_2024_visibility_and_import_option(tmp_path):
    """Edition 2024 syntax that changes nothing heapwire writes: `export`/`local` on
    top-level declarations and `import option`."""
    (tmp_path / "opt.proto").write_text('edition = "2024";\npackage o;\nimport "google/protobuf/descriptor.proto";\n'
                                        'extend google.protobuf.MessageOptions { int32 tag = 50000; }\n')
    p = tmp_path / "vis.proto"
    p.write_text('edition = "2024";\npackage v;\nimport option "opt.proto";\n'
                 'export message M { option (o.tag) = 3; int32 a = 1; }\nlocal enum E { E_ZERO = 0; }\n')
    official = subprocess.run([*schemas.editions_protoc(), "-I", str(tmp_path), "-I", _proto_dir(),
                               "--descriptor_set_out=/dev/null", "vis.proto"], capture_output=True, cwd=tmp_path)
    assert official.returncode == 0, official.stderr.decode()
    r = _run(["decode", "--schema", str(p), "--type", "v.M", "--json"], b"\x08\x05")
    assert r.returncode == 0 and r.stdout.strip() == b'{"a":5}', r.stderr.decode()


VENDORED = os.path.join(os.path.dirname(__file__), "..", "..", "vendor", "protobuf")


def test_vendored_protos_are_those_of_the_pinned_grpcio_tools():
    """The descriptor.proto and feature protos built into heapwire are the files the
    pinned grpcio-tools ships (vendor/protobuf/HEAPWIRE.md)."""
    names = sorted(os.listdir(os.path.join(VENDORED, "google", "protobuf")))
    assert names == ["cpp_features.proto", "descriptor.proto", "go_features.proto", "java_features.proto"], names
    for n in names:
        with open(os.path.join(VENDORED, "google", "protobuf", n), "rb") as a, \
                open(os.path.join(_proto_dir(), "google", "protobuf", n), "rb") as b:
            assert a.read() == b.read(), f"vendor/protobuf/google/protobuf/{n} differs from grpcio-tools'"


def _naming_and_visibility() -> str:
    """crates/schema/testdata/naming2024.proto with a C++ feature from the built-in
    cpp_features.proto."""
    root = os.path.join(os.path.dirname(__file__), "..", "..")
    with open(os.path.join(root, "crates", "schema", "testdata", "naming2024.proto")) as f:
        text = f.read()
    return text.replace("package ns.v1;\n", 'package ns.v1;\nimport "google/protobuf/cpp_features.proto";\n'
                        "option features.(pb.cpp).enum_name_uses_string_view = false;\n")


def test_edition_2024_naming_style_and_visibility_as_protoc(tmp_path):
    """`features.enforce_naming_style` and `features.default_symbol_visibility` at every
    level protoc allows, and a C++ feature from the bundled cpp_features.proto: a file
    protoc accepts compiles with no include path, with grpcio-tools' as include path, and
    from protoc's descriptor set, to the same tables, and decodes as the official library."""
    p = tmp_path / "ns.proto"
    p.write_text(_naming_and_visibility())
    pb = tmp_path / "ns.pb"
    official = subprocess.run([*schemas.editions_protoc(), "-I", str(tmp_path), "--include_imports",
                               f"--descriptor_set_out={pb}", "ns.proto"], capture_output=True)
    assert official.returncode == 0, official.stderr.decode()
    tables = []
    for i, args in enumerate([[str(p)], [str(p), "-I", _proto_dir()], [str(pb)]]):
        r = _run(["compile", *args, "-o", str(tmp_path / str(i))])
        assert r.returncode == 0, f"{args}: {r.stderr.decode()}"
        tables.append((tmp_path / str(i) / "ns.hwsc").read_bytes())
    assert tables[0] == tables[1] == tables[2]
    # The official library, from protoc's descriptor set.
    from google.protobuf import descriptor_pool, message_factory

    fds = descriptor_pb2.FileDescriptorSet()
    fds.ParseFromString(pb.read_bytes())
    pool = descriptor_pool.DescriptorPool()
    for f in fds.file:
        pool.Add(f)
    m = message_factory.GetMessageClass(pool.FindMessageTypeByName("ns.v1.Point"))()
    m.x, m.oddName_, m.color, m.hidden.h, m.legacy.CamelField = 3, -1, 1, 4, 5
    for schema in [str(p), str(pb)]:
        r = _run(["decode", "--schema", schema, "--type", "ns.v1.Point", "--json"], m.SerializeToString())
        assert r.returncode == 0, r.stderr.decode()
        expected = json_format.MessageToJson(m, indent=None)
        assert harness.compare_json(expected, r.stdout.decode()) is None, (expected, r.stdout)
    # Where protoc refuses one (visibility is a file-level feature), heapwire does too.
    p.write_text(_naming_and_visibility().replace("  int32 x = 1;", "  option features.default_symbol_visibility = LOCAL_ALL;\n  int32 x = 1;"))
    official = subprocess.run([*schemas.editions_protoc(), "-I", str(tmp_path), "--descriptor_set_out=/dev/null",
                               "ns.proto"], capture_output=True)
    assert official.returncode != 0
    r = _run(["compile", str(p), "-o", str(tmp_path)])
    err = r.stderr.decode()
    assert r.returncode == 2 and all(w in err for w in ["ns.proto", "message ns.v1.Point", "default_symbol_visibility",
                                                        "LOCAL_ALL"]), err


def test_include_path_descriptor_proto_only_when_imported_as_protoc(tmp_path):
    """An older descriptor.proto on the include path (here the current one without
    `enforce_naming_style`) is used only by a schema that imports it, as protoc does."""
    gp = tmp_path / "old" / "google" / "protobuf"
    gp.mkdir(parents=True)
    src = open(os.path.join(_proto_dir(), "google", "protobuf", "descriptor.proto")).read()
    i = src.index("  optional EnforceNamingStyle enforce_naming_style = 7")
    (gp / "descriptor.proto").write_text(src[:i] + src[src.index("];", i) + 2:])
    body = 'edition = "2024";\npackage n;\n{imp}option features.enforce_naming_style = STYLE_LEGACY;\nmessage M {{ int32 a = 1; }}\n'
    for imp in ["", 'import "google/protobuf/descriptor.proto";\n']:
        (tmp_path / "n.proto").write_text(body.format(imp=imp))
        official = subprocess.run([*schemas.editions_protoc(), "-I", str(tmp_path / "old"), "-I", str(tmp_path),
                                   "--descriptor_set_out=/dev/null", "n.proto"], capture_output=True, cwd=tmp_path)
        r = _run(["compile", str(tmp_path / "n.proto"), "-I", str(tmp_path / "old"), "-I", str(tmp_path),
                  "-o", str(tmp_path / "out")])
        assert (official.returncode == 0) == (r.returncode == 0), (imp, official.stderr, r.stderr)
        assert official.returncode == (1 if imp else 0), official.stderr.decode()


def _cpp_decode(schema: str, type_: str, data: bytes):
    """The C++ library's reading of `data` (protoc --decode, text format): (ok, text)."""
    r = subprocess.run([*schemas.editions_protoc(), "-I", schemas.SCHEMA_DIR, f"--decode={type_}", schema],
                       input=data, capture_output=True, cwd=schemas.SCHEMA_DIR, timeout=60)
    return r.returncode == 0, r.stdout.decode()


def _upb_accepts(type_: str, data: bytes) -> bool:
    from google.protobuf.message import DecodeError

    try:
        schemas.message_class(type_)().ParseFromString(data)
        return True
    except DecodeError:
        return False


# (hex, upb as is accepts it?) for hw.ed23.Delimited: items = 1 is repeated DELIMITED.
# upb 6.x read a record as a group body (the opposite answers on the first six rows);
# the pinned 7.36.2 answers as C++ on all of them.
REPEATED_GROUP_RECORDS = [
    ("0a020805", True),                 # items as a length-delimited record
    ("0a00", True),                     # ... empty
    ("0a0208050c", False),                # ... followed by an end-group tag
    ("0a0008050c", False),
    ("0b08050c0a020805", True),         # a group, then a record
    ("0a0208050b10070c", True),         # a record, then a group
    ("12020805", True),                  # one = 2 (singular DELIMITED) as a record
    ("0b08050c", True),                  # a proper group
    ("0a05", False),                     # a record running past the end
]


@pytest.mark.parametrize("hexs,upb", REPEATED_GROUP_RECORDS, ids=[h for h, _ in REPEATED_GROUP_RECORDS])
def test_repeated_group_length_delimited_record_as_cpp(hexs, upb):
    """A length-delimited record of a repeated group field: upb reads it as a group body
    running to an end-group tag (ignoring the length); the C++ library keeps it as an
    unknown field. heapwire does as C++, and the differential oracle (which runs upb)
    reads such records as C++ does (oracle.as_cpp_reads), so mutants of
    hw.ed23.Delimited are compared too. Here: the oracle's verdict is C++'s, heapwire's
    answer is the oracle's, and upb as is still differs where stated (if upb changes,
    this says so)."""
    from hwdiff import oracle

    data = bytes.fromhex(hexs)
    cpp_ok, _ = _cpp_decode("editions2023.proto", "hw.ed23.Delimited", data)
    v = oracle.verdict("hw.ed23.Delimited", data)
    assert (v.kind == oracle.ACCEPT) == cpp_ok, (v.kind, v.detail)
    assert _upb_accepts("hw.ed23.Delimited", data) == upb
    f = harness.check_single(schemas.case_by_id("editions2023:hw.ed23.Delimited"), data, "probe")
    assert f is None, f.note


def test_empty_repeated_extension_as_cpp():
    """An empty packed run of a repeated extension: upb keeps the extension, empty, and
    its JSON printer prints `"[hw.ext.tags]": []`; the C++ library keeps nothing (protoc
    --decode prints nothing) and upb itself serializes nothing. heapwire, with no
    presence for repeated fields, prints nothing, as C++ (the suite's comparison drops
    exactly such empty extension lists: harness._drop_empty_extension_lists)."""
    import json

    for num, key in [(101, "[hw.ext.tags]"), (102, "[hw.ext.ptags]"), (106, "[hw.ext.cols]")]:
        data = mutate.tag(num, 2) + b"\x00" + mutate.tag(1, 0) + b"\x01"
        m = schemas.message_class("hw.ext.Base")()
        m.ParseFromString(data)
        assert json.loads(json_format.MessageToJson(m, indent=None)) == {"a": 1, key: []}
        assert m.SerializeToString() == mutate.tag(1, 0) + b"\x01"
        cpp_ok, text = _cpp_decode("extensions.proto", "hw.ext.Base", data)
        assert cpp_ok and text.strip() == "a: 1", text
        r = _run(["decode", "--schema", os.path.join(schemas.SCHEMA_DIR, "extensions.proto"), "-I", schemas.SCHEMA_DIR,
                  "--type", "hw.ext.Base", "--json"], data)
        assert r.returncode == 0 and json.loads(r.stdout) == {"a": 1}, (r.stdout, r.stderr)

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

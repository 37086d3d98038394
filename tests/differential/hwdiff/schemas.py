"""Test schemas and the (schema, reader type, writer type) cases of the suite.

Schemas are compiled with protoc into a descriptor set and loaded into a
private DescriptorPool; message classes come from message_factory, so no
generated _pb2 modules are involved.
"""
from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCHEMA_DIR = os.path.join(HERE, "schemas")

# Every top-level schema file of the suite (imports are pulled in by protoc).
SCHEMA_FILES = ["scalars3.proto", "proto2.proto", "imports.proto", "evolution.proto", "evolution2.proto", "wkt.proto"]
# Editions (and extensions) schemas: compiled by the protoc that ships in grpcio-tools
# (pinned in requirements.txt; the system protoc may predate editions).
EDITIONS_FILES = ["editions2023.proto", "editions2024.proto", "extensions2023.proto"]


@dataclass(frozen=True)
class Case:
    """One differential case: bytes are produced with `writer`, decoded as `reader`."""

    schema: str  # file name relative to SCHEMA_DIR
    reader: str  # fully-qualified message type heapwire decodes
    writer: str  # fully-qualified type the generator fills (wider schema version)

    @property
    def id(self) -> str:
        s = self.schema.rsplit(".", 1)[0]
        if self.reader == self.writer:
            return f"{s}:{self.reader}"
        return f"{s}:{self.reader}<-{self.writer.rsplit('.', 1)[-1]}"

    @property
    def schema_path(self) -> str:
        return os.path.join(SCHEMA_DIR, self.schema)


CASES = [
    Case("scalars3.proto", "hw.p3.Scalars", "hw.p3.Scalars"),
    Case("scalars3.proto", "hw.p3.Repeated", "hw.p3.Repeated"),
    Case("scalars3.proto", "hw.p3.Optionals", "hw.p3.Optionals"),
    Case("scalars3.proto", "hw.p3.Maps", "hw.p3.Maps"),
    Case("scalars3.proto", "hw.p3.Oneofs", "hw.p3.Oneofs"),
    Case("scalars3.proto", "hw.p3.Tree", "hw.p3.Tree"),
    Case("scalars3.proto", "hw.p3.Inner", "hw.p3.Inner"),
    Case("scalars3.proto", "hw.p3.Everything", "hw.p3.Everything"),
    Case("proto2.proto", "hw.p2.Basic", "hw.p2.Basic"),
    Case("proto2.proto", "hw.p2.Node", "hw.p2.Node"),
    Case("imports.proto", "hw.app.Place", "hw.app.Place"),
    Case("imports.proto", "hw.common.Point", "hw.common.Point"),
    Case("evolution.proto", "hw.evo.RecordV2", "hw.evo.RecordV2"),
    Case("evolution.proto", "hw.evo.RecordV1", "hw.evo.RecordV2"),
    Case("evolution.proto", "hw.evo.OuterV1", "hw.evo.OuterV2"),
    Case("evolution2.proto", "hw.evo2.ClosedV1", "hw.evo2.ClosedV2"),
    Case("evolution2.proto", "hw.evo2.ClosedV2", "hw.evo2.ClosedV2"),
    Case("editions2023.proto", "hw.ed23.Explicit", "hw.ed23.Explicit"),
    Case("editions2023.proto", "hw.ed23.Leaf", "hw.ed23.Leaf"),
    Case("editions2023.proto", "hw.ed23.Delimited", "hw.ed23.Delimited"),
    Case("editions2024.proto", "hw.ed24.Implicit", "hw.ed24.Implicit"),
    Case("extensions2023.proto", "hw.ext.Base", "hw.ext.Base"),
    Case("extensions2023.proto", "hw.ext.Sub", "hw.ext.Sub"),
]


def case_by_id(case_id: str) -> Case:
    for c in CASES:
        if c.id == case_id:
            return c
    raise KeyError(case_id)


def _protoc() -> str:
    p = shutil.which("protoc")
    if not p:
        raise RuntimeError("protoc not found on PATH (Debian: apt-get install protobuf-compiler)")
    return p


def editions_protoc() -> list[str]:
    """The official compiler that ships in grpcio-tools (it knows editions 2023 and 2024)."""
    try:
        import grpc_tools.protoc  # noqa: F401
    except ImportError as e:
        raise RuntimeError("grpcio-tools missing: run scripts/setup.sh (requirements.txt pins it)") from e
    return [sys.executable, "-m", "grpc_tools.protoc"]


def _descriptor_set(protoc: list[str], files: list[str]) -> descriptor_pb2.FileDescriptorSet:
    with tempfile.TemporaryDirectory() as td:
        out = os.path.join(td, "all.pb")
        subprocess.run(
            [*protoc, "-I", SCHEMA_DIR, "--include_imports", f"--descriptor_set_out={out}", *files],
            check=True,
            cwd=SCHEMA_DIR,
        )
        fds = descriptor_pb2.FileDescriptorSet()
        with open(out, "rb") as f:
            fds.ParseFromString(f.read())
    return fds


def all_files() -> descriptor_pb2.FileDescriptorSet:
    """Every test schema and its imports, compiled by the official compilers."""
    out, seen = descriptor_pb2.FileDescriptorSet(), set()
    for protoc, files in ([_protoc()], SCHEMA_FILES), (editions_protoc(), EDITIONS_FILES):
        for fd in _descriptor_set(protoc, files).file:
            if fd.name not in seen:
                seen.add(fd.name)
                out.file.append(fd)
    return out


@functools.lru_cache(maxsize=None)
def pool() -> descriptor_pool.DescriptorPool:
    """One pool holding every test schema (and its imports). HEAPWIRE_DIFF_DESCRIPTOR_SET
    names a saved all_files() to load instead of compiling (the harness self-test's
    stand-in CLI starts once per message)."""
    saved = os.environ.get("HEAPWIRE_DIFF_DESCRIPTOR_SET")
    fds = descriptor_pb2.FileDescriptorSet()
    if saved:
        with open(saved, "rb") as f:
            fds.ParseFromString(f.read())
    else:
        fds = all_files()
    p = descriptor_pool.DescriptorPool()
    for fd in fds.file:
        p.Add(fd)
    return p


def descriptor(full_name: str):
    return pool().FindMessageTypeByName(full_name)


@functools.lru_cache(maxsize=None)
def message_class(full_name: str):
    return message_factory.GetMessageClass(descriptor(full_name))

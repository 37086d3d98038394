"""Running the heapwire CLI."""
from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass

from . import schemas

REPO = os.path.dirname(os.path.dirname(schemas.HERE))
TIMEOUT = float(os.environ.get("HEAPWIRE_DIFF_TIMEOUT", "20"))


def heapwire_bin() -> str:
    return os.environ.get("HEAPWIRE_BIN") or os.path.join(REPO, "target", "release", "heapwire")


def available() -> bool:
    b = heapwire_bin()
    return os.path.isfile(b) and os.access(b, os.X_OK)


@dataclass
class Result:
    rc: int | None  # None: timed out
    out: bytes
    err: bytes
    argv: list

    @property
    def crashed(self) -> bool:
        return self.rc is None or self.rc < 0 or self.rc not in (0, 1, 2)

    def describe(self) -> str:
        if self.rc is None:
            return f"TIMEOUT after {TIMEOUT}s"
        if self.rc < 0:
            return f"killed by signal {-self.rc}"
        return f"exit {self.rc}"

    @property
    def stderr_text(self) -> str:
        return self.err.decode("utf-8", "replace").strip()


def _common(case: schemas.Case, delimited: bool):
    args = ["--schema", case.schema_path, "-I", schemas.SCHEMA_DIR, "--type", case.reader]
    if delimited:
        args.append("--delimited")
    return args


def run(argv, data: bytes) -> Result:
    try:
        p = subprocess.run(argv, input=data, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=TIMEOUT)
        return Result(p.returncode, p.stdout, p.stderr, argv)
    except subprocess.TimeoutExpired as e:
        return Result(None, e.stdout or b"", e.stderr or b"", argv)


def decode_json(case: schemas.Case, data: bytes, delimited: bool = False) -> Result:
    return run([heapwire_bin(), "decode", *_common(case, delimited), "--json", "-"], data)


def encode_json(case: schemas.Case, text: bytes, delimited: bool = True) -> Result:
    return run([heapwire_bin(), "encode", *_common(case, delimited), "--from-json", "-"], text)


def decode_image(case: schemas.Case, data: bytes) -> Result:
    return run([heapwire_bin(), "decode", *_common(case, False), "-"], data)


def encode_image(case: schemas.Case, image: bytes) -> Result:
    return run([heapwire_bin(), "encode", *_common(case, False), "--from-image", "-"], image)


def shell_cmd(case: schemas.Case, hexfile: str = "input.bin") -> str:
    rel = os.path.relpath(case.schema_path, REPO)
    inc = os.path.relpath(schemas.SCHEMA_DIR, REPO)
    return f"target/release/heapwire decode --schema {rel} -I {inc} --type {case.reader} --json {hexfile}"


def varint(n: int) -> bytes:
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def delimit(msgs) -> bytes:
    return b"".join(varint(len(m)) + m for m in msgs)


def split_delimited(data: bytes):
    out, i = [], 0
    while i < len(data):
        n, shift = 0, 0
        while True:
            b = data[i]
            i += 1
            n |= (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                break
        out.append(data[i : i + n])
        i += n
    return out

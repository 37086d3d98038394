#!/usr/bin/env python3
"""A stand-in `heapwire` CLI backed by the official library, to self-test the harness.

    HEAPWIRE_BIN=tests/differential/tools/fake_heapwire.py HEAPWIRE_DIFF_CASES=5 \
        python3 -m pytest tests/differential -q

FAKE_HEAPWIRE_BUG=<name> injects a known bug so the harness must go red:
  float-precision  prints float fields with 17 significant digits
  accept-depth     accepts nesting deeper than 100 (ignores the official rejection)
  utf8             accepts invalid UTF-8 in proto3 strings
  print-unprintable  prints {} where the official printer refuses (a proto2 map key
                   that is not UTF-8)
  encode-order     encode writes the fields in descending number order (the message
                   parses back the same; only a byte comparison sees it)
  encode-unpacked  encode writes packed repeated fields unpacked (parses back the same)
scripts/test_differential.sh runs each against a slice of the suite (test_harness.py)
and requires it to be caught. `encode --from-image` is not faked (no image format).
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from google.protobuf import json_format  # noqa: E402
from google.protobuf.message import DecodeError  # noqa: E402

from hwdiff import mutate, runner, schemas  # noqa: E402

BUG = os.environ.get("FAKE_HEAPWIRE_BUG", "")


def encode_with_bugs(m) -> bytes:
    b = m.SerializePartialToString(deterministic=True)
    toks = mutate.fields(b)
    if BUG == "encode-order":
        return b"".join(b[t.start:t.end] for t in sorted(toks, key=lambda t: -t.num))
    if BUG == "encode-unpacked":
        out = bytearray()
        for t in toks:
            fd = m.DESCRIPTOR.fields_by_number.get(t.num)
            width = {fd.TYPE_DOUBLE: 8, fd.TYPE_FIXED64: 8, fd.TYPE_SFIXED64: 8, fd.TYPE_FLOAT: 4,
                     fd.TYPE_FIXED32: 4, fd.TYPE_SFIXED32: 4}.get(fd.type, 0) if fd else None
            if fd is None or t.wt != 2 or fd.type in (fd.TYPE_STRING, fd.TYPE_BYTES, fd.TYPE_MESSAGE, fd.TYPE_GROUP):
                out += b[t.start:t.end]
                continue
            i, wt = t.hdr_end, {0: 0, 4: 5, 8: 1}[width]
            while i < t.end:  # one record per element
                j = i + width if width else mutate.read_varint(b, i, t.end)[1]
                out += mutate.tag(t.num, wt) + b[i:j]
                i = j
        return bytes(out)
    return b


def main():
    ap = argparse.ArgumentParser(prog="heapwire")
    ap.add_argument("cmd", choices=["decode", "encode"])
    ap.add_argument("--schema", required=True)
    ap.add_argument("-I", action="append", default=[])
    ap.add_argument("--type", required=True)
    ap.add_argument("--delimited", action="store_true")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--from-json", action="store_true")
    ap.add_argument("input", nargs="?", default="-")
    a = ap.parse_intermixed_args()
    data = sys.stdin.buffer.read() if a.input == "-" else open(a.input, "rb").read()
    cls = schemas.message_class(a.type)
    if a.cmd == "encode":
        out = []
        for line in data.decode().splitlines():
            if not line.strip():
                continue
            m = cls()
            try:
                json_format.Parse(line, m, descriptor_pool=schemas.pool())
            except json_format.ParseError as e:
                print(f"error: json_value: {str(e).splitlines()[0]} at byte 0", file=sys.stderr)
                return 1
            out.append(encode_with_bugs(m))
        sys.stdout.buffer.write(runner.delimit(out) if a.delimited else b"".join(out))
        return 0
    msgs = runner.split_delimited(data) if a.delimited else [data]
    for b in msgs:
        m = cls()
        try:
            m.ParseFromString(b)
        except DecodeError:
            if BUG == "utf8" and b"\xff" in b:
                print("{}")
                continue
            if BUG == "accept-depth":
                print("{}")
                continue
            print("error: parse error at byte 0", file=sys.stderr)
            return 1
        try:
            d = json_format.MessageToDict(m)
        except json_format.SerializeToJsonError as e:
            if BUG == "print-unprintable":
                print("{}")
                continue
            print(f"error: invalid_utf8: {e} at byte 0", file=sys.stderr)
            return 1
        if BUG == "float-precision":
            for fd, v in m.ListFields():
                if fd.type == fd.TYPE_FLOAT and isinstance(v, float) and v == v and abs(v) != float("inf"):
                    d[fd.json_name] = float("%.17g" % v)
        print(json.dumps(d, ensure_ascii=False, separators=(",", ":")))
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""A stand-in `heapwire` CLI backed by the official library, to self-test the harness.

    HEAPWIRE_BIN=tests/differential/tools/fake_heapwire.py HEAPWIRE_DIFF_CASES=5 \
        python3 -m pytest tests/differential -q

FAKE_HEAPWIRE_BUG=<name> injects a known bug so the harness must go red:
  float-precision  prints float fields with 17 significant digits
  accept-depth     accepts nesting deeper than 100 (ignores the official rejection)
  utf8             accepts invalid UTF-8 in proto3 strings
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from google.protobuf import json_format  # noqa: E402
from google.protobuf.message import DecodeError  # noqa: E402

from hwdiff import runner, schemas  # noqa: E402

BUG = os.environ.get("FAKE_HEAPWIRE_BUG", "")


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
    if a.cmd == "encode" and os.environ.get("FAKE_HEAPWIRE_ENCODE", "") == "":
        # json_format.Parse rejects some of MessageToJson's own output (float32 max
        # printed as 3.4028235e+38), so by default the fake reports encode missing.
        print("heapwire: encode: not implemented", file=sys.stderr)
        return 2
    if a.cmd == "encode":
        out = []
        for line in data.decode().splitlines():
            m = cls()
            json_format.Parse(line, m)
            out.append(m.SerializeToString())
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
        d = json_format.MessageToDict(m)
        if BUG == "float-precision":
            for fd, v in m.ListFields():
                if fd.type == fd.TYPE_FLOAT and isinstance(v, float) and v == v and abs(v) != float("inf"):
                    d[fd.json_name] = float("%.17g" % v)
        print(json.dumps(d, ensure_ascii=False, separators=(",", ":")))
    return 0


if __name__ == "__main__":
    sys.exit(main())

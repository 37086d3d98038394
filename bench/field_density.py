#!/usr/bin/env python3
"""Bytes per field of generated workloads: how many fields a protobuf walk meets per byte
(docs/hardware.md "What the field loop can reach"). Every field at every level counts: a
sub-message's header is a field and so is each of its fields, a map entry is three (the
entry, its key and its value), a packed run is one. Messages are parsed with the official
library from the schemas gen_workloads.py loads (its load_pool).

Usage: python3 bench/field_density.py [--proto social.proto] [WORKLOAD_DIR]   (default
bench/out/quick: run bench/gen_workloads.py --out bench/out/quick --mb 0.5 first; --proto
keeps the workloads of one schema)
"""

import argparse
import json
import sys
from pathlib import Path

from google.protobuf.descriptor import FieldDescriptor as FD
from google.protobuf.internal.decoder import _DecodeVarint

from gen_workloads import load_pool, message_class   # the workloads' schemas, as generated

ROOT = Path(__file__).resolve().parents[1]


def fields(msg):
    """The fields a walk meets in msg, at every level."""
    n = 0
    for fd, v in msg.ListFields():
        vals = v if fd.is_repeated else [v]
        if fd.type == FD.TYPE_MESSAGE:
            if fd.message_type.GetOptions().map_entry:
                n += 3 * len(vals)
            else:
                n += sum(1 + fields(x) for x in vals)
        elif fd.is_repeated and fd.is_packed:
            n += 1
        else:
            n += len(vals)
    return n


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--proto", help="only the workloads of this schema (e.g. social.proto)")
    ap.add_argument("dir", nargs="?", default=str(ROOT / "bench" / "out" / "quick"))
    args = ap.parse_args()
    wdir = Path(args.dir)
    manifest = wdir / "manifest.json"
    if not manifest.exists():
        sys.exit(f"field_density: no {manifest} (bench/gen_workloads.py --out {wdir} --mb 0.5)")
    pool = load_pool()
    total_bytes = total_fields = 0
    files = [f for f in json.loads(manifest.read_text())["files"] if args.proto in (None, f["proto"])]
    if not files:
        sys.exit(f"field_density: no workload of {args.proto} in {manifest}")
    for f in files:
        cls = message_class(pool, f["type"])
        data = (wdir / f["file"]).read_bytes()
        pos = nbytes = nfields = count = 0
        while pos < len(data):
            ln, pos = _DecodeVarint(data, pos)
            nfields += fields(cls.FromString(data[pos:pos + ln]))
            nbytes += ln
            pos += ln
            count += 1
        print(f"{f['workload']:24} {count:6} messages {nbytes / nfields:6.2f} bytes/field")
        total_bytes += nbytes
        total_fields += nfields
    print(f"{'all':24} {'':6}          {total_bytes / total_fields:6.2f} bytes/field")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Resident memory of a streaming `heapwire decode --delimited` over a large input.

Builds an input of about --gb GB by repeating a delimited workload file, pipes it
through heapwire (images, or --json) to /dev/null, and reports the child's peak RSS.
The target (issue 2): <= 64 MB resident for 1 GB.

    python3 bench/stream_memory.py [--gb 1.0] [--json] [--workload FILE --schema S --type T]
"""
import argparse
import os
import resource
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gb", type=float, default=1.0)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--workload", default=os.path.join(ROOT, "bench/out/quick/social_store_post.bin"))
    ap.add_argument("--schema", default=os.path.join(ROOT, "bench/schemas/social.proto"))
    ap.add_argument("--type", default="heapwire.bench.social.StorePostRequest")
    ap.add_argument("--bin", default=os.path.join(ROOT, "target/release/heapwire"))
    a = ap.parse_args()
    chunk = open(a.workload, "rb").read()
    total = int(a.gb * 1e9)
    reps = max(1, total // len(chunk))
    cmd = [a.bin, "decode", "--schema", a.schema, "--type", a.type, "--delimited"] + (["--json"] if a.json else []) + ["-"]
    t0 = time.time()
    with open(os.devnull, "wb") as null:
        p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=null)
        for i in range(reps):
            p.stdin.write(chunk)
            if i % max(1, reps // 10) == 0:
                print(f"stream_memory: {i * len(chunk) / 1e9:.2f} GB fed", file=sys.stderr)
        p.stdin.close()
        rc = p.wait()
    dt = time.time() - t0
    rss_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(f"input: {reps * len(chunk) / 1e9:.2f} GB in {dt:.1f} s; exit {rc}; peak RSS {rss_mb:.1f} MB"
          f" ({'json' if a.json else 'images'})")
    sys.exit(0 if rc == 0 and rss_mb <= 64 else 1)


if __name__ == "__main__":
    main()

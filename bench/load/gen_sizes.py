#!/usr/bin/env python3
"""StorePost requests of chosen average sizes, for the end-to-end speed-up sweep.

For each target size N (bytes) writes DIR/N/social_store_post.bin: COUNT requests (fewer
for large N: at most ~4 MB of requests per size, at least 20) built
by bench/gen_workloads.py's StorePost builder, its text-length knob calibrated so the
average serialized size is N (within 5%; the achieved averages go to DIR/sizes.json).
StorePost's other fields take ~270 B, so N starts at about 400. Deterministic: the same seed gives the same bytes.

  python3 bench/load/gen_sizes.py --out bench/out/sizes --sizes 256,1024,4096 [--count 200]
"""

import argparse
import json
import os
import random
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import gen_workloads as gw  # noqa: E402

TYPE = "heapwire.bench.social.StorePostRequest"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--sizes", required=True, help="comma-separated average sizes in bytes")
    ap.add_argument("--count", type=int, default=200)
    ap.add_argument("--seed", type=int, default=20240601)
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",") if s]
    cls = gw.message_class(gw.load_pool(), TYPE)
    made = []
    for size in sizes:
        name = "store_post_%d" % size
        # The knob is the post text's length and the size grows with it one for one, so a
        # few corrections on the sample itself land it (gen_workloads' bisection on a
        # pilot is slow at 100 KB and a small sample strays).
        # Each knob draws different words, so the sample's average jumps a little: keep the
        # closest of a few tries.
        count = min(args.count, max(20, 4_000_000 // size))
        knob, best = float(size), None
        for _ in range(8):
            sample = gw.generate(cls, gw.build_store_post, random.Random("%s/%s" % (args.seed, name)), knob, count)
            sample_avg = sum(map(len, sample)) / len(sample)
            if best is None or abs(sample_avg - size) < abs(best[1] - size):
                best = (sample, sample_avg)
            if abs(sample_avg - size) / size < 0.01:
                break
            knob = max(8.0, knob + size - sample_avg)
        msgs, avg = best
        if abs(avg - size) / size > gw.TOLERANCE:
            sys.exit("gen_sizes: %d B: average %.1f B is off by more than 5%%" % (size, avg))
        d = os.path.join(args.out, str(size))
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "social_store_post.bin"), "wb") as f:
            for b in msgs:
                f.write(gw.encode_varint(len(b)))
                f.write(b)
        made.append({"target": size, "avg_size": round(avg, 1), "count": len(msgs), "dir": d})
        print("gen_sizes: %6d B target: avg %.1f B over %d requests" % (size, avg, len(msgs)), file=sys.stderr)
    with open(os.path.join(args.out, "sizes.json"), "w") as f:
        json.dump({"type": TYPE, "seed": args.seed, "sizes": made}, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()

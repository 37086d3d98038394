#!/usr/bin/env bash
# Instructions per decoded byte of heapwire builds, counted by valgrind's callgrind:
# repeatable where wall-clock figures are not (a shared, loaded machine). For each
# workload, each build runs `heapwire bench` with --reps 1 and with --reps 3 under
# callgrind; the difference over two passes is one pass's instructions, without the
# start-up, the schema compilation and the validating warm-up pass.
#
#   bench/count_instructions.sh [--only NAME,...] [WORKLOAD_DIR] BUILD...
#
# A BUILD is a heapwire binary, or `upb:BINARY:DESCRIPTOR_SET` for a upb baseline
# binary (bench/baselines/upb/build.sh prints both), counted the same way.
# WORKLOAD_DIR defaults to bench/out/quick (bench/run.sh --quick, or gen_workloads.py
# --mb 0.5). Prints instructions per payload byte per build and each build's ratio to
# the first. Takes about 10 s per workload and build on 0.5 MB files.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
only=""
if [ "${1:-}" = "--only" ]; then only="$2"; shift 2; fi
dir="bench/out/quick"
if [ -d "${1:-}" ]; then dir="$1"; shift; fi
(($#)) || { echo "usage: count_instructions.sh [--only NAME,...] [WORKLOAD_DIR] HEAPWIRE..." >&2; exit 2; }
command -v valgrind >/dev/null || { echo "count_instructions: valgrind not found (apt-get install valgrind)" >&2; exit 2; }
[ -f "$dir/manifest.json" ] || { echo "count_instructions: no $dir/manifest.json" >&2; exit 2; }
python3 - "$dir" "$only" "$@" <<'PY'
import json, os, re, subprocess, sys, tempfile
d, only, builds = sys.argv[1], set(filter(None, sys.argv[2].split(","))), sys.argv[3:]
man = json.load(open(os.path.join(d, "manifest.json")))

def command(build, f, reps):
    if build.startswith("upb:"):
        _, binary, fds = build.split(":", 2)
        return [binary, "--descriptor-set", fds, "--type", f["type"], "--reps", str(reps), os.path.join(d, f["file"])]
    return [build, "bench", "--schema", "bench/schemas/" + f["proto"], "-I", "bench/schemas", "--type", f["type"],
            "--delimited", "--reps", str(reps), os.path.join(d, f["file"])]

def instructions(binary, f, reps):
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "cg.out")
        r = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=" + out] + command(binary, f, reps),
                           capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit(f"count_instructions: {binary} failed on {f['file']}:\n{r.stderr[-2000:]}")
        m = re.search(r"^summary: (\d+)", open(out).read(), re.M)
        return int(m.group(1))

def label(b):
    path = b.split(":")[1] if b.startswith("upb:") else b
    return os.path.basename(os.path.dirname(path)) + "/" + os.path.basename(path)

head = f"{'workload':22}" + "".join(f" {label(b):>22}" for b in builds)
print("instructions per payload byte (callgrind, one pass)")
print(head + ("  ratio to the first" if len(builds) > 1 else ""))
for f in man["files"]:
    if only and f["workload"] not in only:
        continue
    per = []
    for b in builds:
        one, three = instructions(b, f, 1), instructions(b, f, 3)
        per.append((three - one) / 2 / f["payload_bytes"])
    ratios = "  " + " ".join(f"{p / per[0]:.3f}" for p in per[1:]) if len(builds) > 1 else ""
    print(f"{f['workload']:22}" + "".join(f" {p:22.2f}" for p in per) + ratios, flush=True)
PY

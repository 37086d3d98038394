#!/usr/bin/env bash
# Two heapwire builds on the same workloads, interleaved: has a change made decoding
# slower? (Issue 14's "no slowdown beyond noise" check, and any later one like it.)
#
#   bench/compare_builds.sh [--clock cpu|wall] OLD_HEAPWIRE NEW_HEAPWIRE [ROUNDS] [WORKLOAD_DIR]
#
# OLD/NEW are `heapwire` binaries (e.g. one built in a `git worktree` of the old commit).
# For each workload of WORKLOAD_DIR/manifest.json (default bench/out/quick, made by
# bench/run.sh --quick), runs `heapwire bench --reps 9` ROUNDS times (default 5) for each
# build, alternating old/new so drift hits both; prints the median MB/s of each and
# new/old. Single-threaded; on a noisy machine read ratios within a few percent as noise.
# --clock: what `heapwire bench` times its passes with (cpu, the default: the thread's CPU
# time, so time spent waiting for a core on a shared machine is not counted; or wall).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
clock=cpu
if [ "${1:-}" = --clock ]; then clock="${2:?--clock needs cpu or wall}"; shift 2; fi
case "$clock" in cpu|wall) ;; *) echo "compare_builds: --clock: '$clock' is neither cpu nor wall" >&2; exit 2 ;; esac
old="${1:?usage: compare_builds.sh OLD NEW [ROUNDS] [DIR]}"
new="${2:?usage: compare_builds.sh OLD NEW [ROUNDS] [DIR]}"
rounds="${3:-5}"
dir="${4:-bench/out/quick}"
[ -f "$dir/manifest.json" ] || { echo "compare_builds: no $dir/manifest.json (run bench/run.sh --quick first)" >&2; exit 2; }
python3 - "$old" "$new" "$rounds" "$dir" "$clock" <<'PY'
import json, statistics, subprocess, sys
old, new, rounds, d, clock = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
man = json.load(open(f"{d}/manifest.json"))
# Builds from before `bench --clock` time with the wall clock and take no flag.
has_clock = {b: "--clock" in subprocess.run([b, "bench", "--help"], capture_output=True, text=True).stdout for b in (old, new)}
for b, ok in has_clock.items():
    if not ok and clock == "cpu":
        sys.exit(f"compare_builds: {b} has no `bench --clock` (built before it): compare with --clock wall")
def mbps(binary, f):
    out = subprocess.run([binary, "bench", "--schema", f"bench/schemas/{f['proto']}", "-I", "bench/schemas",
                          "--type", f["type"], "--delimited", "--reps", "9",
                          *(["--clock", clock] if has_clock[binary] else []), f"{d}/{f['file']}"],
                         capture_output=True, text=True, check=True).stdout
    return float(out.strip().splitlines()[-1].split()[1])
print(f"{'workload':24} {'old MB/s':>10} {'new MB/s':>10} {'new/old':>8}   ({clock} clock)")
ratios = []
for f in man["files"]:
    o, n = [], []
    for r in range(rounds):
        o.append(mbps(old, f)); n.append(mbps(new, f))
        print(f"\r{f['workload']}: round {r + 1}/{rounds}", end="", file=sys.stderr)
    print("", file=sys.stderr)
    mo, mn = statistics.median(o), statistics.median(n)
    ratios.append(mn / mo)
    print(f"{f['workload']:24} {mo:10.1f} {mn:10.1f} {mn / mo:8.3f}")
print(f"{'geometric mean':24} {'':10} {'':10} {statistics.geometric_mean(ratios):8.3f}")
PY

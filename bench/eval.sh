#!/usr/bin/env bash
# heapwire's service measurements (issue 16), run by hand, not in CI: heapwire inline,
# heapwire with the offload pool, and the tonic+prost baseline, each a fresh
# social_service per trial, driven open-loop by social_load.
#
#   bench/eval.sh [--quick] [--only capacity,cdf,cpu,sizes] [--modes heapwire-inline,heapwire-pool,prost]
#                 [--trial S] [--cdf-duration S] [--sweep-duration S] [--p99-bound-ms MS] [...]
#
#   (default)  5 s bisection trials (NetThreads), 10 s CDF and CPU runs, 4 s per size
#              point: about 10-15 minutes on a 2-core machine
#   --quick    2 s trials, 4 s CDF/CPU runs, 2 s size points, 10% bisection precision,
#              five sizes: about 4-6 minutes
#   Other flags go to bench/load/eval.py (see its --help), e.g. --only cdf,cpu reuses the
#   capacities of the previous run.
#
# Measures: zero-drop capacity by bisection (highest offered rate at which, for a whole
# trial, every request is answered OK within the timeout and p99 latency from the
# scheduled send time stays under the bound); latency CDFs at 50% and 90% of each
# mode's capacity; application-core CPU time per request (the service's --stats-out:
# per-thread CPU clocks) at one common rate; and, for the pool and the device
# (`--mode device`, inproc:cpu) against inline, latency and application CPU against
# StorePost size (the MSR paper's Fig. 19-20 shape). --modes heapwire-device adds the
# device to the other parts too.
# Writes bench/out/eval/results.{md,json} and docs/figures/service_*.png.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
source scripts/env.sh

quick=0; pass=()
while (($#)); do
  case "$1" in
    --quick) quick=1 ;;
    -h|--help) sed -n '2,24p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) pass+=("$1") ;;
  esac
  shift
done
say() { echo "eval: $*" >&2; }

if ((quick)); then
  sizes=512,2048,8192,32768,131072
  preset=(--trial 2 --cdf-duration 4 --sweep-duration 2 --precision 0.1)
else
  sizes=512,1024,2048,4096,8192,16384,32768,65536,131072
  preset=()
fi

source bench/load/prepare.sh
sizes_dir="$root/bench/out/sizes"
if [ "$(python3 -c 'import json,sys; print(",".join(str(s["target"]) for s in json.load(open(sys.argv[1]))["sizes"]))' "$sizes_dir/sizes.json" 2>/dev/null)" != "$sizes" ]; then
  say "generating StorePost requests of $sizes bytes into bench/out/sizes"
  rm -rf "$sizes_dir"
  python3 bench/load/gen_sizes.py --out "$sizes_dir" --sizes "$sizes" --count 200
fi

say "load average now: $(cut -d' ' -f1-3 /proc/loadavg) (the figures are only as quiet as the machine)"
python3 bench/load/eval.py --service "$load_bin/social_service" --load "$load_bin/social_load" \
  --corpus "$social_corpus" --sizes-dir "$sizes_dir" --out "$root/bench/out/eval" --figures "$root/docs/figures" \
  "${preset[@]}" "${pass[@]}"

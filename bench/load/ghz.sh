#!/usr/bin/env bash
# Cross-checks social_load against ghz, a gRPC load tool users know: the same
# social_service, the same rate, the same single ComposePost request, one tool after
# the other; prints both tools' throughput and p50/p90/p99 side by side (and writes
# bench/out/ghz/crosscheck.{md,json}).
#
#   bench/load/ghz.sh [--rate R] [--duration 10s] [--codec heapwire|prost] [--mode inline|pool]
#
# ghz is installed on first use with `go install` (pinned below) into target/tools/go/bin.
# ghz measures each request from when one of its workers sends it (-c workers at a
# constant --rps); social_load from the request's scheduled time. Below capacity the two
# should agree; near capacity social_load's figures include queueing ghz leaves out.
set -euo pipefail
cd "$(dirname "$0")/../.."
root="$PWD"
GHZ_VERSION=v0.121.0

rate=1000; duration=10s; codec=heapwire; mode=inline
while (($#)); do
  case "$1" in
    --rate) rate="$2"; shift ;;
    --duration) duration="$2"; shift ;;
    --codec) codec="$2"; shift ;;
    --mode) mode="$2"; shift ;;
    -h|--help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "ghz.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done
say() { echo "ghz.sh: $*" >&2; }

tools="$root/target/tools/go/bin"
ghz="$tools/ghz"
if [ ! -x "$ghz" ] || ! "$ghz" --version 2>/dev/null | grep -qx "${GHZ_VERSION#v}"; then
  go=$(command -v go || echo /usr/local/go/bin/go)
  [ -x "$go" ] || { say "go is not installed (needed once to build ghz $GHZ_VERSION)"; exit 1; }
  say "installing ghz $GHZ_VERSION with go install (a few minutes, once)"
  mkdir -p "$tools"
  GOBIN="$tools" "$go" install "github.com/bojand/ghz/cmd/ghz@$GHZ_VERSION"
fi

source scripts/env.sh
source bench/load/prepare.sh
target="$load_bin"
corpus="$social_corpus"
out="$root/bench/out/ghz"
mkdir -p "$out"
# The first ComposePost request of the corpus, bare, for ghz -B; social_load sends the same one.
python3 - "$corpus/social_compose_post.bin" "$out/compose_post.bin" <<'PY'
import sys
data = open(sys.argv[1], "rb").read()
n = shift = pos = 0
while True:
    b = data[pos]; pos += 1
    n |= (b & 0x7F) << shift; shift += 7
    if b < 0x80:
        break
open(sys.argv[2], "wb").write(data[pos:pos + n])
PY

svc_out="$out/service.out"
"$target/social_service" --listen 127.0.0.1:0 --codec "$codec" --mode "$mode" >"$svc_out" 2>"$out/service.err" &
svc=$!
trap 'kill "$svc" 2>/dev/null || true; wait "$svc" 2>/dev/null || true' EXIT
for _ in $(seq 200); do grep -q '^listening on' "$svc_out" && break; sleep 0.05; done
addr=$(sed -n 's/^listening on //p' "$svc_out")
[ -n "$addr" ] || { say "social_service did not start:"; cat "$out/service.err" >&2; exit 1; }
say "social_service --codec $codec --mode $mode on $addr"

say "social_load: $rate req/s for $duration"
"$target/social_load" --target "$addr" --rate "$rate" --duration "$duration" --timeout 1s \
  --connections 2 --mix compose_post=1 --max-per-rpc 1 --corpus "$corpus" --quiet \
  --json "$out/social_load.json" >&2
say "ghz $GHZ_VERSION: $rate req/s for $duration"
"$ghz" --insecure --proto examples/social_service/proto/social_service.proto -i bench/schemas \
  --call heapwire.social.v1.Social.ComposePost -B "$out/compose_post.bin" \
  --rps "$rate" -z "$duration" --duration-stop wait -c 50 --connections 2 -t 1s \
  --format json -o "$out/ghz.json" "$addr"

python3 - "$out" "$rate" "$duration" "$codec" "$mode" "$GHZ_VERSION" <<'PY'
import json, os, sys
out, rate, duration, codec, mode, ghz_version = sys.argv[1:]
ours = json.load(open(os.path.join(out, "social_load.json")))
g = json.load(open(os.path.join(out, "ghz.json")))
dist = {d["percentage"]: d["latency"] / 1e6 for d in g.get("latencyDistribution") or []}
statuses = g.get("statusCodeDistribution") or {}
ok_g = statuses.get("OK", 0)
rows = [
    ("social_load", ours["throughput_ok_per_s"], ours["latency_us"]["p50"] / 1e3,
     ours["latency_us"]["p90"] / 1e3, ours["latency_us"]["p99"] / 1e3, ours["ok"], ours["sent"] - ours["ok"]),
    ("ghz " + ghz_version, ok_g / (g["total"] / 1e9), dist.get(50), dist.get(90), dist.get(99),
     ok_g, g["count"] - ok_g),
]
fmt = lambda v: "-" if v is None else f"{v:.3f}"
md = [f"ComposePost (one {os.path.getsize(os.path.join(out, 'compose_post.bin'))} B request), "
      f"{rate} req/s offered for {duration}, social_service --codec {codec} --mode {mode}",
      "", "| tool | ok/s | p50 ms | p90 ms | p99 ms | ok | not ok |", "|---|---:|---:|---:|---:|---:|---:|"]
for name, tput, p50, p90, p99, ok, bad in rows:
    md.append(f"| {name} | {tput:.1f} | {fmt(p50)} | {fmt(p90)} | {fmt(p99)} | {ok} | {bad} |")
text = "\n".join(md) + "\n"
open(os.path.join(out, "crosscheck.md"), "w").write(text)
json.dump({"rate": float(rate), "duration": duration, "codec": codec, "mode": mode,
           "social_load": ours, "ghz": g}, open(os.path.join(out, "crosscheck.json"), "w"), indent=1)
print(text, end="")
PY

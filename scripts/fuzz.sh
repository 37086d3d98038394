#!/usr/bin/env bash
# Bounded fuzzing of the decoder, encoder round trip, schema compiler and link frames (cargo-fuzz,
# nightly toolchain). Crashers land in fuzz/artifacts/<target>/; copy each into
# fuzz/regressions/<target>/ (beside hand-picked seeds kept there) — cargo test replays every
# such folder through the target's check forever after (crates/cli/tests/fuzz_regressions.rs).
#   scripts/fuzz.sh [--seconds N] [TARGET...]
set -euo pipefail
cd "$(dirname "$0")/.."
secs=30
targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) secs="$2"; shift ;;
    -h|--help) sed -n '2,6p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) targets+=("$1") ;;
  esac
  shift
done
[ ${#targets[@]} -eq 0 ] && targets=(decode_protobuf roundtrip objgraph_decode schema_table schema_proto link_frame device_ops)
if ! cargo +nightly fuzz --version >/dev/null 2>&1; then
  echo "fuzz.sh: cargo-fuzz or the nightly toolchain is missing (scripts/setup.sh installs them)" >&2
  exit 1
fi
status=0
for t in "${targets[@]}"; do
  mkdir -p "fuzz/corpus/$t"
  seeds=()
  [ -d "fuzz/regressions/$t" ] && seeds+=("regressions/$t")
  echo "fuzz: $t for ${secs}s" >&2
  if ! (cd fuzz && cargo +nightly fuzz run "$t" "corpus/$t" ${seeds[@]+"${seeds[@]}"} -- \
        -max_total_time="$secs" -rss_limit_mb=2048 -timeout=10 -print_final_stats=0 2>&1 | tail -n 3); then
    echo "fuzz: $t FOUND A CRASH: see fuzz/artifacts/$t" >&2
    status=1
  fi
done
exit $status

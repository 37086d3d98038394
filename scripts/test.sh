#!/usr/bin/env bash
# Runs every heapwire test suite; exits non-zero if any fails.
#   Rust unit, property and integration tests (incl. the C header compiled by gcc),
#   the differential suite against the official protobuf library, the RTL cocotb
#   testbenches and Verilator lint, the bench generator tests, the expression-tree
#   example, and a bounded fuzz run.
# Installs what is missing first (scripts/setup.sh is idempotent).
set -uo pipefail
cd "$(dirname "$0")/.."

# On CI (a clean clone, everything compiled once) most of the Rust work is compiling and
# linking some 60 test binaries; the release profile's thin LTO and debug info (kept for
# benchmarks and profiles) are turned off there. Same code and optimisation level; set
# locally too, these would make cargo rebuild what benchmarks built.
if [ -n "${CI:-}" ]; then
  export CARGO_PROFILE_RELEASE_LTO=false CARGO_PROFILE_RELEASE_DEBUG=0
fi

bash scripts/setup.sh || exit 1
source scripts/env.sh

fail=0
step() {
  echo "=== $1" >&2
  shift
  local t0=$SECONDS
  if ! "$@"; then
    echo "=== FAILED: $* ($((SECONDS - t0)) s)" >&2
    fail=1
  else
    echo "=== passed in $((SECONDS - t0)) s" >&2
  fi
}

# CI's budget is 30 minutes on a 2-core machine; the simulations take most of it.
# The Icarus expression-tree sweep of the objgraph system test to n = 64 (its default is
# 127; crates/sim's Verilator device test sweeps 1..=127 and beyond on every run).
export HEAPWIRE_OG_MAXN="${HEAPWIRE_OG_MAXN:-64}"
# The same budget for the protobuf core's simulations: 24 random cases per schema set in
# crates/sim's system test (its default, run alone, is 40) and half the random messages in
# the core's cocotb testbench (HW_TB_THOROUGH=1 runs five times its default instead).
export HEAPWIRE_RTL_CASES="${HEAPWIRE_RTL_CASES:-24}" HW_TB_QUICK="${HW_TB_QUICK:-1}"

# The nginx scale-out test (bench/load) runs the social_service binary of another package.
step "build social_service for the scale-out test" cargo build --release -q -p heapwire-social-service
step "rust tests" cargo test --release --workspace -q

# Each fuzzer keeps one core busy and ends after its bounded time, so the fuzz run goes
# beside the remaining suites (its output is printed when it ends); the Icarus testbenches
# run one pytest worker per core (scripts/test_rtl.sh) and take the core back when it ends.
fuzz_log=$(mktemp)
fuzz_t0=$SECONDS
bash scripts/fuzz.sh --seconds "${HEAPWIRE_FUZZ_SECONDS:-20}" >"$fuzz_log" 2>&1 &
fuzz_pid=$!

# (one pytest worker per core: the official library's side is single-threaded Python)
step "differential suite vs the official protobuf library" bash scripts/test_differential.sh -n auto
step "rtl lint and cocotb testbenches" bash scripts/test_rtl.sh
step "bench workload generator" python3 -m pytest -q bench/tests
step "synthesis path estimate (scripts/timing_paths.py)" python3 -m pytest -q scripts/tests
step "expression tree example (objgraph with live C++ objects)" examples/expression_tree/run

echo "=== fuzzing (bounded; ran beside the suites above)" >&2
if wait "$fuzz_pid"; then
  cat "$fuzz_log" >&2
  echo "=== passed in $((SECONDS - fuzz_t0)) s" >&2
else
  cat "$fuzz_log" >&2
  echo "=== FAILED: scripts/fuzz.sh ($((SECONDS - fuzz_t0)) s)" >&2
  fail=1
fi
rm -f "$fuzz_log"

if [ "$fail" -ne 0 ]; then
  echo "heapwire tests: FAILED" >&2
  exit 1
fi
echo "heapwire tests: all suites passed" >&2

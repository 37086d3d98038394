#!/usr/bin/env bash
# Lint and test the hand-written RTL building blocks in rtl/.
#   1. verilator --lint-only -Wall on every rtl/*.v, for each parameter set in LINT_PARAMS
#      (must be warning-free);
#   2. python3 -m pytest -q rtl/tb  (cocotb 2.x testbenches on Icarus Verilog).
# Exits non-zero on any failure. Extra arguments are passed to pytest.
# HW_TB_SEED=<n> changes the seed of the randomized tests (default 12345).
set -euo pipefail
cd "$(dirname "$0")/.."

# Parameter sets to lint per module (the default set is always linted).
declare -A LINT_PARAMS=(
  [hw_stream_reader]="-GDATA_WIDTH=32 -GDATA_WIDTH=128|-GDATA_WIDTH=32:-GWIN_BYTES=12"
  [hw_zigzag]="-GWIDTH=32"
  [hw_varint_decoder]="-GAVAIL_WIDTH=4"
)

fail=0
shopt -s nullglob
files=(rtl/*.v)
if ((${#files[@]} == 0)); then
  echo "test_rtl: no rtl/*.v files" >&2
  exit 1
fi
for f in "${files[@]}"; do
  top=$(basename "$f" .v)
  sets=("")
  if [[ -n "${LINT_PARAMS[$top]:-}" ]]; then
    # entries separated by spaces or '|'; ':' joins several -G options into one set
    IFS=' |' read -r -a extra <<<"${LINT_PARAMS[$top]}"
    for e in "${extra[@]}"; do sets+=("${e//:/ }"); done
  fi
  for s in "${sets[@]}"; do
    # shellcheck disable=SC2086
    if ! verilator --lint-only -Wall --top-module "$top" $s "$f"; then
      echo "test_rtl: lint FAILED: $f $s" >&2
      fail=1
    fi
  done
done
((fail == 0)) && echo "test_rtl: lint clean (${#files[@]} files)"

if ! python3 -m pytest -q rtl/tb "$@"; then
  fail=1
fi
exit "$fail"

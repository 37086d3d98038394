#!/usr/bin/env bash
# The device's measurements on loopback (issue 15; BENCHMARKS.md, "The device"):
# round-trip CDFs against plain UDP/TCP echo floors, median round trip against requests in
# flight with the least-squares slope, throughput of large inputs, slot reload time and
# MB/s. Tables on stdout (also bench/out/device/report.md), CSVs in bench/out/device/,
# PNGs in docs/figures/.
#
#   bash bench/device/run.sh            # about a minute after the build
#   bash bench/device/run.sh --quick    # a fifth of the samples
#   bash bench/device/run.sh --only rtt|inflight|throughput|reload
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/env.sh
out=bench/out/device
mkdir -p "$out"
cargo build --release -q -p heapwire-device --examples
target/release/examples/device_bench --out "$out" "$@" | tee "$out/report.md"
python3 bench/device/plot.py "$out" docs/figures

#!/usr/bin/env bash
# The device's measurements on loopback (issue 15; BENCHMARKS.md, "The device"):
# round-trip CDFs against plain UDP/TCP echo floors, median round trip against requests in
# flight with the least-squares slope, throughput of large inputs, slot reload time and
# MB/s. Tables on stdout (also bench/out/device/report.md), CSVs in bench/out/device/,
# PNGs in docs/figures/.
#
# The measured process (client, device server, echo servers: all its threads) is pinned to
# one core with taskset: on the project's 2-vCPU VM a wake-up that crosses to the other
# vCPU costs ~35-40 µs now and then, which makes every loopback round trip bimodal and
# medians of 3 µs and 40 µs alternate from run to run. The round-trip CDFs are measured a
# second time unpinned (bench/out/device/unpinned, device_rtt_cdf_unpinned.png) to show it.
#
#   bash bench/device/run.sh            # about a minute after the build
#   bash bench/device/run.sh --quick    # a fifth of the samples
#   bash bench/device/run.sh --only rtt|inflight|throughput|reload
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/env.sh
out=bench/out/device
mkdir -p "$out/unpinned"
cargo build --release -q -p heapwire-device --examples
bin=target/release/examples/device_bench
pin=()
if command -v taskset >/dev/null; then
  pin=(taskset -c "$(($(nproc) - 1))")
fi
"${pin[@]}" "$bin" --out "$out" "$@" | tee "$out/report.md"
case " $* " in
  *" --only "*) ;;
  *)
    echo
    echo "# unpinned (threads free to use both cores)"
    "$bin" --only rtt --out "$out/unpinned" "$@" | tee "$out/unpinned/report.md"
    ;;
esac
python3 bench/device/plot.py "$out" docs/figures

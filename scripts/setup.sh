#!/usr/bin/env bash
# Installs everything heapwire needs on a fresh Debian machine of the project's kind:
# system packages (HDL simulators and synthesis, protobuf C++ and clang for the baselines),
# Python packages (oracle, cocotb, plots; pinned, in the virtual environment .venv that
# scripts/env.sh puts first on PATH) and builds the Rust workspace.
# Idempotent: re-running only installs what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

# clang: the fasttable build of the upb baseline (bench/baselines/upb).
# nginx: the gRPC load balancer of the scale-out test (bench/load/tests/scaleout_nginx.rs runs its own
# instance from a temporary prefix; the system service is not used).
# valgrind, linux-perf: profiles and instruction counts of the decoders (bench/count_instructions.sh,
# crates/cpu/examples/objgraph_profile.rs, BENCHMARKS.md), run by hand.
APT_PKGS=(iverilog yosys verilator nextpnr-ice40 fpga-icestorm protobuf-compiler libprotobuf-dev pkg-config hyperfine nginx clang valgrind linux-perf)
missing=()
for p in "${APT_PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing system packages: ${missing[*]}" >&2
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# The project's own Python: a virtual environment with the pinned requirements, re-made
# only when requirements.txt changes.
if [ ! -x .venv/bin/python3 ]; then
  python3 -m venv .venv || { echo "setup: python3 -m venv failed (Debian: apt-get install python3-venv)" >&2; exit 1; }
fi
if ! cmp -s requirements.txt .venv/requirements.installed; then
  echo "setup: installing the pinned Python packages into .venv" >&2
  .venv/bin/python3 -m pip install -q --disable-pip-version-check -r requirements.txt
  cp requirements.txt .venv/requirements.installed
fi

# cargo-fuzz runs on the nightly toolchain (bounded fuzzing in scripts/fuzz.sh).
rustup toolchain list | grep -q '^nightly' || rustup toolchain install nightly --profile minimal
command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked -q

if [ -f Cargo.toml ]; then
  cargo build --release -q -p heapwire-cli
fi
echo "setup: done" >&2

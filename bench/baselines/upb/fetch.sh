#!/usr/bin/env bash
# Fetches the sources of upb the way a fresh machine can: the official `protobuf`
# crate (4.x) on crates.io vendors upb's amalgamation (libupb/upb/upb.{c,h}, with
# reflection, the def pool and the fasttable parser) and utf8_range. A throwaway
# manifest that depends on the pinned crate plus `cargo fetch` puts it in cargo's
# registry cache; nothing is copied into the repository.
#
#   bench/baselines/upb/fetch.sh WORK_DIR
# Prints the path of the crate's libupb directory on stdout.
#
# Why 4.31.1: it is the newest release whose amalgamation contains the fasttable
# parser itself. From 4.32 on, upb builds fasttables at run time but the crate's
# upb.c no longer carries the parser functions (wire/decode_fast/ is left out), so
# UPB_ENABLE_FASTTABLE cannot link.
set -euo pipefail
UPB_CRATE_VERSION="4.31.1-release"
work="${1:?usage: fetch.sh WORK_DIR}"
mkdir -p "$work/src"
cat > "$work/Cargo.toml" <<TOML
[package]
name = "heapwire-upb-fetch"
version = "0.0.0"
edition = "2021"
publish = false

[dependencies]
protobuf = "=$UPB_CRATE_VERSION"

[workspace]
TOML
[ -f "$work/src/lib.rs" ] || : > "$work/src/lib.rs"
cargo fetch -q --manifest-path "$work/Cargo.toml" >&2
crate_dir="$(cargo metadata -q --format-version 1 --manifest-path "$work/Cargo.toml" |
  python3 -c 'import json,sys,os
m=json.load(sys.stdin)
p=[p for p in m["packages"] if p["name"]=="protobuf"][0]
print(os.path.dirname(p["manifest_path"]))')"
lib="$crate_dir/libupb"
[ -f "$lib/upb/upb.c" ] || { echo "fetch.sh: $lib/upb/upb.c missing" >&2; exit 1; }
echo "$lib"

#!/usr/bin/env bash
# Builds the upb baseline twice from the amalgamation the official `protobuf` crate
# vendors (fetched by fetch.sh through cargo): `default` with gcc -O2 (no fasttable,
# upb's portable build) and `fasttable` with clang -O2 -DUPB_ENABLE_FASTTABLE
# (tail-call dispatch needs clang's musttail). Also writes the bench schemas'
# descriptor set (protoc --include_imports) the harness loads into upb's def pool.
#
#   bench/baselines/upb/build.sh [BUILD_DIR]     (default: bench/out/build/upb)
# Prints three paths on stdout, one a line: the default binary, the fasttable
# binary (or the word "none" when no suitable clang is found), the descriptor set.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
schemas="$root/bench/schemas"
build="${1:-$root/bench/out/build/upb}"
mkdir -p "$build"
command -v protoc >/dev/null || { echo "upb/build.sh: protoc not found (apt-get install protobuf-compiler)" >&2; exit 2; }

lib="$("$here/fetch.sh" "$build/fetch")"
fds="$build/bench_schemas.pb"
protoc -I "$schemas" --include_imports --descriptor_set_out="$fds" \
  social.proto google_message1.proto google_message2.proto every_kind.proto

clang_bin=""
for c in clang clang-19 clang-18 clang-17 clang-16 clang-15 clang-14 clang-13; do
  command -v "$c" >/dev/null && { clang_bin="$c"; break; }
done

srcs=("$here/upb_bench.c" "$lib/upb/upb.c" "$lib/third_party/utf8_range/utf8_range.c")
flags=(-O2 -DNDEBUG -std=gnu99 -w -I "$lib" -I "$lib/third_party/utf8_range")
want="$(cat "$here/upb_bench.c" "$0" | sha256sum | cut -c1-16) $lib $(gcc -dumpfullversion) ${clang_bin:+$($clang_bin --version | head -1)}"
if [ ! -f "$build/stamp" ] || [ "$(cat "$build/stamp")" != "$want" ]; then
  rm -f "$build/upb_bench_default" "$build/upb_bench_fasttable"
  gcc "${flags[@]}" "${srcs[@]}" -o "$build/upb_bench_default"
  if [ -n "$clang_bin" ]; then
    "$clang_bin" "${flags[@]}" -DUPB_ENABLE_FASTTABLE "${srcs[@]}" -o "$build/upb_bench_fasttable"
  else
    echo "upb/build.sh: no clang found (apt-get install clang): no fasttable build" >&2
  fi
  echo "$want" > "$build/stamp"
fi
echo "$build/upb_bench_default"
if [ -x "$build/upb_bench_fasttable" ]; then echo "$build/upb_bench_fasttable"; else echo none; fi
echo "$fds"

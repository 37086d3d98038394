#!/usr/bin/env bash
# Differential suite: heapwire vs the official protobuf library.
#   scripts/test_differential.sh [--thorough] [pytest args...]
# Env: HEAPWIRE_BIN (binary to test), HEAPWIRE_DIFF_CASES, HEAPWIRE_DIFF_SEED,
#      HEAPWIRE_DIFF_MUTANTS_PER_MESSAGE, HEAPWIRE_DIFF_JOBS.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh

command -v protoc >/dev/null || { echo "protoc missing (apt-get install protobuf-compiler)" >&2; exit 2; }
python3 -c 'import google.protobuf, pytest' 2>/dev/null || { echo "the official protobuf package or pytest is missing: run scripts/setup.sh (it makes .venv)" >&2; exit 2; }
# The oracle is the release requirements.txt pins, from .venv, nothing else.
want=$(sed -n 's/^protobuf==//p' requirements.txt)
have=$(python3 -c 'import google.protobuf; print(google.protobuf.__version__)')
[[ "$have" == "$want" ]] || { echo "python3 ($(command -v python3)) has protobuf $have, requirements.txt pins $want: run scripts/setup.sh" >&2; exit 2; }

if [[ -z "${HEAPWIRE_BIN:-}" ]]; then
  cargo build --release -p heapwire-cli
fi

exec python3 -m pytest tests/differential -q -p no:cacheprovider "$@"

# Sourced by bench/eval.sh and bench/load/ghz.sh from the repository root, after
# scripts/env.sh: builds social_service and social_load (release) and makes the social
# request corpus if it is missing. Sets $load_bin (the directory of both binaries) and
# $social_corpus (the directory of the social_<rpc>.bin streams).
echo "prepare: building social_service and social_load (release)" >&2
cargo build --release -q -p heapwire-social-service -p heapwire-load
load_bin="${CARGO_TARGET_DIR:-$PWD/target}/release"
social_corpus="$PWD/bench/out/quick"
if ! ls "$social_corpus"/social_{compose_post,store_post,compose_media,register_user,login}.bin >/dev/null 2>&1; then
  echo "prepare: generating the social request corpus into bench/out/quick" >&2
  python3 bench/gen_workloads.py --out "$social_corpus" --mb 0.5 \
    --only social_compose_post,social_store_post,social_compose_media,social_register_user,social_login >&2
fi

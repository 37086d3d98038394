//! The social-network workloads `bench/gen_workloads.py` writes (`bench/run.sh --quick`
//! writes them to `bench/out/quick`): each file a delimited stream of one message type of
//! `bench/schemas/social.proto`. The hardware system test and figures read them.

/// The quick workloads' folder, relative to the repository root.
pub const QUICK_DIR: &str = "bench/out/quick";

/// How to make them when they are missing.
pub const QUICK_HINT: &str = "run `python3 bench/gen_workloads.py --out bench/out/quick --mb 0.5` (or bench/run.sh --quick)";

/// (file, message type) of each social workload.
pub const SOCIAL: [(&str, &str); 5] = [
    ("social_compose_post.bin", "heapwire.bench.social.ComposePostRequest"),
    ("social_store_post.bin", "heapwire.bench.social.StorePostRequest"),
    ("social_compose_media.bin", "heapwire.bench.social.ComposeMediaRequest"),
    ("social_register_user.bin", "heapwire.bench.social.RegisterUserRequest"),
    ("social_login.bin", "heapwire.bench.social.LoginRequest"),
];

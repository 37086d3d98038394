//! What heapwire's tests, hardware system tests and figures share, so they all measure
//! and check the same inputs.

pub mod oracle;
pub mod protobuf_gen;
pub mod rng;
pub mod scaled_tree;
pub mod workloads;

pub use rng::{env_num, Rng};

/// Whether the external tool `name` runs (`name --version`), for tests that need it. Without
/// it a test skips with a message naming `hint` (how to install it); under CI (`CI=true`,
/// where scripts/setup.sh has installed every tool) a missing tool fails the test instead,
/// so a suite cannot pass by skipping.
pub fn tool_present(name: &str, hint: &str) -> bool {
    if std::process::Command::new(name).arg("--version").output().is_ok() {
        return true;
    }
    assert!(std::env::var("CI").as_deref() != Ok("true"), "{name} is not installed, and CI=true requires it ({hint})");
    eprintln!("SKIPPED: {name} is not installed ({hint})");
    false
}

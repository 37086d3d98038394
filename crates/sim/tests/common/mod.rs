//! Helpers shared by the system tests (`protobuf_system.rs`, `objgraph_system.rs`, `verilated_device.rs`).

use std::path::{Path, PathBuf};

pub use heapwire_testkit::{env_num, Rng};

/// The repository root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

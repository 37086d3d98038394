//! Protobuf helpers of the system tests of the protobuf core (`protobuf_system.rs`,
//! `verilated_device.rs`; the messages themselves come from
//! `heapwire_testkit::protobuf_gen`): the test schemas, the bench workloads' streams.

use std::path::{Path, PathBuf};
use std::process::Command;

use heapwire_engine::framing::Delimited;
use heapwire_schema::{CompiledSchema, LayoutOptions};
use heapwire_testkit::workloads;

use super::common::root;

/// The compiled test schema; a schema that does not compile fails the test (every set runs).
pub fn schema(path: &str, includes: &[&str], layout: LayoutOptions) -> CompiledSchema {
    let r = root();
    let inc: Vec<PathBuf> = includes.iter().map(|i| r.join(i)).collect();
    heapwire_schema::compile_files(&[r.join(path)], &inc, layout).unwrap_or_else(|e| panic!("{path} does not compile: {e}"))
}

/// The social workloads of `bench/gen_workloads.py`, `count` messages each, generated into
/// `dir` (python3 with the project's requirements, and protoc, on PATH: scripts/env.sh).
pub fn generate_social_workloads(dir: &Path, count: usize) {
    let only: Vec<&str> = workloads::SOCIAL.iter().map(|(f, _)| f.trim_end_matches(".bin")).collect();
    let out = Command::new("python3")
        .arg(root().join("bench/gen_workloads.py"))
        .arg("--out")
        .arg(dir)
        .arg("--count")
        .arg(count.to_string())
        .arg("--only")
        .arg(only.join(","))
        .output()
        .unwrap_or_else(|e| panic!("python3 bench/gen_workloads.py could not start: {e} (source scripts/env.sh)"));
    assert!(out.status.success(), "bench/gen_workloads.py failed ({}): {}", out.status, String::from_utf8_lossy(&out.stderr));
}

/// The first `max` messages of a delimited stream.
pub fn read_delimited(data: &[u8], max: usize) -> Vec<Vec<u8>> {
    let mut stream = Delimited::new(data);
    let mut out = Vec::new();
    while out.len() < max {
        match stream.next_frame().expect("a well-formed delimited stream") {
            Some(m) => out.push(m.bytes.to_vec()),
            None => break,
        }
    }
    out
}

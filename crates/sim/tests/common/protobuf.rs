//! Protobuf helpers of the system tests of the protobuf core (`protobuf_system.rs`,
//! `verilated_device.rs`; the messages themselves come from
//! `heapwire_testkit::protobuf_gen`): the test schemas, the bench workloads' streams.

use std::path::PathBuf;

use heapwire_engine::framing::Delimited;
use heapwire_schema::{CompiledSchema, LayoutOptions};

use super::common::root;

pub fn schema(path: &str, includes: &[&str], layout: LayoutOptions) -> Option<CompiledSchema> {
    let r = root();
    let inc: Vec<PathBuf> = includes.iter().map(|i| r.join(i)).collect();
    match heapwire_schema::compile_files(&[r.join(path)], &inc, layout) {
        Ok(s) => Some(s),
        Err(e) => {
            eprintln!("skipping {path}: {e}");
            None
        }
    }
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

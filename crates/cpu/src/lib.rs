//! heapwire-cpu: the CPU engine — the reference and the fast path.
//!
//! One room per wire format: [`protobuf`] (decode into a heap image, encode back) and
//! [`objgraph`] (the MSR paper's object graphs). [`CpuEngine`] puts both behind the
//! engine door (`heapwire-engine`).

pub mod objgraph;
pub mod protobuf;

mod engine;

pub use engine::CpuEngine;
pub use protobuf::{DecodeError, DecodeOptions, Decoder};

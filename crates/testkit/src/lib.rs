//! What heapwire's tests, hardware system tests and figures share, so they all measure
//! and check the same inputs.

pub mod oracle;
pub mod protobuf_gen;
pub mod rng;
pub mod scaled_tree;
pub mod workloads;

pub use rng::{env_num, Rng};

//! heapwire-sim: the generated hardware cores in simulation.
//!
//! [`protobuf::simulate`] and [`objgraph::simulate`] generate a core for a compiled schema
//! (`heapwire_emit::verilog`) and its testbench (`heapwire_emit::testbench`), compile
//! them with Icarus Verilog into a simulator cached under the system temp directory (one
//! build per generated design and memory sizes, [`cache_dir`]), run it on one input and
//! read the image back, or the verdict of the core's error register as a
//! [`heapwire_engine::RejectKind`]. [`SimEngine`] puts both behind the engine door, one
//! Icarus process per request. [`VerilatedEngine`] is the simulated device: the cores
//! built by Verilator, one process per core kept alive across requests, with fixed
//! memories ([`verilated::Config`]).
//!
//! See `docs/hardware.md`.

mod cache;
mod engine;
pub mod objgraph;
pub mod protobuf;
mod run;
pub mod verilated;

use heapwire_engine::RejectKind;

pub use cache::cache_dir;
pub use engine::SimEngine;
pub use verilated::VerilatedEngine;

/// What a core wrote: the image and the cycles from start to done.
#[derive(Clone, Debug)]
pub struct SimOutput {
    pub image: Vec<u8>,
    pub cycles: u64,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SimError {
    /// The core's error register: the kind, the byte offset, the cycles it took.
    Rejected { kind: RejectKind, offset: u64, cycles: u64 },
    /// The simulator is missing, failed, or the core hung (a bug, never an input verdict).
    Tool(String),
    /// The schema needs something the core does not support.
    Unsupported(String),
}

impl SimError {
    fn rejected(kind: RejectKind) -> SimError {
        SimError::Rejected { kind, offset: 0, cycles: 0 }
    }
}

impl std::fmt::Display for SimError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SimError::Rejected { kind, offset, .. } => write!(f, "{kind} at byte {offset}"),
            SimError::Tool(m) => write!(f, "simulation: {m}"),
            SimError::Unsupported(m) => write!(f, "unsupported by the hardware core: {m}"),
        }
    }
}

impl std::error::Error for SimError {}

/// `localparam` names and values `PREFIX...` of width `width` (`7'd`, `8'd`) in the
/// Verilog `src`, in source order (the tests that keep the Rust tables equal to the cores').
#[cfg(test)]
pub(crate) fn localparams<'a>(src: &'a str, prefix: &str, width: &str) -> Vec<(&'a str, u32)> {
    let mut out = Vec::new();
    for part in src.split([',', ';', '\n']) {
        if let Some((name, val)) = part.split_once('=') {
            let name = name.trim().rsplit(' ').next().unwrap_or("");
            if let (true, Some(num)) = (name.starts_with(prefix), val.trim().strip_prefix(width)) {
                if let Ok(n) = num.parse() {
                    out.push((name, n));
                }
            }
        }
    }
    out
}

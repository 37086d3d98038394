//! The generated cores in simulation behind the engine door: the `sim` engine.

use std::sync::Arc;

use heapwire_emit::verilog;
use heapwire_engine::{check_request, Decoded, Engine, Error, Rejection, Request, Wire};
use heapwire_schema::CompiledSchema;

use crate::{objgraph, protobuf, SimError, SimOutput};

/// Runs each request through the generated core (protobuf or objgraph) in Icarus
/// Verilog. The core's build parameters come from `protobuf` and `objgraph`; the base,
/// depth limit, image limit and header registers from each request's options.
pub struct SimEngine {
    schema: Arc<CompiledSchema>,
    pub protobuf: protobuf::Options,
    pub objgraph: objgraph::Options,
    last_cycles: Option<u64>,
}

impl SimEngine {
    pub fn new(schema: Arc<CompiledSchema>) -> Self {
        SimEngine { schema, protobuf: Default::default(), objgraph: Default::default(), last_cycles: None }
    }
}

impl Engine for SimEngine {
    fn name(&self) -> &'static str {
        "sim"
    }

    fn check(&self, msg: usize, wire: Wire) -> Result<(), String> {
        check_request(&self.schema, msg, wire)?;
        let supported = match wire {
            Wire::Protobuf => verilog::protobuf::check_supported(&self.schema),
            Wire::Objgraph => verilog::objgraph::check_supported(&self.schema),
        };
        supported.map_err(|e| format!("unsupported by the hardware core: {e}"))
    }

    fn decode(&mut self, req: &Request<'_>, out: &mut Vec<u8>) -> Result<Decoded, Error> {
        self.check(req.msg, req.wire).map_err(Error::Engine)?;
        let o = req.options;
        self.last_cycles = None;
        let r = match req.wire {
            Wire::Protobuf => {
                if !o.type_words.is_empty() {
                    return Err(Error::Engine("the simulated protobuf core takes no per-type registers yet".into()));
                }
                let opts = protobuf::Options { base: o.base, max_depth: o.max_depth, ..self.protobuf.clone() };
                protobuf::simulate(&self.schema, req.msg, req.input, &opts)
            }
            Wire::Objgraph => {
                let opts = objgraph::Options {
                    base: o.base,
                    type_words: o.type_words.clone(),
                    max_image_bytes: o.max_image_bytes,
                    ..self.objgraph.clone()
                };
                objgraph::simulate(&self.schema, req.msg, req.input, &opts)
            }
        };
        match r {
            Ok(SimOutput { image, cycles }) => {
                self.last_cycles = Some(cycles);
                *out = image;
                Ok(Decoded { len: out.len(), cycles: Some(cycles) })
            }
            Err(SimError::Rejected { kind, offset, cycles }) => {
                self.last_cycles = Some(cycles);
                Err(Rejection::new(kind, offset).into())
            }
            Err(e) => Err(Error::Engine(e.to_string())),
        }
    }

    fn last_cycles(&self) -> Option<u64> {
        self.last_cycles
    }
}

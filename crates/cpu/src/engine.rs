//! The CPU engine behind the engine door: protobuf and object graphs, one value per
//! compiled schema.

use std::sync::Arc;

use heapwire_engine::{Decoded, Engine, Error, Rejection, Request, Wire};
use heapwire_schema::CompiledSchema;

use crate::objgraph::{ObjDecoder, ObjError};
use crate::protobuf::{DecodeError, Decoder};

impl From<DecodeError> for Rejection {
    fn from(e: DecodeError) -> Rejection {
        Rejection::new(e.kind, e.offset as u64)
    }
}

impl From<ObjError> for Rejection {
    fn from(e: ObjError) -> Rejection {
        Rejection { kind: e.kind, offset: e.offset, message: None, needed: e.needed }
    }
}

/// The host CPU engine: the reference every other engine is compared with.
pub struct CpuEngine {
    schema: Arc<CompiledSchema>,
    protobuf: Decoder<Arc<CompiledSchema>>,
    /// Made on the first object-graph request (its tables cost nothing otherwise).
    objgraph: Option<ObjDecoder<Arc<CompiledSchema>>>,
}

impl CpuEngine {
    pub fn new(schema: Arc<CompiledSchema>) -> Self {
        CpuEngine { protobuf: Decoder::new(schema.clone()), schema, objgraph: None }
    }

    pub fn schema(&self) -> &Arc<CompiledSchema> {
        &self.schema
    }

    fn objgraph(&mut self) -> &mut ObjDecoder<Arc<CompiledSchema>> {
        self.objgraph.get_or_insert_with(|| ObjDecoder::new(self.schema.clone()))
    }
}

/// Why `msg` cannot be decoded on `wire` by any engine: the index is out of range, or
/// an object graph is asked for a type that is not a class.
pub fn check_request(schema: &CompiledSchema, msg: usize, wire: Wire) -> Result<(), String> {
    let Some(m) = schema.messages.get(msg) else {
        return Err(format!("message index {msg} out of range (the schema has {})", schema.messages.len()));
    };
    if wire == Wire::Objgraph && schema.class_of(msg).is_none() {
        return Err(format!(
            "{} is not a class: --wire objgraph needs a message with option (heapwire.class) (heapwire/options.proto)",
            m.full_name
        ));
    }
    Ok(())
}

impl Engine for CpuEngine {
    fn name(&self) -> &'static str {
        "cpu"
    }

    fn check(&self, msg: usize, wire: Wire) -> Result<(), String> {
        check_request(&self.schema, msg, wire)
    }

    fn decode(&mut self, req: &Request<'_>, out: &mut Vec<u8>) -> Result<Decoded, Error> {
        self.check(req.msg, req.wire).map_err(Error::Engine)?;
        match req.wire {
            Wire::Protobuf => self.protobuf.decode(req.msg, req.input, req.options, out).map_err(Rejection::from)?,
            Wire::Objgraph => self.objgraph().decode(req.msg, req.input, req.options, out).map_err(Rejection::from)?,
        }
        Ok(Decoded { len: out.len(), cycles: None })
    }

    fn decode_into(&mut self, req: &Request<'_>, out: &mut [u8]) -> Result<Decoded, Error> {
        self.check(req.msg, req.wire).map_err(Error::Engine)?;
        let len = match req.wire {
            Wire::Protobuf => self.protobuf.decode_into(req.msg, req.input, req.options, out).map_err(Rejection::from)?,
            Wire::Objgraph => self.objgraph().decode_into(req.msg, req.input, req.options, out).map_err(Rejection::from)?,
        };
        Ok(Decoded { len, cycles: None })
    }
}

//! The CPU engine behind the engine door: protobuf and object graphs, one value per
//! compiled schema.

use std::sync::Arc;

use heapwire_engine::{check_request, Decoded, Engine, Error, Rejection, Request, Wire};
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

    /// [`Engine::check`] on every request, kept to two compares on the hot path (small
    /// messages decode in tens of nanoseconds). An object graph's class is checked once,
    /// by the decoder's own class lookup ([`Self::objgraph_error`] turns its `not_a_class`
    /// into this refusal).
    #[inline(always)]
    fn admit(&self, req: &Request<'_>) -> Result<(), Error> {
        if req.msg < self.schema.messages.len() {
            return Ok(());
        }
        Err(self.refuse(req))
    }

    /// An object-graph decoder's error: a root that is not a class is the door's usage
    /// error (as [`Engine::check`] says), anything else the input's rejection.
    #[cold]
    fn objgraph_error(&self, req: &Request<'_>, e: ObjError) -> Error {
        if e.kind == heapwire_engine::RejectKind::NotAClass {
            return self.refuse(req);
        }
        Error::Rejected(e.into())
    }

    #[cold]
    fn refuse(&self, req: &Request<'_>) -> Error {
        Error::Engine(check_request(&self.schema, req.msg, req.wire).err().unwrap_or_default())
    }

    fn objgraph(&mut self) -> &mut ObjDecoder<Arc<CompiledSchema>> {
        self.objgraph.get_or_insert_with(|| ObjDecoder::new(self.schema.clone()))
    }
}

impl Engine for CpuEngine {
    fn name(&self) -> &'static str {
        "cpu"
    }

    fn check(&self, msg: usize, wire: Wire) -> Result<(), String> {
        check_request(&self.schema, msg, wire)
    }

    fn decode(&mut self, req: &Request<'_>, out: &mut Vec<u8>) -> Result<Decoded, Error> {
        self.admit(req)?;
        match req.wire {
            Wire::Protobuf => self.protobuf.decode(req.msg, req.input, req.options, out).map_err(Rejection::from)?,
            Wire::Objgraph => {
                let r = self.objgraph().decode(req.msg, req.input, req.options, out);
                r.map_err(|e| self.objgraph_error(req, e))?
            }
        }
        Ok(Decoded { len: out.len(), cycles: None })
    }

    fn decode_into(&mut self, req: &Request<'_>, out: &mut [u8]) -> Result<Decoded, Error> {
        self.admit(req)?;
        let len = match req.wire {
            Wire::Protobuf => self.protobuf.decode_into(req.msg, req.input, req.options, out)?,
            Wire::Objgraph => {
                let r = self.objgraph().decode_into(req.msg, req.input, req.options, out);
                r.map_err(|e| self.objgraph_error(req, e))?
            }
        };
        Ok(Decoded { len, cycles: None })
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use heapwire_engine::{Options, Queue, RejectKind, Submission, Threaded};
    use heapwire_schema::{compile_files, LayoutOptions};

    use super::*;
    use crate::objgraph::ObjDecoder;

    fn schema(path: &str) -> Arc<CompiledSchema> {
        let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(path);
        let dir = p.parent().unwrap().to_path_buf();
        Arc::new(compile_files(&[p], &[dir], LayoutOptions::default()).expect("compiles"))
    }

    /// `unit.Node` with an int32 and a string, and a copy whose string is cut off (its
    /// length, at byte 3, claims more than is there).
    fn node() -> (Vec<u8>, Vec<u8>) {
        let ok = b"\x08\x2a\x72\x02hi".to_vec();
        (ok.clone(), ok[..5].to_vec())
    }


    #[test]
    fn the_door_gives_what_the_decoders_give() {
        let unit = schema("testdata/unit.proto");
        let msg = unit.message_index("unit.Node").unwrap();
        let opts = Options { base: 0x1000, ..Options::default() };
        let (ok, cut) = node();
        let mut engine = CpuEngine::new(unit.clone());
        let (mut via_door, mut direct) = (Vec::new(), Vec::new());
        let d = engine.decode(&Request { msg, wire: Wire::Protobuf, input: &ok, options: &opts }, &mut via_door).unwrap();
        Decoder::new(&*unit).decode(msg, &ok, &opts, &mut direct).unwrap();
        assert_eq!((d.len, &via_door), (direct.len(), &direct));
        let e = engine.decode(&Request { msg, wire: Wire::Protobuf, input: &cut, options: &opts }, &mut via_door).unwrap_err();
        assert_eq!(e, Error::Rejected(Rejection::new(RejectKind::LengthPastEnd, 3)));
        // Not a class: refused before any input, as a usage error.
        assert!(engine.check(msg, Wire::Objgraph).unwrap_err().contains("is not a class"));
        assert!(matches!(
            engine.decode(&Request { msg, wire: Wire::Objgraph, input: &ok, options: &opts }, &mut via_door),
            Err(Error::Engine(_))
        ));

        let expr = schema("../../examples/expression_tree/expr.proto");
        let root = expr.message_index("expr.Node").unwrap();
        let g = heapwire_testkit::scaled_tree::paper();
        let mut engine = CpuEngine::new(expr.clone());
        engine.decode(&Request { msg: root, wire: Wire::Objgraph, input: &g, options: &opts }, &mut via_door).unwrap();
        ObjDecoder::new(&*expr).decode(root, &g, &opts, &mut direct).unwrap();
        assert_eq!(via_door, direct);
        let e = engine.decode(&Request { msg: root, wire: Wire::Objgraph, input: &g[..53], options: &opts }, &mut via_door);
        assert!(matches!(e, Err(Error::Rejected(Rejection { kind: RejectKind::Truncated, .. }))), "{e:?}");
    }

    #[test]
    fn decode_into_a_caller_buffer() {
        let unit = schema("testdata/unit.proto");
        let msg = unit.message_index("unit.Node").unwrap();
        let opts = Options { base: 0x40, ..Options::default() };
        let (ok, _) = node();
        let mut engine = CpuEngine::new(unit);
        let mut image = Vec::new();
        engine.decode(&Request { msg, wire: Wire::Protobuf, input: &ok, options: &opts }, &mut image).unwrap();
        let mut region = vec![0xEEu8; image.len() + 16];
        let d = engine.decode_into(&Request { msg, wire: Wire::Protobuf, input: &ok, options: &opts }, &mut region).unwrap();
        assert_eq!(&region[..d.len], &image[..]);
        let mut small = vec![0u8; image.len() - 1];
        let e = engine.decode_into(&Request { msg, wire: Wire::Protobuf, input: &ok, options: &opts }, &mut small).unwrap_err();
        assert_eq!(e, Error::Rejected(Rejection { needed: image.len() as u64, ..Rejection::new(RejectKind::BufferTooSmall, 0) }));
    }

    #[test]
    fn a_cpu_engine_on_its_own_thread_completes_every_tag() {
        let unit = schema("testdata/unit.proto");
        let msg = unit.message_index("unit.Node").unwrap();
        let (ok, cut) = node();
        let mut want = Vec::new();
        Decoder::new(&*unit).decode(msg, &ok, &Options { base: 0x100, ..Options::default() }, &mut want).unwrap();
        let mut q = Threaded::new(CpuEngine::new(unit), Options::default(), 4);
        let mut done = Vec::new();
        for tag in 0..64u64 {
            let input = if tag % 5 == 4 { cut.clone() } else { ok.clone() };
            let mut s = Submission { tag, msg, wire: Wire::Protobuf, base: 0x100, input, output: Vec::new() };
            loop {
                match q.submit(s) {
                    Ok(()) => break,
                    Err(back) => {
                        s = *back;
                        done.push(q.wait().unwrap());
                    }
                }
            }
        }
        while let Some(c) = q.wait() {
            done.push(c);
        }
        assert_eq!(done.len(), 64);
        done.sort_by_key(|c| c.tag);
        for (tag, c) in done.iter().enumerate() {
            assert_eq!(c.tag, tag as u64);
            if tag % 5 == 4 {
                assert!(matches!(c.result, Err(Error::Rejected(Rejection { kind: RejectKind::LengthPastEnd, offset: 3, .. }))));
            } else {
                assert_eq!(c.result.as_ref().unwrap().len, want.len());
                assert_eq!(c.output, want);
            }
        }
    }
}

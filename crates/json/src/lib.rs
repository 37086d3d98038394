//! heapwire-json: JSON in front of every wire format.
//!
//! * [`protobuf`]: the proto3 JSON mapping as the official libraries print and parse it.
//! * [`objgraph`]: object graphs as a list of objects with `{"@ref": id}` references.
//!
//! [`Printer`] and [`parse`] choose between them by [`Wire`], so a caller (the command
//! line, a service) handles both formats with one call. Both parsers read JSON with
//! one lexer (`lexer.rs`, a dialect for each where they differ); both printers write
//! strings with one writer (`write.rs`).

mod lexer;
pub mod objgraph;
pub mod protobuf;
mod write;

use std::sync::Arc;

use heapwire_cpu::objgraph::{ObjDecoder, Tables};
use heapwire_engine::{Request, Wire};
use heapwire_image::ImageView;
use heapwire_schema::CompiledSchema;

/// A JSON input or image the front end could not handle.
#[derive(Clone, Debug, PartialEq)]
pub enum Error {
    Protobuf(protobuf::JsonError),
    Objgraph(objgraph::JsonError),
}

impl Error {
    /// The one-line report for a document that starts at byte `doc_start` of the input.
    pub fn describe(&self, doc_start: usize) -> String {
        match self {
            Error::Protobuf(e) => format!("json at byte {doc_start}: {e}"),
            Error::Objgraph(e) => format!("{} at byte {}", e.kind, doc_start + e.offset),
        }
    }
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::Protobuf(e) => e.fmt(f),
            Error::Objgraph(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for Error {}

/// Prints decoded images as JSON, one schema, either wire format.
pub struct Printer {
    schema: Arc<CompiledSchema>,
    /// Object graphs print from the decoder's object table (class and offset of each
    /// object), which the image alone does not hold without header words.
    objgraph: Option<ObjDecoder<Arc<CompiledSchema>>>,
}

impl Printer {
    pub fn new(schema: Arc<CompiledSchema>) -> Self {
        Printer { schema, objgraph: None }
    }

    /// Appends the JSON of `image`, what an engine decoded for `req`, to `out`, ending in
    /// a newline. Protobuf JSON is always one line; an object graph is printed one object
    /// per line unless `one_line`.
    pub fn print(&mut self, req: &Request<'_>, image: &[u8], one_line: bool, out: &mut Vec<u8>) -> Result<(), Error> {
        let &Request { msg, wire, input, options } = req;
        match wire {
            Wire::Protobuf => {
                let view = ImageView::for_schema(&self.schema, image, options.base);
                protobuf::to_json_into(&self.schema, msg, &view, 0, out).map_err(Error::Protobuf)?;
                out.push(b'\n');
            }
            Wire::Objgraph => {
                let schema = &self.schema;
                let dec = self.objgraph.get_or_insert_with(|| ObjDecoder::new(schema.clone()));
                let mut again = Vec::new();
                if dec.decode(msg, input, options, &mut again).is_err() || again != image {
                    return Err(Error::Objgraph(objgraph::JsonError { kind: "image_mismatch", offset: 0 }));
                }
                let start = out.len();
                objgraph::print_json(dec, image, options.base, out);
                if one_line {
                    // Strings never hold raw newlines: every newline is layout.
                    let mut doc = out.split_off(start);
                    doc.retain(|&b| b != b'\n');
                    out.extend_from_slice(&doc);
                    out.push(b'\n');
                }
            }
        }
        Ok(())
    }
}

/// Parses one JSON document (`encode --from-json`) into the wire bytes of message `msg`
/// on `wire`, replacing `out`. `tables` holds the object-graph class tables: made here on
/// first need, kept by the caller for its next document.
pub fn parse(schema: &CompiledSchema, tables: &mut Option<Tables>, wire: Wire, msg: usize, text: &str, out: &mut Vec<u8>) -> Result<(), Error> {
    parse_with(schema, tables, wire, msg, text, &protobuf::ParseOptions::default(), out)
}

/// [`parse`] with the protobuf JSON parser's options (`opts`; object graphs have none).
pub fn parse_with(
    schema: &CompiledSchema,
    tables: &mut Option<Tables>,
    wire: Wire,
    msg: usize,
    text: &str,
    opts: &protobuf::ParseOptions,
    out: &mut Vec<u8>,
) -> Result<(), Error> {
    match wire {
        Wire::Protobuf => {
            out.clear();
            protobuf::from_json_with(schema, msg, text.as_bytes(), out, opts).map_err(Error::Protobuf)
        }
        Wire::Objgraph => {
            let t = tables.get_or_insert_with(|| Tables::new(schema));
            objgraph::parse_json(schema, t, msg, text, out).map_err(Error::Objgraph)
        }
    }
}

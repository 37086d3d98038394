//! heapwire-engine: the one door into every engine.
//!
//! An engine turns wire bytes into a heap image for a compiled schema. Whatever it is —
//! the CPU engine, a generated core in simulation, later a device across a network or an
//! offload pool — it is called the same way:
//!
//! * synchronously, through [`Engine`]: a [`Request`] (message type, [`Wire`] format,
//!   input, [`Options`]) in; the image written into a buffer the caller owns (a `Vec` it
//!   reuses, or a fixed region such as a pool's or a device's output memory) out, or one
//!   [`Rejection`] (kind, byte offset, message index) — formatted in one place;
//! * or later than it was asked, through a [`Queue`]: the caller submits
//!   [`Submission`]s carrying its own tag and buffers, and reaps [`Completion`]s carrying
//!   the tag back (the io_uring / NVMe shape). [`Inline`] and [`Threaded`] make any
//!   `Engine` a queue; remote devices and pools implement `Queue` themselves.
//!
//! [`framing`] reads and writes the varint-delimited streams every command accepts.

pub mod framing;
mod queue;
mod reject;

pub use queue::{Completion, Inline, Queue, Submission, Threaded};
pub use reject::{RejectKind, Rejection};

use heapwire_schema::CompiledSchema;

/// The wire format of a request's input.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Wire {
    /// Protobuf binary.
    Protobuf,
    /// The MSR paper's object graphs (`docs/objgraph-wire.md`).
    Objgraph,
}

impl Wire {
    pub fn name(self) -> &'static str {
        match self {
            Wire::Protobuf => "protobuf",
            Wire::Objgraph => "objgraph",
        }
    }
}

impl std::str::FromStr for Wire {
    type Err = String;
    fn from_str(s: &str) -> Result<Wire, String> {
        match s {
            "protobuf" => Ok(Wire::Protobuf),
            "objgraph" => Ok(Wire::Objgraph),
            _ => Err(format!("unknown wire format '{s}' (protobuf or objgraph)")),
        }
    }
}

/// How a request is decoded. The pointer width and header words are the compiled
/// schema's layout; these are the per-request and per-installation choices.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    /// Address the image will live at (a multiple of 8); every pointer is `base + offset`.
    pub base: u64,
    /// Deepest nesting of messages and groups below the root (official default 100).
    pub max_depth: u32,
    /// Largest image accepted.
    pub max_image_bytes: u64,
    /// Per-type registers: the header word of each message type (index = message
    /// index); types without a value get their message index.
    pub type_words: Vec<u64>,
}

impl Default for Options {
    fn default() -> Self {
        Options { base: 0, max_depth: 100, max_image_bytes: 1 << 30, type_words: Vec::new() }
    }
}

/// One decode: message type `msg` (an index into the compiled schema's messages) from
/// `input` on `wire`.
#[derive(Clone, Copy, Debug)]
pub struct Request<'a> {
    pub msg: usize,
    pub wire: Wire,
    pub input: &'a [u8],
    pub options: &'a Options,
}

/// A finished decode: the image's length, and the engine's cycle count where it has one.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Decoded {
    pub len: usize,
    pub cycles: Option<u64>,
}

/// Why a request produced no image.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Error {
    /// The input was rejected (exit status 1 in the command line).
    Rejected(Rejection),
    /// The engine cannot serve the request: a missing tool, an unsupported schema, a
    /// hung simulation, a closed queue. Never a verdict on the input (exit status 2).
    Engine(String),
}

impl From<Rejection> for Error {
    fn from(r: Rejection) -> Error {
        Error::Rejected(r)
    }
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::Rejected(r) => r.fmt(f),
            Error::Engine(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for Error {}

/// The engine door. One value serves one compiled schema (it is given at construction)
/// and reuses its scratch memory across requests.
pub trait Engine {
    /// A short name for messages and benchmarks (`cpu`, `sim`).
    fn name(&self) -> &'static str;

    /// Whether this engine can decode message `msg` on `wire` at all, before any input
    /// (an unsupported schema, a type that is not a class): the reason if not.
    fn check(&self, msg: usize, wire: Wire) -> Result<(), String>;

    /// Decodes into `out`, which is cleared and resized to the image.
    fn decode(&mut self, req: &Request<'_>, out: &mut Vec<u8>) -> Result<Decoded, Error>;

    /// Decodes into the caller's fixed buffer `out` (a pool region, a device's output
    /// memory): the image is `out[..len]`. An image that does not fit is rejected with
    /// [`RejectKind::BufferTooSmall`] and `needed` set. After any error `out` may hold garbage.
    ///
    /// The default goes through [`Engine::decode`] and copies; engines that can write in
    /// place override it.
    fn decode_into(&mut self, req: &Request<'_>, out: &mut [u8]) -> Result<Decoded, Error> {
        let mut image = Vec::new();
        let d = self.decode(req, &mut image)?;
        copy_into(&image, out)?;
        Ok(d)
    }

    /// Cycles the engine spent on the last request, accepted or rejected, where it
    /// counts cycles (the device's cycle-counter register).
    fn last_cycles(&self) -> Option<u64> {
        None
    }

    /// The registers of a hardware engine's own register block as the last request left
    /// them (the bus wrapper's AXI4-Lite registers, read back over the bus), where the
    /// engine has them: a device shows these instead of what its model would compute.
    /// None after a request the engine could not run to the end.
    fn last_registers(&self) -> Option<EngineRegisters> {
        None
    }
}

/// What a hardware engine's register block said after one request (`docs/device.md`,
/// the hardware variant): the verdict registers and what the request added to the
/// counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EngineRegisters {
    /// STATUS before the host acknowledged: bit 1 done (an image written), bit 2 error.
    pub status: u32,
    /// ERR_KIND: 0, a `RejectKind` code, or a device error (64 and up).
    pub err_kind: u32,
    pub err_offset: u64,
    pub image_len: u32,
    /// TIME: the core's cycles.
    pub time: u64,
    /// What the request added to REQUESTS, BYTES_IN, BYTES_OUT, REJECTIONS and
    /// PROTOCOL_ERRORS, in that order.
    pub counted: [u64; 5],
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

/// Copies a finished image into a fixed buffer, or says how large it must be.
pub fn copy_into(image: &[u8], out: &mut [u8]) -> Result<(), Rejection> {
    if image.len() > out.len() {
        return Err(Rejection { needed: image.len() as u64, ..Rejection::new(RejectKind::BufferTooSmall, 0) });
    }
    out[..image.len()].copy_from_slice(image);
    Ok(())
}

impl<E: Engine + ?Sized> Engine for Box<E> {
    fn name(&self) -> &'static str {
        (**self).name()
    }
    fn check(&self, msg: usize, wire: Wire) -> Result<(), String> {
        (**self).check(msg, wire)
    }
    fn decode(&mut self, req: &Request<'_>, out: &mut Vec<u8>) -> Result<Decoded, Error> {
        (**self).decode(req, out)
    }
    fn decode_into(&mut self, req: &Request<'_>, out: &mut [u8]) -> Result<Decoded, Error> {
        (**self).decode_into(req, out)
    }
    fn last_cycles(&self) -> Option<u64> {
        (**self).last_cycles()
    }
    fn last_registers(&self) -> Option<EngineRegisters> {
        (**self).last_registers()
    }
}

//! Protobuf binary → heap image: the reference implementation of `docs/image-layout.md`.
//!
//! The reference algorithm is two passes over the input ([`Decoder::decode_reference`]):
//! the pre-pass (`pre.rs`) validates everything, numbers message instances in creation
//! order and counts repeated elements and unknown bytes per instance (so the image size
//! is exact); the write pass (`write.rs`) allocates in wire order and fills the image.
//! [`Decoder::decode`] usually needs one: the fast pass (`fast.rs`) counts each repeated
//! field's run at its first value (the rest lazily) and gives up to the two passes on
//! merges, values of a repeated field that come apart, and errors. [`Decoder::decode_into`] does the
//! same in the caller's buffer, in place. All three passes share the tables and
//! scratch of `tables.rs` and the small steps of `common.rs`. Nothing recurses: nesting
//! lives in an explicit frame stack bounded by `max_depth`.

use std::ops::Deref;

use heapwire_engine::{RejectKind, Rejection};
use heapwire_schema::CompiledSchema;

mod common;
mod fast;
mod pre;
mod tables;
mod write;

use common::{err, Place};
use fast::{fast_pass, Fixed};
use pre::pre_pass;
use tables::{Scratch, Tables};
use write::write_pass;

/// A rejected input: what went wrong and the byte offset where it was found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DecodeError {
    pub kind: RejectKind,
    pub offset: usize,
}

impl std::fmt::Display for DecodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} at byte {}", self.kind.name(), self.offset)
    }
}

impl std::error::Error for DecodeError {}

/// The engine door's options (base, depth limit, image limit, per-type registers).
pub type DecodeOptions = heapwire_engine::Options;

/// Reusable decoder for one compiled schema. Scratch buffers persist between calls,
/// so decoding a stream of messages allocates only while they grow.
pub struct Decoder<S: Deref<Target = CompiledSchema>> {
    schema: S,
    t: Tables,
    s: Scratch,
    /// Per message type, image bytes per input byte of recent fast decodes, in 16ths:
    /// the next first estimate (the image's first zeroing is its cost).
    expand: Vec<u32>,
}

impl<S: Deref<Target = CompiledSchema>> Decoder<S> {
    /// `schema` is a reference or a shared pointer (`Arc`) to the compiled schema.
    pub fn new(schema: S) -> Self {
        let t = Tables::new(&schema);
        let expand = vec![2 * 16; schema.messages.len()];
        Decoder { schema, t, s: Scratch::default(), expand }
    }

    pub fn schema(&self) -> &CompiledSchema {
        &self.schema
    }

    /// Checks what holds for any input; returns the pointer width.
    fn check_request(&self, msg: usize, input: &[u8], opts: &DecodeOptions) -> Result<u64, DecodeError> {
        assert!(msg < self.schema.messages.len(), "message index out of range");
        if opts.base % 8 != 0 {
            return err(RejectKind::BadBase, 0);
        }
        if input.len() > u32::MAX as usize {
            return err(RejectKind::ImageTooLarge, 0);
        }
        Ok(self.schema.ptr() as u64)
    }

    /// A first size for the fast pass's image, zeroed at once (one memset); it grows only
    /// past that. The recent images of the type say how much it expands its input (2x
    /// before the first), plus an eighth.
    #[inline(always)]
    fn estimate(&self, msg: usize, input: &[u8], pl: Place) -> usize {
        let grown = input.len() as u64 * (self.expand[msg] as u64 + 2) / 16;
        (self.t.info[msg].size8 as u64 + grown + 64).min(pl.limit) as usize
    }

    /// Learns the expansion of a fast decode's image (`total` bytes, the root struct
    /// aside) from `input_len`.
    #[inline(always)]
    fn learn(&mut self, msg: usize, input_len: usize, total: u64) {
        if input_len >= 64 {
            // Up at once, down slowly: the largest recent expansion, so that a stream of
            // messages of one type rarely grows an image.
            let grown = total.saturating_sub(self.t.info[msg].size8 as u64);
            let e = &mut self.expand[msg];
            *e = ((grown * 16 / input_len as u64) as u32).max(*e - *e / 16).clamp(8, 128);
        }
    }

    /// Decodes `input` as message type `msg` into `out` (replacing its contents).
    pub fn decode(&mut self, msg: usize, input: &[u8], opts: &DecodeOptions, out: &mut Vec<u8>) -> Result<(), DecodeError> {
        let pw = self.check_request(msg, input, opts)?;
        // The fast pass's first estimate; the result is cut to the exact size.
        let pl = Place::new(&self.schema, opts);
        out.clear();
        out.resize(self.estimate(msg, input, pl), 0);
        if let Ok(total) = fast_pass(&self.schema, &self.t, &mut self.s, msg as u32, input, opts, pl, out) {
            out.truncate(total as usize);
            self.learn(msg, input.len(), total);
            // The fast pass keeps the image within `pl.limit`, below the pointers' top.
            debug_assert!(check_base(pw, opts, total).is_ok());
            return Ok(());
        }
        // A merge, or an error (whose canonical offset the two passes report).
        self.decode_reference(msg, input, opts, out)
    }

    /// Decodes into the caller's fixed buffer, in place; returns the image size: the image
    /// is `out[..size]`. An image larger than `out` is rejected with `buffer_too_small`
    /// at offset 0, `needed` set to its size. Every other rejection is `decode`'s (an
    /// invalid input is reported as such, whatever the buffer). Bytes of `out` past the
    /// image are not part of it: they may be left as they were or overwritten (zeroed,
    /// or by a fast pass that gave up).
    pub fn decode_into(&mut self, msg: usize, input: &[u8], opts: &DecodeOptions, out: &mut [u8]) -> Result<usize, Rejection> {
        let pw = self.check_request(msg, input, opts)?;
        // The fast pass, in the buffer: it gives up where `decode` would, or when full.
        let pl = Place::new(&self.schema, opts);
        let first = self.estimate(msg, input, pl);
        if let Ok(total) = fast_pass(&self.schema, &self.t, &mut self.s, msg as u32, input, opts, pl, &mut Fixed::new(out, first)) {
            debug_assert!(check_base(pw, opts, total).is_ok());
            self.learn(msg, input.len(), total);
            return Ok(total as usize);
        }
        // The two passes: the pre-pass gives the exact size before anything is written.
        let total = self.sized(msg, input, opts, pw)? as usize;
        if total > out.len() {
            return Err(Rejection { needed: total as u64, ..Rejection::new(RejectKind::BufferTooSmall, 0) });
        }
        let img = &mut out[..total];
        img.fill(0);
        self.write(msg, input, opts, img)?;
        Ok(total)
    }

    /// The reference algorithm of `docs/image-layout.md`, always in two passes (pre-pass,
    /// then write pass). `decode` gives the same bytes, usually in one pass.
    pub fn decode_reference(&mut self, msg: usize, input: &[u8], opts: &DecodeOptions, out: &mut Vec<u8>) -> Result<(), DecodeError> {
        let pw = self.check_request(msg, input, opts)?;
        out.clear();
        let total = self.sized(msg, input, opts, pw)?;
        out.resize(total as usize, 0);
        self.write(msg, input, opts, out)
    }

    /// The pre-pass; returns the image size, once the base is checked against it.
    fn sized(&mut self, msg: usize, input: &[u8], opts: &DecodeOptions, pw: u64) -> Result<u64, DecodeError> {
        let total = pre_pass(&self.schema, &self.t, &mut self.s, msg as u32, input, opts)?;
        check_base(pw, opts, total)?;
        Ok(total)
    }

    /// The write pass into `img`: zeroed, of the size the pre-pass gave.
    fn write(&mut self, msg: usize, input: &[u8], opts: &DecodeOptions, img: &mut [u8]) -> Result<(), DecodeError> {
        let written = write_pass(&self.schema, &self.t, &mut self.s, msg as u32, input, opts, img)?;
        debug_assert_eq!(written, img.len() as u64, "pre-pass and write pass disagree on the image size");
        Ok(())
    }
}

/// The whole image must lie below the top of the pointers' address space: 4 GiB with
/// 32-bit pointers, 2^64 with 64-bit ones.
fn check_base(pw: u64, opts: &DecodeOptions, total: u64) -> Result<(), DecodeError> {
    let top = if pw == 4 { 1u128 << 32 } else { 1u128 << 64 };
    if opts.base as u128 + total as u128 > top {
        return err(RejectKind::BadBase, 0);
    }
    Ok(())
}

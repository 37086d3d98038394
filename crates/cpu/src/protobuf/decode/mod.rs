//! Protobuf binary → heap image: the reference implementation of `docs/image-layout.md`.
//!
//! The reference algorithm is two passes over the input ([`Decoder::decode_reference`]):
//! the pre-pass (`pre.rs`) validates everything, numbers message instances in creation
//! order and counts repeated elements and unknown bytes per instance (so the image size
//! is exact); the write pass (`write.rs`) allocates in wire order and fills the image.
//! [`Decoder::decode`] usually needs one: the fast pass (`fast.rs`) counts lazily and
//! gives up to the two passes on merges and errors. All three share the tables and
//! scratch of `tables.rs` and the small steps of `common.rs`. Nothing recurses: nesting
//! lives in an explicit frame stack bounded by `max_depth`.

use std::ops::Deref;

use heapwire_engine::RejectKind;
use heapwire_schema::CompiledSchema;

mod common;
mod fast;
mod pre;
mod tables;
mod write;

use common::{err, fill_limit};
use fast::fast_pass;
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
    /// `decode_into`'s image before it is copied out.
    image: Vec<u8>,
}

impl<S: Deref<Target = CompiledSchema>> Decoder<S> {
    /// `schema` is a reference or a shared pointer (`Arc`) to the compiled schema.
    pub fn new(schema: S) -> Self {
        let t = Tables::new(&schema);
        Decoder { schema, t, s: Scratch::default(), image: Vec::new() }
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

    /// Decodes `input` as message type `msg` into `out` (replacing its contents).
    pub fn decode(&mut self, msg: usize, input: &[u8], opts: &DecodeOptions, out: &mut Vec<u8>) -> Result<(), DecodeError> {
        let pw = self.check_request(msg, input, opts)?;
        // Zero a first estimate of the image at once (one memset); the fast pass grows it
        // only past that, and the result is cut to the exact size.
        let estimate = (self.t.info[msg].size8 as u64 + 2 * input.len() as u64 + 64).min(fill_limit(&self.schema, opts)) as usize;
        out.clear();
        out.resize(estimate, 0);
        if let Ok(total) = fast_pass(&self.schema, &self.t, &mut self.s, msg as u32, input, opts, out) {
            out.truncate(total as usize);
            if pw == 4 && opts.base.checked_add(total).is_none_or(|e| e > u32::MAX as u64 + 1) {
                return err(RejectKind::BadBase, 0);
            }
            return Ok(());
        }
        // A merge, or an error (whose canonical offset the two passes report).
        self.decode_reference(msg, input, opts, out)
    }

    /// Decodes into the caller's fixed buffer; returns the image size. An image larger
    /// than `out` is rejected with `buffer_too_small` and the size it needs.
    pub fn decode_into(&mut self, msg: usize, input: &[u8], opts: &DecodeOptions, out: &mut [u8]) -> Result<usize, heapwire_engine::Rejection> {
        let mut image = std::mem::take(&mut self.image);
        let r = self.decode(msg, input, opts, &mut image).map_err(heapwire_engine::Rejection::from);
        let r = r.and_then(|()| heapwire_engine::copy_into(&image, out).map(|()| image.len()));
        self.image = image;
        r
    }

    /// The reference algorithm of `docs/image-layout.md`, always in two passes (pre-pass,
    /// then write pass). `decode` gives the same bytes, usually in one pass.
    pub fn decode_reference(&mut self, msg: usize, input: &[u8], opts: &DecodeOptions, out: &mut Vec<u8>) -> Result<(), DecodeError> {
        let pw = self.check_request(msg, input, opts)?;
        out.clear();
        let total = pre_pass(&self.schema, &self.t, &mut self.s, msg as u32, input, opts)?;
        if pw == 4 && opts.base.checked_add(total).is_none_or(|e| e > u32::MAX as u64 + 1) {
            return err(RejectKind::BadBase, 0);
        }
        out.resize(total as usize, 0);
        let written = write_pass(&self.schema, &self.t, &mut self.s, msg as u32, input, opts, out)?;
        debug_assert_eq!(written, total, "pre-pass and write pass disagree on the image size");
        Ok(())
    }
}

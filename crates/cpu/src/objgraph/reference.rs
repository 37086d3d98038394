//! Objgraph wire bytes → heap image: the reference implementation of
//! `docs/objgraph-wire.md` (the paper's section 5.3.2 state machine in software), kept
//! literal — validate everything, zero the image, then write — so the fast path
//! ([`super::ObjDecoder`]) has something plain to be proven identical to.

use heapwire_engine::RejectKind as K;
use std::ops::Deref;

use heapwire_schema::CompiledSchema;

use super::{oerr, rd32, Conv, ObjError, Tables, NULL_REF};
use heapwire_engine::Options;

/// The reference objgraph decoder for one compiled schema; same API as [`super::ObjDecoder`].
pub struct ReferenceDecoder<S: Deref<Target = CompiledSchema>> {
    schema: S,
    t: Tables,
    /// Per object of the last decode: class index and image offset.
    cls: Vec<u32>,
    off: Vec<u32>,
}

impl<S: Deref<Target = CompiledSchema>> ReferenceDecoder<S> {
    /// `schema` is a reference or a shared pointer (`Arc`) to the compiled schema.
    pub fn new(schema: S) -> Self {
        let t = Tables::new(&schema);
        ReferenceDecoder { schema, t, cls: Vec::new(), off: Vec::new() }
    }

    pub fn schema(&self) -> &CompiledSchema {
        &self.schema
    }

    pub fn tables(&self) -> &Tables {
        &self.t
    }

    /// Objects of the last successful decode: (class index, image offset), in wire order.
    pub fn objects(&self) -> impl ExactSizeIterator<Item = (usize, usize)> + '_ {
        self.cls.iter().zip(&self.off).map(|(&c, &o)| (c as usize, o as usize))
    }

    /// Decodes `input` whose object 0 must be of message `root_msg` (a class) or a
    /// subclass, into `out` (replaced).
    pub fn decode(&mut self, root_msg: usize, input: &[u8], opts: &Options, out: &mut Vec<u8>) -> Result<(), ObjError> {
        out.clear();
        let total = self.plan(root_msg, input, opts)?;
        out.resize(total, 0);
        self.write(input, opts, out);
        Ok(())
    }

    /// Decodes into a caller's buffer (e.g. preallocated at address `opts.base`);
    /// returns the image size. Bytes of `out` past the image are untouched.
    pub fn decode_into(&mut self, root_msg: usize, input: &[u8], opts: &Options, out: &mut [u8]) -> Result<usize, ObjError> {
        let total = self.plan(root_msg, input, opts)?;
        if total > out.len() {
            return Err(ObjError { kind: K::BufferTooSmall, offset: 0, needed: total as u64 });
        }
        out[..total].fill(0);
        self.write(input, opts, &mut out[..total]);
        Ok(total)
    }

    /// Phase 1: validates the whole input (so phase 2 cannot fail), reads the type ids
    /// and allocates every object contiguously in order. Returns the image size.
    fn plan(&mut self, root_msg: usize, input: &[u8], opts: &Options) -> Result<usize, ObjError> {
        self.cls.clear();
        self.off.clear();
        let Some(root) = self.schema.class_of(root_msg) else { return oerr(K::NotAClass, 0) };
        let n = super::object_count(input, opts)?;
        self.cls.reserve(n);
        self.off.reserve(n);
        let mut top = 0u64;
        let mut wire_total = 4 + 4 * n as u64;
        for i in 0..n {
            let at = 4 + 4 * i;
            let id = rd32(input, at);
            let Some(c) = self.t.class_for_type(id) else { return oerr(K::UnknownType, at as u64) };
            if i == 0 && !self.t.is_sub(c, root as u32) {
                return oerr(K::RootType, at as u64);
            }
            let ct = &self.t.classes[c as usize];
            top = (top + ct.align as u64 - 1) & !(ct.align as u64 - 1);
            self.cls.push(c);
            self.off.push(top.min(u32::MAX as u64) as u32);
            top += ct.size as u64;
            wire_total += ct.wire_size as u64;
            if top > opts.max_image_bytes.min(u32::MAX as u64) {
                return oerr(K::ImageTooLarge, at as u64);
            }
        }
        let total = top;
        if wire_total > input.len() as u64 {
            return oerr(K::Truncated, self.truncation_point(input));
        }
        if wire_total < input.len() as u64 {
            return oerr(K::TrailingBytes, wire_total);
        }
        super::check_image_range(self.t.ptr, opts.base, total)?;
        // References: every index in range and of a compatible class (checked before
        // anything is written, so phase 2 is straight-line).
        let mut pos = 4 + 4 * n;
        for i in 0..n {
            let ct = &self.t.classes[self.cls[i] as usize];
            for op in &ct.ops {
                if op.wire == 0 {
                    continue;
                }
                if let Conv::Ref(target) = op.conv {
                    let r = rd32(input, pos);
                    if r != NULL_REF {
                        if r as usize >= n {
                            return oerr(K::BadReference, pos as u64);
                        }
                        if !self.t.is_sub(self.cls[r as usize], target) {
                            return oerr(K::ReferenceType, pos as u64);
                        }
                        // At base 0, object 0's address would read as null.
                        if r == 0 && opts.base == 0 {
                            return oerr(K::BadBase, pos as u64);
                        }
                    }
                }
                pos += op.wire as usize;
            }
        }
        Ok(total as usize)
    }

    /// Where the members of a too-short input run out: the start of the first member
    /// that does not fit.
    fn truncation_point(&self, input: &[u8]) -> u64 {
        let mut pos = 4 + 4 * self.cls.len() as u64;
        for &c in &self.cls {
            for op in &self.t.classes[c as usize].ops {
                if op.wire == 0 {
                    continue;
                }
                if pos + op.wire as u64 > input.len() as u64 {
                    return pos;
                }
                pos += op.wire as u64;
            }
        }
        input.len() as u64
    }

    /// Phase 2: header words, members, relocated references. `out` is zeroed and sized.
    fn write(&self, input: &[u8], opts: &Options, out: &mut [u8]) {
        let pw = self.t.ptr as usize;
        let base = opts.base;
        let mut pos = 4 + 4 * self.cls.len();
        for (i, &c) in self.cls.iter().enumerate() {
            let ct = &self.t.classes[c as usize];
            let o = self.off[i] as usize;
            let obj = &mut out[o..o + ct.size as usize];
            let word = opts.type_words.get(ct.msg as usize).copied().unwrap_or(ct.msg as u64);
            put(obj, 0, pw, word);
            for op in &ct.ops {
                if op.wire == 0 {
                    continue;
                }
                let w = op.wire as usize;
                let at = op.offset as usize;
                match op.conv {
                    Conv::Ref(_) => {
                        let r = rd32(input, pos);
                        if r != NULL_REF {
                            put(obj, at, pw, base + self.off[r as usize] as u64);
                        }
                    }
                    conv => {
                        let v = super::extend(&input[pos..pos + w], conv);
                        put(obj, at, op.size as usize, v);
                    }
                }
                pos += w;
            }
        }
        debug_assert_eq!(pos, input.len());
    }
}

/// Stores the low `size` bytes of `v` (constant-size copies: no memcpy calls).
#[inline(always)]
fn put(obj: &mut [u8], at: usize, size: usize, v: u64) {
    match size {
        8 => obj[at..at + 8].copy_from_slice(&v.to_le_bytes()),
        4 => obj[at..at + 4].copy_from_slice(&(v as u32).to_le_bytes()),
        2 => obj[at..at + 2].copy_from_slice(&(v as u16).to_le_bytes()),
        _ => obj[at] = v as u8,
    }
}

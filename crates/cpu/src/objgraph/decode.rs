//! Objgraph wire bytes → heap image, the fast path. Writes the same bytes and rejects
//! with the same error (kind and offset) as [`super::reference::ReferenceDecoder`], the
//! literal form of `docs/objgraph-wire.md`; `crates/cpu/tests/objgraph_fast.rs` proves
//! it on random graphs and random bytes.
//!
//! Two streaming passes, as the paper's core does:
//! 1. the type-id pass reads the ids, places every object (class and image offset in
//!    one 8-byte entry) and sums the members' wire length;
//! 2. the member pass walks the members once, checking each reference as it relocates
//!    it (the id → address table is complete after pass 1), running a per-class
//!    program of members specialised by width and conversion.
//!
//! The image is zeroed in cache-sized chunks just ahead of the object being written, so
//! every byte is written once to memory and padding and members not on the wire are
//! zero. Scratch (the object table) persists between calls.

use heapwire_engine::RejectKind as K;
use std::ops::Deref;

use heapwire_schema::{CompiledSchema, NONE};

use super::{oerr, Conv, ObjError, Tables, NULL_REF};
use heapwire_engine::Options;

/// One wire member of a class, compiled: where it comes from and how it is stored.
#[derive(Clone, Copy, Debug)]
struct MemberOp {
    step: Step,
    /// Bytes on the wire.
    wire: u8,
    /// Offset of the member in the class's wire bytes.
    wire_at: u32,
    /// Offset of the member in the object.
    mem_at: u32,
    /// `Ref`: the class index references must be (or derive from); else unused.
    target: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Step {
    /// Wire and memory widths equal, bits copied (integers, floats, enums).
    Copy1,
    Copy2,
    Copy4,
    Copy8,
    /// A reference, relocated to `base + offset[index]` (pointer width 4 or 8).
    Ref4,
    Ref8,
    /// Anything else (widening, bools): the reference's `extend` then a store of `size`.
    Convert {
        wire: u8,
        size: u8,
        conv: Conv,
    },
}

/// A class as the decoder runs it.
#[derive(Clone, Copy, Debug)]
struct ClassProg {
    size: u32,
    align_mask: u32,
    wire_size: u32,
    msg: u32,
    /// Its members in `ops[first..end]`.
    first: u32,
    end: u32,
}

/// One object of the current decode.
#[derive(Clone, Copy, Debug, Default)]
struct Placed {
    off: u32,
    class: u32,
}

/// Bytes zeroed ahead of the writer at a time: small enough to stay in L1.
const ZERO_CHUNK: usize = 4096;

/// Reusable objgraph decoder for one compiled schema; scratch persists between calls.
pub struct ObjDecoder<S: Deref<Target = CompiledSchema>> {
    schema: S,
    t: Tables,
    progs: Vec<ClassProg>,
    ops: Vec<MemberOp>,
    /// message index → class index (NONE: not a class).
    class_of_msg: Vec<u32>,
    /// Objects of the last decode, in wire order.
    placed: Vec<Placed>,
}

#[inline(always)]
fn rd32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap())
}

impl<S: Deref<Target = CompiledSchema>> ObjDecoder<S> {
    /// `schema` is a reference or a shared pointer (`Arc`) to the compiled schema.
    pub fn new(schema: S) -> Self {
        let t = Tables::new(&schema);
        let mut progs = Vec::with_capacity(t.classes.len());
        let mut ops = Vec::new();
        for c in &t.classes {
            let first = ops.len() as u32;
            let mut wire_at = 0u32;
            for op in c.ops.iter().filter(|o| o.wire != 0) {
                let step = match (op.conv, op.wire, op.size) {
                    (Conv::Ref(_), _, 4) if t.ptr == 4 => Step::Ref4,
                    (Conv::Ref(_), _, 8) if t.ptr == 8 => Step::Ref8,
                    (Conv::Ref(_), _, _) => unreachable!("a reference member is pointer-sized"),
                    (Conv::Bool, w, s) => Step::Convert {
                        wire: w,
                        size: s,
                        conv: Conv::Bool,
                    },
                    (conv, w, s) if w == s => match w {
                        1 => Step::Copy1,
                        2 => Step::Copy2,
                        4 => Step::Copy4,
                        8 => Step::Copy8,
                        _ => Step::Convert {
                            wire: w,
                            size: s,
                            conv,
                        },
                    },
                    (conv, w, s) => Step::Convert {
                        wire: w,
                        size: s,
                        conv,
                    },
                };
                let target = if let Conv::Ref(t) = op.conv { t } else { NONE };
                ops.push(MemberOp {
                    step,
                    wire: op.wire,
                    wire_at,
                    mem_at: op.offset,
                    target,
                });
                wire_at += op.wire as u32;
            }
            debug_assert_eq!(wire_at, c.wire_size);
            progs.push(ClassProg {
                size: c.size,
                align_mask: c.align - 1,
                wire_size: c.wire_size,
                msg: c.msg,
                first,
                end: ops.len() as u32,
            });
        }
        let mut class_of_msg = vec![NONE; schema.messages.len()];
        for (ci, c) in t.classes.iter().enumerate() {
            class_of_msg[c.msg as usize] = ci as u32;
        }
        ObjDecoder {
            schema,
            t,
            progs,
            ops,
            class_of_msg,
            placed: Vec::new(),
        }
    }

    pub fn schema(&self) -> &CompiledSchema {
        &self.schema
    }

    pub fn tables(&self) -> &Tables {
        &self.t
    }

    /// Objects of the last successful decode: (class index, image offset), in wire order.
    pub fn objects(&self) -> impl ExactSizeIterator<Item = (usize, usize)> + '_ {
        self.placed
            .iter()
            .map(|p| (p.class as usize, p.off as usize))
    }

    /// Decodes `input` whose object 0 must be of message `root_msg` (a class) or a
    /// subclass, into `out` (replaced; empty after a rejection).
    pub fn decode(
        &mut self,
        root_msg: usize,
        input: &[u8],
        opts: &Options,
        out: &mut Vec<u8>,
    ) -> Result<(), ObjError> {
        out.clear();
        let total = self.place(root_msg, input, opts)?;
        // Every byte is written by `members` (zeroed chunks, then members): no need to
        // zero here, but a Vec cannot be grown uninitialised safely, so resize.
        out.resize(total, 0);
        let r = self.members(input, opts, out);
        if r.is_err() {
            out.clear();
        }
        r
    }

    /// Decodes into a caller's buffer (e.g. preallocated at address `opts.base`);
    /// returns the image size. Bytes of `out` past the image are untouched; after a
    /// rejection `out[..needed]` may hold a partly written image.
    pub fn decode_into(
        &mut self,
        root_msg: usize,
        input: &[u8],
        opts: &Options,
        out: &mut [u8],
    ) -> Result<usize, ObjError> {
        let total = self.place(root_msg, input, opts)?;
        if total > out.len() {
            // A rejected input says why rather than how much room it would need.
            self.check_references(input, opts)?;
            return Err(ObjError {
                kind: K::BufferTooSmall,
                offset: 0,
                needed: total as u64,
            });
        }
        self.members(input, opts, &mut out[..total])?;
        Ok(total)
    }

    /// The type-id pass: reads the ids, places every object contiguously in order,
    /// checks the input's length against the members' total. Returns the image size.
    fn place(&mut self, root_msg: usize, input: &[u8], opts: &Options) -> Result<usize, ObjError> {
        self.placed.clear();
        let root = match self.class_of_msg.get(root_msg) {
            Some(&c) if c != NONE => c,
            _ => return oerr(K::NotAClass, 0),
        };
        if opts.base % 8 != 0 {
            return oerr(K::BadBase, 0);
        }
        if input.len() < 4 {
            return oerr(K::Truncated, 0);
        }
        let n = rd32(input, 0) as usize;
        // Every object costs at least its 4-byte type id: memory stays bounded by the input.
        if n > (input.len() - 4) / 4 {
            return oerr(K::CountTooLarge, 0);
        }
        self.placed.reserve(n);
        let limit = opts.max_image_bytes.min(u32::MAX as u64);
        let mut top = 0u64;
        let mut wire_total = 4 + 4 * n as u64;
        for (i, id) in input[4..4 + 4 * n].chunks_exact(4).enumerate() {
            let id = u32::from_le_bytes(id.try_into().unwrap());
            let Some(c) = self.t.class_for_type(id) else {
                return oerr(K::UnknownType, 4 + 4 * i as u64);
            };
            if i == 0 && !self.t.is_sub(c, root) {
                return oerr(K::RootType, 4);
            }
            let p = &self.progs[c as usize];
            top = (top + p.align_mask as u64) & !(p.align_mask as u64);
            self.placed.push(Placed {
                off: top as u32,
                class: c,
            });
            top += p.size as u64;
            wire_total += p.wire_size as u64;
            if top > limit {
                return oerr(K::ImageTooLarge, 4 + 4 * i as u64);
            }
        }
        if wire_total > input.len() as u64 {
            return oerr(K::Truncated, self.truncation_point(input));
        }
        if wire_total < input.len() as u64 {
            return oerr(K::TrailingBytes, wire_total);
        }
        let limit = if self.t.ptr == 4 {
            1u64 << 32
        } else {
            u64::MAX
        };
        if opts.base.checked_add(top).is_none_or(|e| e > limit) {
            return oerr(K::BadBase, 0);
        }
        Ok(top as usize)
    }

    /// Where the members of a too-short input run out: the start of the first member
    /// that does not fit.
    #[cold]
    fn truncation_point(&self, input: &[u8]) -> u64 {
        let mut pos = 4 + 4 * self.placed.len() as u64;
        for p in &self.placed {
            let prog = &self.progs[p.class as usize];
            for op in &self.ops[prog.first as usize..prog.end as usize] {
                let w = op.wire as u64;
                if pos + w > input.len() as u64 {
                    return pos;
                }
                pos += w;
            }
        }
        input.len() as u64
    }

    /// The member pass: header words, members, references checked and relocated.
    /// `out` is exactly the image; `input` is exactly as long as `place` found.
    fn members(&self, input: &[u8], opts: &Options, out: &mut [u8]) -> Result<(), ObjError> {
        let n = self.placed.len();
        let base = opts.base;
        let ptr8 = self.t.ptr == 8;
        // At base 0, object 0's address would read as null: index 0 is refused there.
        let lowest_ref = (base == 0) as u32;
        let mut pos = 4 + 4 * n;
        let mut zeroed = 0usize;
        for p in &self.placed {
            let prog = &self.progs[p.class as usize];
            let o = p.off as usize;
            let end = o + prog.size as usize;
            if end > zeroed {
                let to = end.max(zeroed + ZERO_CHUNK).min(out.len());
                out[zeroed..to].fill(0);
                zeroed = to;
            }
            let obj = &mut out[o..end];
            let word = opts
                .type_words
                .get(prog.msg as usize)
                .copied()
                .unwrap_or(prog.msg as u64);
            if ptr8 {
                put8(obj, 0, word);
            } else {
                put4(obj, 0, word as u32);
            }
            let wire = &input[pos..pos + prog.wire_size as usize];
            for op in &self.ops[prog.first as usize..prog.end as usize] {
                let w = op.wire_at as usize;
                let m = op.mem_at as usize;
                match op.step {
                    Step::Ref4 | Step::Ref8 => {
                        let r = rd32(wire, w);
                        let addr = if r.wrapping_sub(lowest_ref) < n as u32 - lowest_ref
                            && self.t.is_sub(self.placed[r as usize].class, op.target)
                        {
                            base + self.placed[r as usize].off as u64
                        } else if r == NULL_REF {
                            0
                        } else {
                            return Err(self.bad_reference(r, op.target, base, pos + w));
                        };
                        if op.step == Step::Ref8 {
                            put8(obj, m, addr);
                        } else {
                            put4(obj, m, addr as u32);
                        }
                    }
                    Step::Copy4 => obj[m..m + 4].copy_from_slice(&wire[w..w + 4]),
                    Step::Copy8 => obj[m..m + 8].copy_from_slice(&wire[w..w + 8]),
                    Step::Copy1 => obj[m] = wire[w],
                    Step::Copy2 => obj[m..m + 2].copy_from_slice(&wire[w..w + 2]),
                    Step::Convert {
                        wire: ww,
                        size,
                        conv,
                    } => {
                        let v = super::extend(&wire[w..w + ww as usize], conv);
                        match size {
                            8 => put8(obj, m, v),
                            4 => put4(obj, m, v as u32),
                            2 => obj[m..m + 2].copy_from_slice(&(v as u16).to_le_bytes()),
                            _ => obj[m] = v as u8,
                        }
                    }
                }
            }
            pos += prog.wire_size as usize;
        }
        debug_assert_eq!(pos, input.len());
        Ok(())
    }

    /// The member pass's reference checks alone, for a request that cannot be written.
    #[cold]
    fn check_references(&self, input: &[u8], opts: &Options) -> Result<(), ObjError> {
        let mut pos = 4 + 4 * self.placed.len();
        for p in &self.placed {
            let prog = &self.progs[p.class as usize];
            for op in &self.ops[prog.first as usize..prog.end as usize] {
                if matches!(op.step, Step::Ref4 | Step::Ref8) {
                    let at = pos + op.wire_at as usize;
                    let r = rd32(input, at);
                    let ok = r == NULL_REF
                        || ((r as usize) < self.placed.len()
                            && self.t.is_sub(self.placed[r as usize].class, op.target)
                            && !(r == 0 && opts.base == 0));
                    if !ok {
                        return Err(self.bad_reference(r, op.target, opts.base, at));
                    }
                }
            }
            pos += prog.wire_size as usize;
        }
        Ok(())
    }

    /// Why reference `r` at input byte `at` was refused (the reference's order of checks).
    #[cold]
    fn bad_reference(&self, r: u32, target: u32, base: u64, at: usize) -> ObjError {
        let kind = if r as usize >= self.placed.len() {
            K::BadReference
        } else if !self.t.is_sub(self.placed[r as usize].class, target) {
            K::ReferenceType
        } else {
            debug_assert!(r == 0 && base == 0);
            K::BadBase
        };
        ObjError {
            kind,
            offset: at as u64,
            needed: 0,
        }
    }
}

#[inline(always)]
fn put8(obj: &mut [u8], at: usize, v: u64) {
    obj[at..at + 8].copy_from_slice(&v.to_le_bytes());
}

#[inline(always)]
fn put4(obj: &mut [u8], at: usize, v: u32) {
    obj[at..at + 4].copy_from_slice(&v.to_le_bytes());
}

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

use super::{oerr, rd32, Conv, ObjError, Tables, NULL_REF};
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
    /// `Ref` with at most 64 classes: bit c set when class c is `target` or derives from it.
    fits: u64,
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
    /// Integers widened from 1, 2 or 4 wire bytes to 4 or 8 in memory, sign- or
    /// zero-extended (narrow enums and lengths: the paper's 1-byte operation type).
    Widen { wire: u8, size: u8, signed: bool },
    /// Anything else (bools, narrowing): the reference's `extend` then a store of `size`.
    Convert { wire: u8, size: u8, conv: Conv },
}

/// A class as the decoder runs it.
#[derive(Clone, Copy, Debug)]
struct ClassProg {
    size: u32,
    align_mask: u32,
    wire_size: u32,
    msg: u32,
    /// Its members in `ops[first..end]`: references (`..refs_end`) first, so they run
    /// without dispatch, then the rest; each in wire order.
    first: u32,
    refs_end: u32,
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
    /// Type id → class index for the dense ids up to the largest a class uses (NONE: no
    /// class); other ids are looked up in the tables.
    by_type_id: Vec<u32>,
    /// Objects of the last decode, in wire order.
    placed: Vec<Placed>,
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
                    (Conv::Bool, w, s) => Step::Convert { wire: w, size: s, conv: Conv::Bool },
                    (conv, w, s) if w == s => match w {
                        1 => Step::Copy1,
                        2 => Step::Copy2,
                        4 => Step::Copy4,
                        8 => Step::Copy8,
                        _ => Step::Convert { wire: w, size: s, conv },
                    },
                    (conv @ (Conv::Signed | Conv::Unsigned), w @ (1 | 2 | 4), s @ (4 | 8)) if w < s => {
                        Step::Widen { wire: w, size: s, signed: conv == Conv::Signed }
                    }
                    (conv, w, s) => Step::Convert { wire: w, size: s, conv },
                };
                let target = if let Conv::Ref(t) = op.conv { t } else { NONE };
                let fits = (0..t.classes.len().min(64)).filter(|&c| t.is_sub(c as u32, target)).fold(0u64, |m, c| m | 1 << c);
                // What `members` relies on to write without bounds checks.
                let mem_width = match step {
                    Step::Ref4 => 4,
                    Step::Ref8 => 8,
                    _ => op.size as u32,
                };
                assert!(op.offset + mem_width <= c.size && wire_at + op.wire as u32 <= c.wire_size && op.wire <= 8 && op.size <= 8);
                assert!(!matches!(step, Step::Ref4 | Step::Ref8) || op.wire == 4, "references are 4 bytes on the wire");
                ops.push(MemberOp { step, wire: op.wire, wire_at, mem_at: op.offset, target, fits });
                wire_at += op.wire as u32;
            }
            debug_assert_eq!(wire_at, c.wire_size);
            assert!(c.size >= t.ptr, "every object starts with its header word");
            let (refs, rest): (Vec<MemberOp>, Vec<MemberOp>) = ops.drain(first as usize..).partition(|o| matches!(o.step, Step::Ref4 | Step::Ref8));
            let refs_end = first + refs.len() as u32;
            ops.extend(refs.into_iter().chain(rest));
            progs.push(ClassProg { size: c.size, align_mask: c.align - 1, wire_size: c.wire_size, msg: c.msg, first, refs_end, end: ops.len() as u32 });
        }
        let mut class_of_msg = vec![NONE; schema.messages.len()];
        for (ci, c) in t.classes.iter().enumerate() {
            class_of_msg[c.msg as usize] = ci as u32;
        }
        let dense_ids: Vec<u32> = t.classes.iter().map(|c| c.type_id).filter(|&id| id < 4096).collect();
        let mut by_type_id = vec![NONE; dense_ids.iter().max().map_or(0, |&m| m as usize + 1)];
        for id in dense_ids {
            by_type_id[id as usize] = t.class_for_type(id).unwrap();
        }
        ObjDecoder { schema, t, progs, ops, class_of_msg, by_type_id, placed: Vec::new() }
    }

    pub fn schema(&self) -> &CompiledSchema {
        &self.schema
    }

    pub fn tables(&self) -> &Tables {
        &self.t
    }

    /// Objects of the last successful decode: (class index, image offset), in wire order.
    pub fn objects(&self) -> impl ExactSizeIterator<Item = (usize, usize)> + '_ {
        self.placed.iter().map(|p| (p.class as usize, p.off as usize))
    }

    /// Decodes `input` whose object 0 must be of message `root_msg` (a class) or a
    /// subclass, into `out` (replaced; empty after a rejection).
    pub fn decode(&mut self, root_msg: usize, input: &[u8], opts: &Options, out: &mut Vec<u8>) -> Result<(), ObjError> {
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
    pub fn decode_into(&mut self, root_msg: usize, input: &[u8], opts: &Options, out: &mut [u8]) -> Result<usize, ObjError> {
        let total = self.place(root_msg, input, opts)?;
        if total > out.len() {
            // A rejected input says why rather than how much room it would need.
            self.check_references(input, opts)?;
            return Err(ObjError { kind: K::BufferTooSmall, offset: 0, needed: total as u64 });
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
        let n = super::object_count(input, opts)?;
        self.placed.reserve(n);
        let limit = opts.max_image_bytes.min(u32::MAX as u64);
        let mut top = 0u64;
        let mut wire_total = 4 + 4 * n as u64;
        let slots = &mut self.placed.spare_capacity_mut()[..n];
        for (i, (id, slot)) in input[4..4 + 4 * n].chunks_exact(4).zip(slots).enumerate() {
            let id = u32::from_le_bytes(id.try_into().unwrap());
            let c = match self.by_type_id.get(id as usize) {
                Some(&c) if c != NONE => c,
                _ => match self.t.class_for_type(id) {
                    Some(c) => c,
                    None => return oerr(K::UnknownType, 4 + 4 * i as u64),
                },
            };
            if i == 0 && !self.t.is_sub(c, root) {
                return oerr(K::RootType, 4);
            }
            let p = &self.progs[c as usize];
            top = (top + p.align_mask as u64) & !(p.align_mask as u64);
            slot.write(Placed { off: top as u32, class: c });
            top += p.size as u64;
            wire_total += p.wire_size as u64;
            if top > limit {
                return oerr(K::ImageTooLarge, 4 + 4 * i as u64);
            }
        }
        // SAFETY: the loop wrote all `n` slots (it returns early otherwise).
        unsafe { self.placed.set_len(n) };
        if wire_total > input.len() as u64 {
            return oerr(K::Truncated, self.truncation_point(input));
        }
        if wire_total < input.len() as u64 {
            return oerr(K::TrailingBytes, wire_total);
        }
        super::check_image_range(self.t.ptr, opts.base, top)?;
        Ok(top as usize)
    }

    /// Where the members of a too-short input run out: the start of the first member
    /// that does not fit.
    #[cold]
    fn truncation_point(&self, input: &[u8]) -> u64 {
        let mut pos = 4 + 4 * self.placed.len() as u64;
        let len = input.len() as u64;
        for p in &self.placed {
            let prog = &self.progs[p.class as usize];
            if pos + prog.wire_size as u64 > len {
                let ops = &self.ops[prog.first as usize..prog.end as usize];
                let cut = ops.iter().filter(|op| pos + op.wire_at as u64 + op.wire as u64 > len).map(|op| op.wire_at).min();
                return pos + cut.unwrap_or(0) as u64;
            }
            pos += prog.wire_size as u64;
        }
        len
    }

    /// The member pass: header words, members, references checked and relocated.
    /// `out` is exactly the image; `input` is exactly as long as `place` found.
    fn members(&self, input: &[u8], opts: &Options, out: &mut [u8]) -> Result<(), ObjError> {
        if self.t.ptr == 8 {
            self.members_for::<true>(input, opts, out)
        } else {
            self.members_for::<false>(input, opts, out)
        }
    }

    /// [`Self::members`] for 8-byte (`PTR8`) or 4-byte pointers.
    fn members_for<const PTR8: bool>(&self, input: &[u8], opts: &Options, out: &mut [u8]) -> Result<(), ObjError> {
        let n = self.placed.len();
        let base = opts.base;
        // At base 0, object 0's address would read as null: index 0 is refused there.
        let lowest_ref = (base == 0) as u32;
        let refs_ok = (n as u32).wrapping_sub(lowest_ref);
        let mut pos = 4 + 4 * n;
        let mut zeroed = 0usize;
        assert!(input.len() >= pos && self.placed.last().is_none_or(|p| p.off as usize + self.progs[p.class as usize].size as usize <= out.len()));
        let (src, dst) = (input.as_ptr(), out.as_mut_ptr());
        for p in &self.placed {
            let prog = &self.progs[p.class as usize];
            let o = p.off as usize;
            let end = o + prog.size as usize;
            if end > zeroed {
                let to = end.max(zeroed + ZERO_CHUNK).min(out.len());
                out[zeroed..to].fill(0);
                zeroed = to;
            }
            let word = opts.type_words.get(prog.msg as usize).copied().unwrap_or(prog.msg as u64);
            let wire_end = pos + prog.wire_size as usize;
            assert!(wire_end <= input.len());
            // SAFETY: objects are placed in order inside the image (`place`), so
            // `o + size <= out.len()` (asserted for the last, which ends furthest);
            // `pos..wire_end` is inside `input` (asserted); `new` checked that every
            // member lies inside its object and its class's wire bytes; references
            // are range-checked before `placed` is indexed with them.
            unsafe {
                let obj = dst.add(o);
                let wire = src.add(pos);
                if PTR8 {
                    put8(obj, word);
                } else {
                    put4(obj, word as u32);
                }
                for op in self.ops.get_unchecked(prog.first as usize..prog.refs_end as usize) {
                    let r = rd(wire.add(op.wire_at as usize), 4) as u32;
                    let addr = if r.wrapping_sub(lowest_ref) < refs_ok && self.fits(op, self.placed.get_unchecked(r as usize).class) {
                        base + self.placed.get_unchecked(r as usize).off as u64
                    } else if r == NULL_REF {
                        0
                    } else {
                        return Err(self.bad_reference(r, op.target, base, pos + op.wire_at as usize));
                    };
                    let m = obj.add(op.mem_at as usize);
                    if PTR8 {
                        put8(m, addr);
                    } else {
                        put4(m, addr as u32);
                    }
                }
                for op in self.ops.get_unchecked(prog.refs_end as usize..prog.end as usize) {
                    let w = wire.add(op.wire_at as usize);
                    let m = obj.add(op.mem_at as usize);
                    match op.step {
                        Step::Ref4 | Step::Ref8 => unreachable!("references come first"),
                        Step::Copy4 => std::ptr::copy_nonoverlapping(w, m, 4),
                        Step::Copy8 => std::ptr::copy_nonoverlapping(w, m, 8),
                        Step::Copy1 => *m = *w,
                        Step::Copy2 => std::ptr::copy_nonoverlapping(w, m, 2),
                        Step::Widen { wire: ww, size, signed } => {
                            let v = match (ww, signed) {
                                (1, true) => *w as i8 as i64 as u64,
                                (1, false) => *w as u64,
                                (2, true) => i16::from_le_bytes(std::ptr::read_unaligned(w as *const [u8; 2])) as i64 as u64,
                                (2, false) => u16::from_le_bytes(std::ptr::read_unaligned(w as *const [u8; 2])) as u64,
                                (_, true) => rd(w, 4) as u32 as i32 as i64 as u64,
                                (_, false) => rd(w, 4),
                            };
                            if size == 8 {
                                put8(m, v);
                            } else {
                                put4(m, v as u32);
                            }
                        }
                        Step::Convert { wire: ww, size, conv } => {
                            let v = super::extend(std::slice::from_raw_parts(w, ww as usize), conv);
                            std::ptr::copy_nonoverlapping(v.to_le_bytes().as_ptr(), m, size as usize);
                        }
                    }
                }
            }
            pos = wire_end;
        }
        debug_assert_eq!(pos, input.len());
        Ok(())
    }

    /// Whether an object of class `c` may be the target of reference member `op`.
    #[inline(always)]
    fn fits(&self, op: &MemberOp, c: u32) -> bool {
        if self.progs.len() <= 64 {
            op.fits >> c & 1 != 0
        } else {
            self.t.is_sub(c, op.target)
        }
    }

    /// The member pass's reference checks alone, for a request that cannot be written.
    #[cold]
    fn check_references(&self, input: &[u8], opts: &Options) -> Result<(), ObjError> {
        let mut pos = 4 + 4 * self.placed.len();
        for p in &self.placed {
            let prog = &self.progs[p.class as usize];
            for op in &self.ops[prog.first as usize..prog.refs_end as usize] {
                {
                    let at = pos + op.wire_at as usize;
                    let r = rd32(input, at);
                    let ok = r == NULL_REF
                        || ((r as usize) < self.placed.len() && self.t.is_sub(self.placed[r as usize].class, op.target) && !(r == 0 && opts.base == 0));
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
        ObjError { kind, offset: at as u64, needed: 0 }
    }
}

/// Little-endian stores and loads at raw pointers; the caller vouches for the bytes.
#[inline(always)]
unsafe fn put8(at: *mut u8, v: u64) {
    std::ptr::write_unaligned(at as *mut [u8; 8], v.to_le_bytes());
}

#[inline(always)]
unsafe fn put4(at: *mut u8, v: u32) {
    std::ptr::write_unaligned(at as *mut [u8; 4], v.to_le_bytes());
}

#[inline(always)]
unsafe fn rd(at: *const u8, width: usize) -> u64 {
    debug_assert_eq!(width, 4);
    u32::from_le_bytes(std::ptr::read_unaligned(at as *const [u8; 4])) as u64
}

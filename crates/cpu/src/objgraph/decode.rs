//! Objgraph wire bytes → heap image, the fast path. Writes the same bytes and rejects
//! with the same error (kind and offset) as [`super::reference::ReferenceDecoder`], the
//! literal form of `docs/objgraph-wire.md`; `decode_tests.rs` proves it on random graphs
//! and random bytes.
//!
//! Two streaming passes, as the paper's core does:
//! 1. the type-id pass reads the ids, places every object (class and image offset in
//!    one 8-byte entry) and sums the members' wire length;
//! 2. the member pass writes each object once, front to back, as whole 8-byte words
//!    composed in a register: the header word, the scalar members (sign- or
//!    zero-extended, shifted into place) and zeros for padding and members not on the
//!    wire, by a per-class program compiled when the decoder is built; then the
//!    references, each checked as it is relocated (the id → address table is complete
//!    after pass 1).
//!
//! Every image byte is stored exactly once (twice only where a 4-byte reference shares
//! a word), so no zeroing pass precedes the writer and `decode` does not zero its `Vec`.
//! Scratch (the object table) persists between calls.

use heapwire_engine::RejectKind as K;
use std::ops::Deref;

use heapwire_schema::{CompiledSchema, NONE};

use super::{oerr, rd32, Conv, ObjError, Tables, NULL_REF};
use heapwire_engine::Options;

/// A scalar member of a class, compiled: where its wire bytes are and where in the
/// object's 8-byte words it goes. Also stands in for a word of zeros (`mask` 0).
#[derive(Clone, Copy, Debug)]
struct Part {
    /// Start of the 8 bytes that end with the member's last wire byte, relative to the
    /// object's wire bytes (negative for early members: the bytes before an object's
    /// members are the type ids or earlier members, never outside the input).
    load_at: i32,
    /// The member's bits kept after extension (its memory size), before the shift.
    mask: u64,
    /// 64 − 8 × wire width: the right shift that extends the loaded bytes.
    ext: u8,
    /// Bit position of the member in its word.
    shift: u8,
    signed: bool,
    boolean: bool,
    /// The last part of its word: store the word, then zero `word_at + width..zero_to`.
    flush: bool,
    /// Bytes of the word: 8, or 4 for the last word of an object whose size is 4 mod 8.
    width: u8,
    word_at: u32,
    zero_to: u32,
}

/// A reference member of a class, compiled.
#[derive(Clone, Copy, Debug)]
struct RefPart {
    /// Offset of the reference in the class's wire bytes.
    wire_at: u32,
    /// Offset of the pointer in the object.
    mem_at: u32,
    /// The class index targets must be (or derive from).
    target: u32,
    /// With at most 64 classes: bit c set when class c is `target` or derives from it.
    fits: u64,
}

/// 16 bytes of an object as one byte shuffle of the class's wire bytes (x86-64 with
/// SSSE3): every scalar member in them copied, sign- or zero-extended, and zeros for
/// the rest (header, references, padding): one load, one or two shuffles, one store.
#[derive(Clone, Copy, Debug)]
#[repr(C, align(16))]
struct Chunk {
    /// Output byte j is window byte `shuf[j]`, or zero when bit 7 is set.
    shuf: [u8; 16],
    /// Output byte j is all ones when window byte `sign[j]` is negative (sign extension;
    /// bit 7 set: never).
    sign: [u8; 16],
    /// Start of the 16-byte window, relative to the object's wire bytes: it ends with the
    /// last wire byte of the chunk's members (or at the object's first), so it never reads
    /// past the object's own bytes.
    win: i32,
    signed: bool,
}

/// A class as the decoder runs it.
#[derive(Clone, Copy, Debug)]
struct ClassProg {
    size: u32,
    align_mask: u32,
    wire_size: u32,
    msg: u32,
    /// No scalar member shares word 0 with the header: it is stored at once (`head_width`
    /// bytes), followed by zeros up to `head_zero_to`.
    head_alone: bool,
    head_width: u8,
    head_zero_to: u32,
    /// Its scalar parts in `parts[parts_first..parts_end]`, in memory (= wire) order;
    /// its references in `refs[refs_first..refs_end]`, in wire order.
    parts_first: u32,
    parts_end: u32,
    refs_first: u32,
    refs_end: u32,
    /// Its chunks in `chunks[chunks_first..chunks_end]`, covering the object rounded up
    /// to 16 bytes; `shuffle` false when a member cannot be shuffled (bools, narrowing):
    /// the word program then writes every object of the class.
    chunks_first: u32,
    chunks_end: u32,
    shuffle: bool,
}

/// A concrete class as the type-id pass needs it, by type id.
#[derive(Clone, Copy, Debug)]
struct IdSlot {
    class: u32,
    size: u32,
    wire_size: u32,
    align_mask: u32,
}

const NO_SLOT: IdSlot = IdSlot { class: NONE, size: 0, wire_size: 0, align_mask: 0 };

/// One object of the current decode.
#[derive(Clone, Copy, Debug, Default)]
struct Placed {
    off: u32,
    class: u32,
}

/// Type ids below this have a direct slot; larger ones are looked up in the tables.
const DENSE_IDS: u32 = 4096;

/// Reusable objgraph decoder for one compiled schema; scratch persists between calls.
pub struct ObjDecoder<S: Deref<Target = CompiledSchema>> {
    schema: S,
    t: Tables,
    progs: Vec<ClassProg>,
    parts: Vec<Part>,
    refs: Vec<RefPart>,
    chunks: Vec<Chunk>,
    /// Whether this CPU shuffles bytes (SSSE3): objects are then written by chunks.
    simd: bool,
    /// Every class's size is a multiple of every class's alignment: objects follow each
    /// other without gaps.
    gapless: bool,
    /// message index → class index (NONE: not a class).
    class_of_msg: Vec<u32>,
    /// Type id → slot for the dense ids up to the largest a class uses (`class` NONE: no
    /// class); other ids are looked up in the tables.
    by_type_id: Vec<IdSlot>,
    /// Objects of the last decode, in wire order.
    placed: Vec<Placed>,
}

impl<S: Deref<Target = CompiledSchema>> ObjDecoder<S> {
    /// `schema` is a reference or a shared pointer (`Arc`) to the compiled schema.
    pub fn new(schema: S) -> Self {
        let t = Tables::new(&schema);
        let mut progs = Vec::with_capacity(t.classes.len());
        let (mut parts, mut refs, mut chunks) = (Vec::new(), Vec::new(), Vec::new());
        for c in &t.classes {
            let mut prog = compile_class(&t, c, &mut parts, &mut refs);
            prog.chunks_first = chunks.len() as u32;
            prog.shuffle = compile_chunks(c, &mut chunks);
            prog.chunks_end = chunks.len() as u32;
            progs.push(prog);
        }
        let mut class_of_msg = vec![NONE; schema.messages.len()];
        for (ci, c) in t.classes.iter().enumerate() {
            class_of_msg[c.msg as usize] = ci as u32;
        }
        let dense_ids: Vec<u32> = t.classes.iter().map(|c| c.type_id).filter(|&id| id < DENSE_IDS).collect();
        let mut by_type_id = vec![NO_SLOT; dense_ids.iter().max().map_or(0, |&m| m as usize + 1)];
        for id in dense_ids {
            let c = t.class_for_type(id).unwrap();
            by_type_id[id as usize] = slot(&progs, c);
        }
        let gapless = progs.iter().all(|p| progs.iter().all(|q| p.size & q.align_mask == 0));
        ObjDecoder { schema, t, progs, parts, refs, chunks, simd: simd_available(), gapless, class_of_msg, by_type_id, placed: Vec::new() }
    }

    /// The same decoder writing every object with the word program (what CPUs without
    /// byte shuffles run), for proving the two writers identical.
    #[cfg(test)]
    pub(crate) fn without_shuffles(mut self) -> Self {
        self.simd = false;
        self
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
        out.reserve(total);
        // The member pass stores every byte of `0..total` (see `compile_class`), so the
        // spare capacity needs no zeroing first.
        self.members(input, opts, out.as_mut_ptr(), total)?;
        // SAFETY: `members` succeeded, so it initialised all `total` bytes.
        unsafe { out.set_len(total) };
        Ok(())
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
        self.members(input, opts, out.as_mut_ptr(), total)?;
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
        let ids = &input[4..4 + 4 * n];
        if n > 0 {
            // Object 0 first: its class is checked against the root's (after its id is
            // known, before its size counts: the reference's order of errors).
            let s = self.slot_for(rd32(ids, 0), 0)?;
            if !self.t.is_sub(s.class, root) {
                return oerr(K::RootType, 4);
            }
        }
        let slots = self.placed.spare_capacity_mut()[..n].as_mut_ptr() as *mut Placed;
        let (dense, dense_len) = (self.by_type_id.as_ptr(), self.by_type_id.len());
        for i in 0..n {
            let id = rd32(ids, 4 * i);
            let s = if (id as usize) < dense_len && unsafe { (*dense.add(id as usize)).class } != NONE {
                // SAFETY: `id` is in range (checked).
                unsafe { *dense.add(id as usize) }
            } else {
                self.slot_for(id, i)?
            };
            top = (top + s.align_mask as u64) & !(s.align_mask as u64);
            // SAFETY: `slots` has room for `n` entries (reserved above).
            unsafe { slots.add(i).write(Placed { off: top as u32, class: s.class }) };
            top += s.size as u64;
            wire_total += s.wire_size as u64;
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

    /// The slot of type id `id` (object `i`) when it is not a dense one, or why not.
    #[cold]
    fn slot_for(&self, id: u32, i: usize) -> Result<IdSlot, ObjError> {
        match self.by_type_id.get(id as usize) {
            Some(s) if s.class != NONE => Ok(*s),
            _ => match self.t.class_for_type(id) {
                Some(c) => Ok(slot(&self.progs, c)),
                None => oerr(K::UnknownType, 4 + 4 * i as u64),
            },
        }
    }

    /// Where the members of a too-short input run out: the start of the first member
    /// that does not fit.
    #[cold]
    fn truncation_point(&self, input: &[u8]) -> u64 {
        let mut pos = 4 + 4 * self.placed.len() as u64;
        let len = input.len() as u64;
        for p in &self.placed {
            let c = &self.t.classes[p.class as usize];
            for op in c.ops.iter().filter(|o| o.wire != 0) {
                if pos + op.wire as u64 > len {
                    return pos;
                }
                pos += op.wire as u64;
            }
        }
        len
    }

    /// The member pass: every byte of the image `dst[..total]` written, references
    /// checked and relocated. `input` is exactly as long as `place` found.
    fn members(&self, input: &[u8], opts: &Options, dst: *mut u8, total: usize) -> Result<(), ObjError> {
        #[cfg(target_arch = "x86_64")]
        if self.simd {
            // SAFETY: `simd` is set only when the CPU has SSSE3.
            return unsafe {
                match (self.t.ptr == 8, self.progs.len() <= 64) {
                    (true, true) => self.members_ssse3::<true, true>(input, opts, dst, total),
                    (true, false) => self.members_ssse3::<true, false>(input, opts, dst, total),
                    (false, true) => self.members_ssse3::<false, true>(input, opts, dst, total),
                    (false, false) => self.members_ssse3::<false, false>(input, opts, dst, total),
                }
            };
        }
        match (self.t.ptr == 8, self.progs.len() <= 64) {
            (true, true) => self.members_for::<true, true>(input, opts, dst, total),
            (true, false) => self.members_for::<true, false>(input, opts, dst, total),
            (false, true) => self.members_for::<false, true>(input, opts, dst, total),
            (false, false) => self.members_for::<false, false>(input, opts, dst, total),
        }
    }

    /// [`Self::members_for`] with byte shuffles, compiled for SSSE3: objects whose
    /// chunks fit are written by them, the others by the word program. The loop is
    /// kept lean (few live values), as it runs once per object.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "ssse3")]
    unsafe fn members_ssse3<const PTR8: bool, const MASKS: bool>(&self, input: &[u8], opts: &Options, dst: *mut u8, total: usize) -> Result<(), ObjError> {
        let n = self.placed.len();
        // With three objects or more, every object's bytes start 16 bytes or more into
        // the input (count and ids), so every chunk's window is inside it. Objects
        // whose chunks would end past the image (the last ones, within 16 bytes of its
        // end) are written by the word program; so are all of a graph with gaps
        // between objects (classes of different alignment), which this loop does not
        // zero.
        if n < 3 || !MASKS || !self.gapless {
            return self.members_for::<PTR8, MASKS>(input, opts, dst, total);
        }
        let mut chunked = n;
        while chunked > 0 {
            let p = self.placed[chunked - 1];
            let prog = &self.progs[p.class as usize];
            if p.off as usize + 16 * (prog.chunks_end - prog.chunks_first) as usize <= total {
                break;
            }
            chunked -= 1;
        }
        let base = opts.base;
        let lowest_ref = (base == 0) as u32;
        let refs_ok = (n as u32).wrapping_sub(lowest_ref);
        // Header words by class (at most 64 classes here).
        let mut heads = [std::mem::MaybeUninit::<u64>::uninit(); 64];
        for (h, prog) in heads.iter_mut().zip(&self.progs) {
            let w = opts.type_words.get(prog.msg as usize).copied().unwrap_or(prog.msg as u64);
            h.write(if PTR8 { w } else { w & u32::MAX as u64 });
        }
        // SAFETY: the first `progs.len()` (every class index) are written.
        let heads = heads.as_ptr() as *const u64;
        let wire_start = 4 + 4 * n;
        // `place` found the input exactly as long as the objects' wire bytes.
        let tail_wire: usize = self.placed[chunked..].iter().map(|p| self.progs[p.class as usize].wire_size as usize).sum();
        let wire_len = input.len().checked_sub(wire_start + tail_wire).expect("the input holds every object's wire bytes");
        assert!(self.placed.last().is_some_and(|p| p.off as usize + self.progs[p.class as usize].size as usize == total));
        let (placed, progs, chunks, refs) = (self.placed.as_ptr(), self.progs.as_ptr(), self.chunks.as_ptr(), self.refs.as_ptr());
        let mut wire = input.as_ptr().add(wire_start);
        // SAFETY: objects are placed in order, contiguously (`gapless`), inside the image
        // (`place`; the last ends at `total`), and the first `chunked` objects' chunks end
        // inside it; their wire bytes lie inside `input` (asserted: `wire_len`), 16 bytes
        // or more from its start, and every chunk's window ends inside its object's wire
        // bytes (`compile_chunks`); references lie inside their object and its wire bytes
        // (`compile_class`) and are range-checked before `placed` is indexed with them.
        for k in 0..chunked {
            let p = *placed.add(k);
            let prog = &*progs.add(p.class as usize);
            let obj = dst.add(p.off as usize);
            if prog.shuffle {
                shuffle_chunks(std::slice::from_raw_parts(chunks.add(prog.chunks_first as usize), (prog.chunks_end - prog.chunks_first) as usize), wire, obj);
                store(obj, *heads.add(p.class as usize), if PTR8 { 8 } else { 4 });
            } else {
                self.word_program(prog, *heads.add(p.class as usize), wire, obj);
            }
            for r in std::slice::from_raw_parts(refs.add(prog.refs_first as usize), (prog.refs_end - prog.refs_first) as usize) {
                let i = u32::from_le_bytes(std::ptr::read_unaligned(wire.add(r.wire_at as usize) as *const [u8; 4]));
                let addr = if i.wrapping_sub(lowest_ref) < refs_ok {
                    let t = *placed.add(i as usize);
                    if r.fits >> t.class & 1 == 0 {
                        return Err(self.bad_reference(i, r.target, base, wire.offset_from(input.as_ptr()) as usize + r.wire_at as usize));
                    }
                    base + t.off as u64
                } else if i == NULL_REF {
                    0
                } else {
                    return Err(self.bad_reference(i, r.target, base, wire.offset_from(input.as_ptr()) as usize + r.wire_at as usize));
                };
                store(obj.add(r.mem_at as usize), addr, if PTR8 { 8 } else { 4 });
            }
            wire = wire.add(prog.wire_size as usize);
        }
        // The last objects, by the word program.
        self.members_from::<PTR8, MASKS>(chunked, wire_start + wire_len, input, opts, dst, total)
    }

    /// [`Self::members`] for 8-byte (`PTR8`) or 4-byte pointers, and at most 64 classes
    /// (`MASKS`: a reference's target check is one bit test) or more, with the word
    /// program alone.
    #[inline(always)]
    fn members_for<const PTR8: bool, const MASKS: bool>(&self, input: &[u8], opts: &Options, dst: *mut u8, total: usize) -> Result<(), ObjError> {
        self.members_from::<PTR8, MASKS>(0, 4 + 4 * self.placed.len(), input, opts, dst, total)
    }

    /// [`Self::members_for`] from object `first` on, whose wire bytes start at `pos`
    /// (the earlier objects written, without gaps after them).
    #[inline(always)]
    fn members_from<const PTR8: bool, const MASKS: bool>(&self, first: usize, mut pos: usize, input: &[u8], opts: &Options, dst: *mut u8, total: usize) -> Result<(), ObjError> {
        let n = self.placed.len();
        let base = opts.base;
        // At base 0, object 0's address would read as null: index 0 is refused there.
        let lowest_ref = (base == 0) as u32;
        let refs_ok = (n as u32).wrapping_sub(lowest_ref);
        let head_mask = if PTR8 { u64::MAX } else { u32::MAX as u64 };
        // End of the last object written: alignment gaps before the next are zeroed.
        let mut written = match first {
            0 => 0,
            _ => self.placed[first - 1].off as usize + self.progs[self.placed[first - 1].class as usize].size as usize,
        };
        assert!(input.len() >= pos && pos >= 4 + 4 * n && self.placed.last().is_none_or(|p| p.off as usize + self.progs[p.class as usize].size as usize == total));
        let src = input.as_ptr();
        for p in &self.placed[first..] {
            let prog = &self.progs[p.class as usize];
            let o = p.off as usize;
            let wire_end = pos + prog.wire_size as usize;
            assert!(wire_end <= input.len());
            let head = opts.type_words.get(prog.msg as usize).copied().unwrap_or(prog.msg as u64) & head_mask;
            // SAFETY: objects are placed in order inside the image (`place`), so
            // `written <= o` and `o + size <= total` (asserted for the last, which ends
            // furthest), and `dst` has `total` writable bytes; `pos..wire_end` is inside
            // `input` (asserted) and at least 8 bytes past its start (the count and one
            // type id precede any member), so every part's 8-byte load ending at a
            // member's last byte is inside `input`; `compile_class` checked that every
            // part, zero run and reference lies inside its object and its class's wire
            // bytes; references are range-checked before `placed` is indexed with them.
            unsafe {
                if o != written {
                    zero(dst.add(written), dst.add(o));
                }
                written = o + prog.size as usize;
                let obj = dst.add(o);
                let wire = src.add(pos);
                self.word_program(prog, head, wire, obj);
                for r in self.refs.get_unchecked(prog.refs_first as usize..prog.refs_end as usize) {
                    let i = u32::from_le_bytes(std::ptr::read_unaligned(wire.add(r.wire_at as usize) as *const [u8; 4]));
                    let addr = if i.wrapping_sub(lowest_ref) < refs_ok {
                        let t = *self.placed.get_unchecked(i as usize);
                        let fits = if MASKS { r.fits >> t.class & 1 != 0 } else { self.t.is_sub(t.class, r.target) };
                        if !fits {
                            return Err(self.bad_reference(i, r.target, base, pos + r.wire_at as usize));
                        }
                        base + t.off as u64
                    } else if i == NULL_REF {
                        0
                    } else {
                        return Err(self.bad_reference(i, r.target, base, pos + r.wire_at as usize));
                    };
                    let m = obj.add(r.mem_at as usize);
                    if PTR8 {
                        std::ptr::write_unaligned(m as *mut [u8; 8], addr.to_le_bytes());
                    } else {
                        std::ptr::write_unaligned(m as *mut [u8; 4], (addr as u32).to_le_bytes());
                    }
                }
            }
            pos = wire_end;
        }
        debug_assert_eq!(pos, input.len());
        debug_assert_eq!(written, total);
        Ok(())
    }

    /// Writes one object but its references with the class's word program: the header
    /// word, scalar members composed into whole words, zeros.
    ///
    /// # Safety
    /// As in [`Self::members_for`]: `obj` has the class's size writable, `wire` is the
    /// object's wire bytes at least 8 bytes into the input.
    #[inline(always)]
    unsafe fn word_program(&self, prog: &ClassProg, head: u64, wire: *const u8, obj: *mut u8) {
        let mut acc = head;
        if prog.head_alone {
            store(obj, head, prog.head_width);
            zero(obj.add(prog.head_width as usize), obj.add(prog.head_zero_to as usize));
            acc = 0;
        }
        for part in self.parts.get_unchecked(prog.parts_first as usize..prog.parts_end as usize) {
            let raw = u64::from_le_bytes(std::ptr::read_unaligned(wire.offset(part.load_at as isize) as *const [u8; 8]));
            let v = if part.signed { ((raw as i64) >> part.ext) as u64 } else { raw >> part.ext };
            let v = if part.boolean { (v != 0) as u64 } else { v };
            acc |= (v & part.mask) << part.shift;
            if part.flush {
                store(obj.add(part.word_at as usize), acc, part.width);
                zero(obj.add(part.word_at as usize + part.width as usize), obj.add(part.zero_to as usize));
                acc = 0;
            }
        }
    }

    /// The member pass's reference checks alone, for a request that cannot be written.
    #[cold]
    fn check_references(&self, input: &[u8], opts: &Options) -> Result<(), ObjError> {
        let mut pos = 4 + 4 * self.placed.len();
        for p in &self.placed {
            let prog = &self.progs[p.class as usize];
            for r in &self.refs[prog.refs_first as usize..prog.refs_end as usize] {
                let at = pos + r.wire_at as usize;
                let i = rd32(input, at);
                let ok = i == NULL_REF
                    || ((i as usize) < self.placed.len() && self.t.is_sub(self.placed[i as usize].class, r.target) && !(i == 0 && opts.base == 0));
                if !ok {
                    return Err(self.bad_reference(i, r.target, opts.base, at));
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

fn slot(progs: &[ClassProg], c: u32) -> IdSlot {
    let p = &progs[c as usize];
    IdSlot { class: c, size: p.size, wire_size: p.wire_size, align_mask: p.align_mask }
}

/// Which part of the word program stores the word that a following zero run extends.
#[derive(Clone, Copy)]
enum Flush {
    Head,
    Part(usize),
}

/// Compiles class `c` into its word program: appends its parts and references and
/// returns its [`ClassProg`]. Every byte of the object is stored by the header store, a
/// flushed word or a zero run after one of them, or else by a reference filling its
/// whole word — what `decode` relies on to skip zeroing (asserted here).
fn compile_class(t: &Tables, c: &super::ClassT, parts: &mut Vec<Part>, refs: &mut Vec<RefPart>) -> ClassProg {
    let (size, ptr) = (c.size as usize, t.ptr as usize);
    assert!(size >= ptr && size % 4 == 0 && ptr % 4 == 0, "an object is whole 4-byte units and starts with its header word");
    let (parts_first, refs_first) = (parts.len() as u32, refs.len() as u32);
    // Bytes a reference is stored to.
    let mut is_ref = vec![false; size];
    // Scalar members by the object offset of their word.
    let mut scalars: Vec<(usize, Part)> = Vec::new();
    let mut wire_at = 0u32;
    for op in c.ops.iter().filter(|o| o.wire != 0) {
        let (at, w, s) = (op.offset as usize, op.wire as usize, op.size as usize);
        assert!(at >= ptr && at + s <= size && (1..=8).contains(&w) && (1..=8).contains(&s), "member of {s} bytes at {at} of a {size}-byte object");
        assert_eq!(at / 8, (at + s - 1) / 8, "a member lies inside one 8-byte word of its object");
        match op.conv {
            Conv::Ref(target) => {
                assert!(s == ptr && w == 4, "a reference is pointer-sized in memory and 4 bytes on the wire");
                is_ref[at..at + s].fill(true);
                let fits = (0..t.classes.len().min(64)).filter(|&k| t.is_sub(k as u32, target)).fold(0u64, |m, k| m | 1 << k);
                refs.push(RefPart { wire_at, mem_at: at as u32, target, fits });
            }
            conv => scalars.push((
                at - at % 8,
                Part {
                    load_at: (wire_at + w as u32) as i32 - 8,
                    mask: if s == 8 { u64::MAX } else { (1u64 << (8 * s)) - 1 },
                    ext: (64 - 8 * w) as u8,
                    shift: (8 * (at % 8)) as u8,
                    signed: conv == Conv::Signed,
                    boolean: conv == Conv::Bool,
                    flush: false,
                    width: 0,
                    word_at: (at - at % 8) as u32,
                    zero_to: 0,
                },
            )),
        }
        wire_at += op.wire as u32;
    }
    assert_eq!(wire_at, c.wire_size);
    assert!(wire_at <= i32::MAX as u32 - 8);
    // Every byte's stores, counted: word stores and zero runs must not overlap; a
    // reference is stored over a word store only when it shares the word (4-byte
    // pointers).
    let mut stores = vec![0u8; size];
    let mut mark = |from: usize, to: usize| stores[from..to].iter_mut().for_each(|b| *b += 1);
    let (mut head_alone, mut head_zero_to) = (true, 0u32);
    let mut last: Option<Flush> = None;
    for at in (0..size).step_by(8) {
        let width = (size - at).min(8);
        if at > 0 && is_ref[at..at + width].iter().all(|&r| r) {
            // Filled by references alone.
            last = None;
            continue;
        }
        mark(at, at + width);
        let end = (at + width) as u32;
        let mine: Vec<Part> = scalars.iter().filter(|(w, _)| *w == at).map(|&(_, p)| p).collect();
        if mine.is_empty() {
            match last {
                _ if at == 0 => {
                    head_zero_to = end;
                    last = Some(Flush::Head);
                }
                Some(Flush::Head) => head_zero_to = end,
                Some(Flush::Part(i)) => parts[i].zero_to = end,
                None => {
                    // A zero word after a reference word: a part that adds nothing and
                    // stores its word.
                    let zero_word = Part { load_at: -8, mask: 0, ext: 0, shift: 0, signed: false, boolean: false, flush: true, width: width as u8, word_at: at as u32, zero_to: end };
                    parts.push(zero_word);
                    last = Some(Flush::Part(parts.len() - 1));
                }
            }
            continue;
        }
        if at == 0 {
            head_alone = false;
        }
        parts.extend(mine);
        let i = parts.len() - 1;
        parts[i] = Part { flush: true, width: width as u8, zero_to: end, ..parts[i] };
        last = Some(Flush::Part(i));
    }
    if head_alone {
        assert!(head_zero_to as usize >= ptr.max(size.min(8)));
    }
    for (at, &r) in is_ref.iter().enumerate() {
        if r && stores[at] == 0 {
            stores[at] = 1;
        }
    }
    assert!(stores.iter().all(|&k| k == 1), "the word program of a {size}-byte class must store each byte once: {stores:?}");
    ClassProg {
        size: c.size,
        align_mask: c.align - 1,
        wire_size: c.wire_size,
        msg: c.msg,
        head_alone,
        head_width: size.min(8) as u8,
        head_zero_to,
        parts_first,
        parts_end: parts.len() as u32,
        refs_first,
        refs_end: refs.len() as u32,
        chunks_first: 0,
        chunks_end: 0,
        shuffle: false,
    }
}

/// Compiles class `c` into chunks (appended); false when a member cannot be shuffled.
fn compile_chunks(c: &super::ClassT, chunks: &mut Vec<Chunk>) -> bool {
    let size = c.size as usize;
    let first = chunks.len();
    chunks.extend(std::iter::repeat_n(Chunk { shuf: [0x80; 16], sign: [0x80; 16], win: -16, signed: false }, size.div_ceil(16)));
    let mut wire_at = 0usize;
    // (object offset, wire offset, memory size, wire width, signed) of the scalars.
    let mut scalars = Vec::new();
    for op in c.ops.iter().filter(|o| o.wire != 0) {
        match op.conv {
            Conv::Ref(_) => {}
            Conv::Bool => return false,
            _ if op.wire > op.size || op.offset as usize / 16 != (op.offset as usize + op.size as usize - 1) / 16 => return false,
            conv => scalars.push((op.offset as usize, wire_at, op.size as usize, op.wire as usize, conv == Conv::Signed)),
        }
        wire_at += op.wire as usize;
    }
    for (k, ch) in chunks[first..].iter_mut().enumerate() {
        let mine: Vec<_> = scalars.iter().filter(|m| m.0 / 16 == k).collect();
        let Some(end) = mine.iter().map(|m| m.1 + m.3).max() else { continue };
        let win = end as i32 - 16;
        for &&(at, wat, size, wire, signed) in &mine {
            for j in 0..size {
                let b = at % 16 + j;
                if j < wire {
                    let Ok(i) = u8::try_from(wat as i32 + j as i32 - win) else { return false };
                    if i >= 16 {
                        return false;
                    }
                    ch.shuf[b] = i;
                } else if signed {
                    ch.sign[b] = (wat as i32 + wire as i32 - 1 - win) as u8;
                    ch.signed = true;
                }
            }
        }
        ch.win = win;
    }
    true
}

/// Whether byte shuffles can write objects on this CPU.
fn simd_available() -> bool {
    #[cfg(target_arch = "x86_64")]
    return std::arch::is_x86_feature_detected!("ssse3");
    #[cfg(not(target_arch = "x86_64"))]
    false
}

/// Stores `chunks` at `obj`, shuffled from the wire bytes at `wire`: chunk k's 16 bytes
/// at `obj + 16k`, zeros past the object's end (the next object's bytes, or padding).
///
/// # Safety
/// Every chunk's window (16 bytes at `wire + win`) is readable and `obj` has
/// `16 × chunks.len()` writable bytes; the CPU has SSSE3.
#[cfg(target_arch = "x86_64")]
#[inline]
#[target_feature(enable = "ssse3")]
unsafe fn shuffle_chunks(chunks: &[Chunk], wire: *const u8, obj: *mut u8) {
    use std::arch::x86_64::*;
    for (k, ch) in chunks.iter().enumerate() {
        let v = _mm_loadu_si128(wire.offset(ch.win as isize) as *const __m128i);
        let mut r = _mm_shuffle_epi8(v, _mm_load_si128(ch.shuf.as_ptr() as *const __m128i));
        if ch.signed {
            let s = _mm_shuffle_epi8(v, _mm_load_si128(ch.sign.as_ptr() as *const __m128i));
            r = _mm_or_si128(r, _mm_cmpgt_epi8(_mm_setzero_si128(), s));
        }
        _mm_storeu_si128(obj.add(16 * k) as *mut __m128i, r);
    }
}

/// Stores the low `width` (8 or 4) bytes of `v`, little-endian.
#[inline(always)]
unsafe fn store(at: *mut u8, v: u64, width: u8) {
    if width == 8 {
        std::ptr::write_unaligned(at as *mut [u8; 8], v.to_le_bytes());
    } else {
        std::ptr::write_unaligned(at as *mut [u8; 4], (v as u32).to_le_bytes());
    }
}

/// Zeroes `from..to` (a whole number of 4-byte units; usually empty).
#[inline(always)]
unsafe fn zero(mut from: *mut u8, to: *mut u8) {
    while from.add(8) <= to {
        std::ptr::write_unaligned(from as *mut [u8; 8], [0; 8]);
        from = from.add(8);
    }
    if from < to {
        std::ptr::write_unaligned(from as *mut [u8; 4], [0; 4]);
    }
}

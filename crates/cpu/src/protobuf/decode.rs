//! Protobuf binary → heap image: the reference implementation of `docs/image-layout.md`.
//!
//! Two passes over the input, run by one state machine (`walk::<WRITE>`):
//! the pre-pass validates everything, numbers message instances in creation order and
//! counts repeated elements and unknown bytes per instance (so the image size is exact);
//! the write pass allocates in wire order and fills the image. Nothing recurses: nesting
//! lives in an explicit frame stack bounded by `max_depth`.

use std::ops::Deref;

use heapwire_schema::{wire_type as wt, CompiledSchema, Kind, Presence, NONE};

use heapwire_engine::RejectKind;

use super::wire::{read_tag, read_varint, varint_len, zigzag32, zigzag64, ReadErr};

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

fn err<T>(kind: RejectKind, offset: usize) -> Result<T, DecodeError> {
    Err(DecodeError { kind, offset })
}

fn rd(e: ReadErr, offset: usize) -> DecodeError {
    let kind = match e {
        ReadErr::Truncated => RejectKind::Truncated,
        ReadErr::TooLong => RejectKind::VarintTooLong,
    };
    DecodeError { kind, offset }
}

/// The engine door's options (base, depth limit, image limit, per-type registers).
pub type DecodeOptions = heapwire_engine::Options;

/// A field as the hot loop needs it: small and flat (the schema's `Field` carries names
/// and defaults the decoder never reads).
#[derive(Clone, Copy)]
struct Op {
    kind: Kind,
    /// Wire type of one unpacked value.
    wire: u8,
    flags: u8,
    /// Repeated and packable: a LEN wire type is a packed run.
    rep_packable: bool,
    /// Scalar size in the image (0 for strings and messages).
    size: u8,
    /// A singular scalar that is not a closed enum: one value, stored as is.
    simple: bool,
    /// Presence bit as a byte offset in the struct and a mask.
    hb_mask: u8,
    hb_byte: u32,
    presence: Presence,
    offset: u32,
    sub: u32,
}

impl Op {
    fn from_field(m: &heapwire_schema::Message, f: &heapwire_schema::Field) -> Op {
        let (hb_byte, hb_mask) = match f.presence {
            Presence::HasBit(b) => (m.hasbits_offset + 4 * (b / 32) + (b % 32) / 8, 1u8 << (b % 8)),
            _ => (0, 0),
        };
        Op {
            kind: f.kind,
            wire: f.kind.wire_type(),
            flags: f.flags,
            rep_packable: f.is_repeated() && f.kind.is_packable(),
            size: f.kind.scalar_size().unwrap_or(0) as u8,
            simple: !f.is_repeated() && f.kind.scalar_size().is_some() && !f.is_closed_enum(),
            hb_mask,
            hb_byte,
            presence: f.presence,
            offset: f.offset,
            sub: f.sub,
        }
    }
    #[inline(always)]
    fn is_repeated(&self) -> bool {
        self.flags & heapwire_schema::field_flags::REPEATED != 0
    }
    #[inline(always)]
    fn is_map(&self) -> bool {
        self.flags & heapwire_schema::field_flags::MAP != 0
    }
    #[inline(always)]
    fn validates_utf8(&self) -> bool {
        self.flags & heapwire_schema::field_flags::VALIDATE_UTF8 != 0
    }
    #[inline(always)]
    fn is_closed_enum(&self) -> bool {
        self.flags & heapwire_schema::field_flags::CLOSED_ENUM != 0
    }
}

/// Per message type, what the decoder derives from the compiled schema once.
struct MsgInfo {
    ops: Vec<Op>,
    size8: u32,
    /// Per field: count slot (repeated) or state slot (singular message); NONE otherwise.
    slot: Vec<u32>,
    /// Count slots: one per repeated field, then the unknown-bytes slot.
    n_counts: u32,
    /// State slots: one per singular message field (its instance id), then one per oneof
    /// (its case).
    n_state: u32,
    /// For each count slot, the element size (unknown slot: 1).
    count_elem: Vec<u32>,
    /// field number → field index + 1, for small numbers.
    dense: Vec<u16>,
}

struct Frame {
    msg: u32,
    inst: u32,
    /// Struct offset in the image (write pass).
    off: u32,
    /// Where this message's bytes end (for groups: the parent's end).
    end: usize,
    /// Group field number, or 0 for a length-delimited message.
    group: u32,
    /// Map entries (pre-pass): where the entry's tag starts, and what to roll back to
    /// if the entry turns out to hold unknown fields.
    start: usize,
    undo: Undo,
}

/// Pre-pass state before a map entry, restored when upb's rule sends the whole entry
/// to the parent's unknown fields.
#[derive(Clone, Copy, Default)]
struct Undo {
    insts: u32,
    counts: u32,
    state: u32,
    top: u64,
    parent_count_slot: u32,
}

/// Reusable decoder for one compiled schema. Scratch buffers persist between calls,
/// so decoding a stream of messages allocates only while they grow.
pub struct Decoder<S: Deref<Target = CompiledSchema>> {
    schema: S,
    t: Tables,
    s: Scratch,
}

/// What the decoder derives from the compiled schema once.
struct Tables {
    info: Vec<MsgInfo>,
    /// Sorted value lists of closed enums (empty for open ones).
    closed: Vec<Vec<i32>>,
}

/// Per-decode scratch, kept between calls.
#[derive(Default)]
struct Scratch {
    counts: Vec<u32>,
    state: Vec<u32>,
    inst_msg: Vec<u32>,
    inst_counts: Vec<u32>,
    inst_state: Vec<u32>,
    inst_off: Vec<u32>,
    inst_start: Vec<u32>,
    frames: Vec<Frame>,
    groups: Vec<u32>,
    /// Tag offsets of map entries the pre-pass sent to the unknown fields, in order.
    dropped: Vec<usize>,
    next_drop: usize,
    /// `decode_into`'s image before it is copied out.
    image: Vec<u8>,
}

const DENSE_LIMIT: u32 = 1024;

impl<S: Deref<Target = CompiledSchema>> Decoder<S> {
    /// `schema` is a reference or a shared pointer (`Arc`) to the compiled schema.
    pub fn new(schema: S) -> Self {
        let info = schema
            .messages
            .iter()
            .map(|m| {
                let mut slot = vec![NONE; m.fields.len()];
                let (mut nc, mut ns) = (0u32, 0u32);
                let mut count_elem = Vec::new();
                for (i, f) in m.fields.iter().enumerate() {
                    if f.is_repeated() {
                        slot[i] = nc;
                        nc += 1;
                        count_elem.push(schema.element_size(f));
                    } else if f.kind.is_message() {
                        slot[i] = ns;
                        ns += 1;
                    }
                }
                count_elem.push(1);
                let max_dense = m.fields.iter().map(|f| f.number).filter(|&n| n < DENSE_LIMIT).max().unwrap_or(0);
                let mut dense = vec![0u16; max_dense as usize + 1];
                for (i, f) in m.fields.iter().enumerate() {
                    if f.number < DENSE_LIMIT {
                        dense[f.number as usize] = (i + 1) as u16;
                    }
                }
                MsgInfo {
                    ops: m.fields.iter().map(|f| Op::from_field(m, f)).collect(),
                    size8: align8(m.size),
                    slot,
                    n_counts: nc + 1,
                    n_state: ns + m.oneofs.len() as u32,
                    count_elem,
                    dense,
                }
            })
            .collect::<Vec<_>>();
        let closed = schema
            .enums
            .iter()
            .map(|e| {
                let mut v: Vec<i32> = if e.closed { e.values.iter().map(|v| v.number).collect() } else { Vec::new() };
                v.sort_unstable();
                v.dedup();
                v
            })
            .collect();
        Decoder { schema, t: Tables { info, closed }, s: Scratch::default() }
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
        let estimate = (self.t.info[msg].size8 as usize + 2 * input.len() + 64).min(opts.max_image_bytes.min(u32::MAX as u64) as usize);
        out.clear();
        out.resize(estimate, 0);
        if let Ok(total) = walk::<FAST>(&self.schema, &self.t, &mut self.s, msg as u32, input, opts, out) {
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
        let mut image = std::mem::take(&mut self.s.image);
        let r = self.decode(msg, input, opts, &mut image).map_err(heapwire_engine::Rejection::from);
        let r = r.and_then(|()| heapwire_engine::copy_into(&image, out).map(|()| image.len()));
        self.s.image = image;
        r
    }

    /// The reference algorithm of `docs/image-layout.md`, always in two passes (pre-pass,
    /// then write pass). `decode` gives the same bytes, usually in one pass.
    pub fn decode_reference(&mut self, msg: usize, input: &[u8], opts: &DecodeOptions, out: &mut Vec<u8>) -> Result<(), DecodeError> {
        let pw = self.check_request(msg, input, opts)?;
        out.clear();
        let total = walk::<PRE>(&self.schema, &self.t, &mut self.s, msg as u32, input, opts, &mut Vec::new())?;
        if pw == 4 && opts.base.checked_add(total).is_none_or(|e| e > u32::MAX as u64 + 1) {
            return err(RejectKind::BadBase, 0);
        }
        out.resize(total as usize, 0);
        let written = walk::<WRITE>(&self.schema, &self.t, &mut self.s, msg as u32, input, opts, out)?;
        debug_assert_eq!(written, total, "pre-pass and write pass disagree on the image size");
        Ok(())
    }
}

impl Scratch {
    /// Creates instance `id` of message `msg` (state slots reset). Returns its id.
    #[inline]
    fn new_instance<const M: u8>(&mut self, schema: &CompiledSchema, t: &Tables, msg: u32, off: u32, start: usize) -> u32 {
        let info = &t.info[msg as usize];
        let id;
        if M != WRITE {
            id = self.inst_counts.len() as u32;
            if M == PRE {
                self.inst_msg.push(msg);
                self.inst_counts.push(self.counts.len() as u32);
                self.counts.extend(std::iter::repeat_n(0, info.n_counts as usize));
            } else {
                // The fast pass makes an instance's counts only when it needs them.
                self.inst_counts.push(UNSCANNED as u32);
            }
            self.inst_state.push(self.state.len() as u32);
            let m = &schema.messages[msg as usize];
            let n_msg = info.n_state as usize - m.oneofs.len();
            self.state.extend(std::iter::repeat_n(NONE, n_msg));
            self.state.extend(std::iter::repeat_n(0, m.oneofs.len()));
        } else {
            id = self.inst_off.len() as u32;
            self.inst_off.push(off);
            self.inst_start.push(start as u32);
            let s = self.inst_state[id as usize] as usize;
            let m = &schema.messages[msg as usize];
            let n_msg = info.n_state as usize - m.oneofs.len();
            self.state[s..s + n_msg].fill(NONE);
            self.state[s + n_msg..s + info.n_state as usize].fill(0);
        }
        id
    }

    /// Skips one unknown value whose tag ended at `pos`; returns where it ends.
    fn skip_value(&mut self, buf: &[u8], pos: usize, end: usize, num: u32, wtype: u8, max_depth: usize) -> Result<usize, DecodeError> {
        match wtype {
            wt::VARINT => read_varint(buf, pos, end).map(|(_, p)| p).map_err(|e| rd(e, pos)),
            wt::FIXED64 => if end - pos < 8 { err(RejectKind::Truncated, pos) } else { Ok(pos + 8) },
            wt::FIXED32 => if end - pos < 4 { err(RejectKind::Truncated, pos) } else { Ok(pos + 4) },
            wt::LEN => {
                let (len, p) = read_varint(buf, pos, end).map_err(|e| rd(e, pos))?;
                if len > (end - p) as u64 {
                    return err(RejectKind::LengthPastEnd, pos);
                }
                Ok(p + len as usize)
            }
            wt::START_GROUP => {
                // Iterative: a stack of open group numbers, bounded with the message depth.
                self.groups.clear();
                self.groups.push(num);
                let mut p = pos;
                if self.frames.len() > max_depth {
                    return err(RejectKind::DepthExceeded, pos);
                }
                loop {
                    let tpos = p;
                    let (tag, q) = read_tag(buf, p, end).map_err(|e| rd(e, p))?;
                    p = q;
                    let (n, w) = (tag >> 3, (tag & 7) as u8);
                    if n == 0 {
                        return err(RejectKind::FieldNumberZero, tpos);
                    }
                    match w {
                        wt::END_GROUP => {
                            if self.groups.pop() != Some(n) {
                                return err(RejectKind::GroupMismatch, tpos);
                            }
                            if self.groups.is_empty() {
                                return Ok(p);
                            }
                        }
                        wt::START_GROUP => {
                            self.groups.push(n);
                            if self.frames.len() + self.groups.len() > max_depth + 1 {
                                return err(RejectKind::DepthExceeded, tpos);
                            }
                        }
                        6 | 7 => return err(RejectKind::InvalidWireType, tpos),
                        _ => p = self.skip_value(buf, p, end, n, w, max_depth)?,
                    }
                }
            }
            _ => err(RejectKind::InvalidWireType, pos),
        }
    }
}

/// Walk modes: the two passes of the reference algorithm, and the fast single pass.
const PRE: u8 = 0;
const WRITE: u8 = 1;
/// One pass that counts lazily: the first time an instance needs a count (an array or
/// unknown buffer to allocate), the rest of that instance's bytes are scanned at top
/// level. Exact whenever every instance's bytes are contiguous; on a merge (a message
/// field seen twice) or a map entry with unknown fields it gives up, and `decode`
/// falls back to the two passes.
const FAST: u8 = 2;

/// `inst_counts` of a fast-pass instance whose counts have not been scanned yet.
const UNSCANNED: usize = u32::MAX as usize;

/// Grows the image (fast pass) so `new_top` bytes are addressable, within the limit.
#[inline(always)]
fn grow<const M: u8>(img: &mut Vec<u8>, new_top: u64, limit: u64, at: usize) -> Result<(), DecodeError> {
    if M == FAST && new_top as usize > img.len() {
        if new_top > limit {
            return err(RejectKind::ImageTooLarge, at);
        }
        let want = (new_top as usize).max(img.len() * 2).min(limit as usize);
        img.resize(want, 0);
    }
    Ok(())
}

/// The state machine shared by all passes. Returns the image size.
#[allow(clippy::too_many_arguments)]
fn walk<const M: u8>(schema: &CompiledSchema, t: &Tables, s: &mut Scratch, root: u32, buf: &[u8], opts: &DecodeOptions, img: &mut Vec<u8>) -> Result<u64, DecodeError> {
    const { assert!(M <= FAST) };
    let pw = schema.ptr() as usize;
    let base = opts.base;
    let limit = opts.max_image_bytes.min(u32::MAX as u64);
    if M != WRITE {
        s.dropped.clear();
        s.counts.clear();
        s.state.clear();
        s.inst_msg.clear();
        s.inst_counts.clear();
        s.inst_state.clear();
    } else {
        s.next_drop = 0;
        s.inst_off.clear();
        s.inst_start.clear();
    }
    s.frames.clear();
    // Bump allocator (write pass) / running size (pre-pass).
    let mut top: u64 = t.info[root as usize].size8 as u64;
    let root_id = s.new_instance::<M>(schema, t, root, 0, 0);
    grow::<M>(img, top, limit, 0)?;
    if M != PRE {
        write_header(schema, opts, img, 0, root);
    }
    s.frames.push(Frame { msg: root, inst: root_id, off: 0, end: buf.len(), group: 0, start: 0, undo: Undo::default() });
    let mut pos = 0usize;

    'frames: loop {
        let fr = s.frames.last().unwrap();
        let (mi, inst, soff, end, group) = (fr.msg as usize, fr.inst as usize, fr.off as usize, fr.end, fr.group);
        let msg = &schema.messages[mi];
        let info = &t.info[mi];
        let mut cbase = s.inst_counts[inst] as usize;
        let sbase = s.inst_state[inst] as usize;
        loop {
            if pos >= end {
                if group != 0 {
                    return err(RejectKind::Truncated, pos);
                }
                let done = s.frames.pop().unwrap();
                // A map entry with unknown fields is not a map entry: like upb, keep it
                // whole (tag to end) among the parent's unknown fields instead.
                if M == FAST && msg.is_map_entry() && cbase != UNSCANNED && s.counts[cbase + info.n_counts as usize - 1] > 0 {
                    return err(RejectKind::Truncated, done.start); // not canonical: decode() retries in two passes
                }
                if M == PRE && msg.is_map_entry() && s.counts[cbase + info.n_counts as usize - 1] > 0 && !s.frames.is_empty() {
                    let u = done.undo;
                    s.inst_msg.truncate(u.insts as usize);
                    s.inst_counts.truncate(u.insts as usize);
                    s.inst_state.truncate(u.insts as usize);
                    s.counts.truncate(u.counts as usize);
                    s.state.truncate(u.state as usize);
                    top = u.top;
                    s.counts[u.parent_count_slot as usize] -= 1;
                    let parent = s.frames.last().unwrap();
                    let pu = s.inst_counts[parent.inst as usize] as usize + t.info[parent.msg as usize].n_counts as usize - 1;
                    s.counts[pu] += (end - done.start) as u32;
                    // Entries dropped inside this one are copied with it, not on their own:
                    // they are the list's tail (they ended before it), so forget them.
                    while s.dropped.last().is_some_and(|&d| d > done.start) {
                        s.dropped.pop();
                    }
                    s.dropped.push(done.start);
                }
                if s.frames.is_empty() {
                    break 'frames;
                }
                continue 'frames;
            }
            let tag_pos = pos;
            let (tag, p) = read_tag(buf, pos, end).map_err(|e| rd(e, pos))?;
            pos = p;
            let num = tag >> 3;
            let wtype = (tag & 7) as u8;
            if num == 0 {
                return err(RejectKind::FieldNumberZero, tag_pos);
            }
            if wtype == wt::END_GROUP {
                if group == num {
                    s.frames.pop();
                    continue 'frames;
                }
                return err(RejectKind::GroupMismatch, tag_pos);
            }
            if wtype > 5 {
                return err(RejectKind::InvalidWireType, tag_pos);
            }
            let fi = if num < info.dense.len() as u32 {
                info.dense[num as usize] as usize
            } else {
                msg.field_index(num).map_or(0, |i| i + 1)
            };
            // Known field with an acceptable wire type, or else unknown.
            let field = if fi == 0 { None } else { Some(&info.ops[fi - 1]) };
            let field = field.filter(|f| wtype == f.wire || (wtype == wt::LEN && f.rep_packable));
            let Some(f) = field else {
                let vend = s.skip_value(buf, pos, end, num, wtype, opts.max_depth as usize)?;
                let n = vend - tag_pos;
                let slot = cbase + info.n_counts as usize - 1;
                if M == PRE {
                    s.counts[slot] += n as u32;
                } else {
                    if M == FAST && cbase == UNSCANNED {
                        cbase = s.counts.len();
                        s.counts.resize(cbase + info.n_counts as usize, 0);
                        s.inst_counts[inst] = cbase as u32;
                        scan_counts(schema, t, buf, tag_pos, end, mi, &mut s.counts[cbase..]);
                    }
                    append_unknown::<M>(img, &mut top, base, pw, soff + msg.unknown_offset as usize, s.counts[cbase + info.n_counts as usize - 1], &buf[tag_pos..vend], limit)?;
                }
                pos = vend;
                continue;
            };
            if M != PRE && f.simple && wtype != wt::LEN {
                // The common case, tested before the dispatch on the kind: one value of a
                // singular scalar (not a closed enum).
                let (raw, q) = match wtype {
                    wt::VARINT => read_varint(buf, pos, end).map_err(|e| rd(e, pos))?,
                    wt::FIXED32 => {
                        if end - pos < 4 {
                            return err(RejectKind::Truncated, pos);
                        }
                        (u32::from_le_bytes(buf[pos..pos + 4].try_into().unwrap()) as u64, pos + 4)
                    }
                    _ => {
                        if end - pos < 8 {
                            return err(RejectKind::Truncated, pos);
                        }
                        (u64::from_le_bytes(buf[pos..pos + 8].try_into().unwrap()), pos + 8)
                    }
                };
                pos = q;
                set_present(img, soff, msg, f, num, &mut s.state, sbase, info.n_state as usize);
                put_scalar(img, soff + f.offset as usize, f.size as usize, convert(f.kind, raw));
                continue;
            }
            let fidx = fi - 1;
            let fslot = info.slot[fidx] as usize;

            match f.kind {
                Kind::Message | Kind::Group => {
                    let (cend, cgroup) = if f.kind == Kind::Group {
                        (end, num)
                    } else {
                        let (len, p) = read_varint(buf, pos, end).map_err(|e| rd(e, pos))?;
                        if len > (end - p) as u64 {
                            return err(RejectKind::LengthPastEnd, pos);
                        }
                        pos = p;
                        (p + len as usize, 0)
                    };
                    if s.frames.len() > opts.max_depth as usize {
                        return err(RejectKind::DepthExceeded, tag_pos);
                    }
                    if M == WRITE && f.is_map() && s.dropped.get(s.next_drop) == Some(&tag_pos) {
                        s.next_drop += 1;
                        let slot = cbase + info.n_counts as usize - 1;
                        append_unknown::<M>(img, &mut top, base, pw, soff + msg.unknown_offset as usize, s.counts[slot], &buf[tag_pos..cend], limit)?;
                        pos = cend;
                        continue;
                    }
                    let undo = if M == PRE && f.is_map() {
                        Undo {
                            insts: s.inst_msg.len() as u32,
                            counts: s.counts.len() as u32,
                            state: s.state.len() as u32,
                            top,
                            parent_count_slot: (cbase + fslot) as u32,
                        }
                    } else {
                        Undo::default()
                    };
                    let sub = f.sub;
                    let child_size8 = t.info[sub as usize].size8;
                    let (child, coff);
                    if f.is_repeated() {
                        let slot = cbase + fslot;
                        if M == PRE {
                            s.counts[slot] += 1;
                            coff = 0;
                        } else {
                            if M == FAST && cbase == UNSCANNED {
                                cbase = s.counts.len();
                                s.counts.resize(cbase + info.n_counts as usize, 0);
                                s.inst_counts[inst] = cbase as u32;
                                scan_counts(schema, t, buf, tag_pos, end, mi, &mut s.counts[cbase..]);
                            }
                            coff = next_element::<M>(img, &mut top, base, pw, soff + f.offset as usize, s.counts[cbase + fslot], schema.messages[sub as usize].size as usize, limit)?;
                            write_header(schema, opts, img, coff, sub);
                        }
                        child = s.new_instance::<M>(schema, t, sub, coff as u32, tag_pos);
                    } else {
                        let sslot = sbase + fslot;
                        let mut existing = s.state[sslot];
                        if let Presence::Oneof(o) = f.presence {
                            let cs = sbase + info.n_state as usize - msg.oneofs.len() + o as usize;
                            if s.state[cs] != num {
                                existing = NONE;
                                s.state[cs] = num;
                                if M != PRE {
                                    set_oneof_case(img, soff, &msg.oneofs[o as usize], num);
                                }
                            }
                        }
                        if existing != NONE {
                            if M == FAST {
                                // A merge: this instance's bytes are not contiguous.
                                return err(RejectKind::Truncated, tag_pos);
                            }
                            child = existing;
                            coff = if M == WRITE { (read_ptr(img, soff + f.offset as usize, pw) - base) as usize } else { 0 };
                        } else {
                            if M == PRE {
                                top += child_size8 as u64;
                                coff = 0;
                            } else {
                                coff = top as usize;
                                top += child_size8 as u64;
                                grow::<M>(img, top, limit, tag_pos)?;
                                write_ptr(img, soff + f.offset as usize, pw, base + coff as u64);
                                write_header(schema, opts, img, coff, sub);
                            }
                            child = s.new_instance::<M>(schema, t, sub, coff as u32, tag_pos);
                            s.state[sslot] = child;
                        }
                    }
                    if M == PRE && top > limit {
                        return err(RejectKind::ImageTooLarge, tag_pos);
                    }
                    s.frames.push(Frame { msg: sub, inst: child, off: coff as u32, end: cend, group: cgroup, start: tag_pos, undo });
                    continue 'frames;
                }
                Kind::String | Kind::Bytes => {
                    let (len, p) = read_varint(buf, pos, end).map_err(|e| rd(e, pos))?;
                    if len > (end - p) as u64 {
                        return err(RejectKind::LengthPastEnd, pos);
                    }
                    let data = &buf[p..p + len as usize];
                    pos = p + len as usize;
                    if M == PRE {
                        if f.validates_utf8() && !valid_utf8(data) {
                            return err(RejectKind::InvalidUtf8, p);
                        }
                        top += align8(len as u32) as u64;
                        if f.is_repeated() {
                            s.counts[cbase + fslot] += 1;
                        } else if let Presence::Oneof(o) = f.presence {
                            // The pre-pass tracks oneof cases too: they decide merges.
                            s.state[sbase + info.n_state as usize - msg.oneofs.len() + o as usize] = num;
                        }
                        if top > limit {
                            return err(RejectKind::ImageTooLarge, tag_pos);
                        }
                    } else {
                        if M == FAST && f.validates_utf8() && !valid_utf8(data) {
                            return err(RejectKind::InvalidUtf8, p);
                        }
                        let at = if f.is_repeated() {
                            if M == FAST && cbase == UNSCANNED {
                                cbase = s.counts.len();
                                s.counts.resize(cbase + info.n_counts as usize, 0);
                                s.inst_counts[inst] = cbase as u32;
                                scan_counts(schema, t, buf, tag_pos, end, mi, &mut s.counts[cbase..]);
                            }
                            next_element::<M>(img, &mut top, base, pw, soff + f.offset as usize, s.counts[cbase + fslot], 2 * pw, limit)?
                        } else {
                            set_present(img, soff, msg, f, num, &mut s.state, sbase, info.n_state as usize);
                            soff + f.offset as usize
                        };
                        let ptr = if data.is_empty() {
                            0
                        } else {
                            let o = top as usize;
                            top += align8(len as u32) as u64;
                            grow::<M>(img, top, limit, tag_pos)?;
                            img[o..o + data.len()].copy_from_slice(data);
                            base + o as u64
                        };
                        write_ptr(img, at, pw, ptr);
                        write_ptr(img, at + pw, pw, len);
                    }
                }
                _ => {
                    // Scalars: one value, or a packed run.
                    let packed = wtype == wt::LEN;
                    let (vstart, vend) = if packed {
                        let (len, p) = read_varint(buf, pos, end).map_err(|e| rd(e, pos))?;
                        if len > (end - p) as u64 {
                            return err(RejectKind::LengthPastEnd, pos);
                        }
                        (p, p + len as usize)
                    } else {
                        (pos, end)
                    };
                    let size = f.size as usize;
                    let closed = if f.is_closed_enum() { Some(&t.closed[f.sub as usize]) } else { None };
                    let mut p = vstart;
                    let mut n_known = 0u32;
                    let mut unknown_bytes = 0u32;
                    let cslot = cbase + fslot;
                    let uslot = cbase + info.n_counts as usize - 1;
                    loop {
                        if packed && p >= vend {
                            break;
                        }
                        let raw = match wtype {
                            wt::VARINT => {
                                let (v, q) = read_varint(buf, p, vend).map_err(|e| rd(e, p))?;
                                p = q;
                                v
                            }
                            wt::FIXED32 => {
                                if vend - p < 4 {
                                    return err(if packed { RejectKind::PackedLength } else { RejectKind::Truncated }, p);
                                }
                                p += 4;
                                u32::from_le_bytes(buf[p - 4..p].try_into().unwrap()) as u64
                            }
                            wt::FIXED64 => {
                                if vend - p < 8 {
                                    return err(if packed { RejectKind::PackedLength } else { RejectKind::Truncated }, p);
                                }
                                p += 8;
                                u64::from_le_bytes(buf[p - 8..p].try_into().unwrap())
                            }
                            _ => {
                                // Packed run: element wire type from the kind.
                                match f.wire {
                                    wt::VARINT => {
                                        let (v, q) = read_varint(buf, p, vend).map_err(|e| rd(e, p))?;
                                        p = q;
                                        v
                                    }
                                    wt::FIXED32 => {
                                        if vend - p < 4 {
                                            return err(RejectKind::PackedLength, p);
                                        }
                                        p += 4;
                                        u32::from_le_bytes(buf[p - 4..p].try_into().unwrap()) as u64
                                    }
                                    _ => {
                                        if vend - p < 8 {
                                            return err(RejectKind::PackedLength, p);
                                        }
                                        p += 8;
                                        u64::from_le_bytes(buf[p - 8..p].try_into().unwrap())
                                    }
                                }
                            }
                        };
                        if let Some(vals) = closed {
                            if vals.binary_search(&(raw as u32 as i32)).is_err() {
                                let n = (varint_len((num as u64) << 3) + varint_len(raw as u32 as u64)) as u32;
                                if M == PRE {
                                    unknown_bytes += n;
                                } else {
                                    if M == FAST && cbase == UNSCANNED {
                                        cbase = s.counts.len();
                                        s.counts.resize(cbase + info.n_counts as usize, 0);
                                        s.inst_counts[inst] = cbase as u32;
                                        scan_counts(schema, t, buf, tag_pos, end, mi, &mut s.counts[cbase..]);
                                    }
                                    let mut tmp = [0u8; 10];
                                    let k = encode_enum_unknown(&mut tmp, num, raw as u32);
                                    append_unknown::<M>(img, &mut top, base, pw, soff + msg.unknown_offset as usize, s.counts[cbase + info.n_counts as usize - 1], &tmp[..k], limit)?;
                                }
                                if !packed {
                                    break;
                                }
                                continue;
                            }
                        }
                        let val = convert(f.kind, raw);
                        if M == PRE {
                            n_known += 1;
                        } else if f.is_repeated() {
                            if M == FAST && cbase == UNSCANNED {
                                cbase = s.counts.len();
                                s.counts.resize(cbase + info.n_counts as usize, 0);
                                s.inst_counts[inst] = cbase as u32;
                                scan_counts(schema, t, buf, tag_pos, end, mi, &mut s.counts[cbase..]);
                            }
                            let at = next_element::<M>(img, &mut top, base, pw, soff + f.offset as usize, s.counts[cbase + fslot], size, limit)?;
                            put_scalar(img, at, size, val);
                        } else {
                            set_present(img, soff, msg, f, num, &mut s.state, sbase, info.n_state as usize);
                            let at = soff + f.offset as usize;
                            put_scalar(img, at, size, val);
                        }
                        if !packed {
                            break;
                        }
                    }
                    pos = p;
                    if M == PRE {
                        if f.is_repeated() {
                            s.counts[cslot] += n_known;
                        } else if n_known > 0 {
                            if let Presence::Oneof(o) = f.presence {
                                let cs = sbase + info.n_state as usize - msg.oneofs.len() + o as usize;
                                s.state[cs] = num;
                            }
                        }
                        s.counts[uslot] += unknown_bytes;
                    }
                }
            }
        }
    }
    if M == PRE {
        // Arrays and unknown buffers, now that the counts are known.
        for id in 0..s.inst_msg.len() {
            let info = &t.info[s.inst_msg[id] as usize];
            let c = s.inst_counts[id] as usize;
            for (k, &elem) in info.count_elem.iter().enumerate() {
                let n = s.counts[c + k] as u64;
                if n > 0 {
                    top += (n * elem as u64 + 7) & !7;
                }
            }
            if top > limit {
                return err(RejectKind::ImageTooLarge, buf.len());
            }
        }
    }
    Ok(top)
}


/// Fast pass: counts, from the tag at `p` to the end of the instance's bytes, what the
/// instance's arrays and unknown buffer will hold — classifying every field exactly as
/// `walk` does. Stops quietly at malformed bytes (the walk reports them); an undercount
/// only makes the walk give up, never write out of place.
#[allow(clippy::too_many_arguments)]
#[cold]
fn scan_counts(schema: &CompiledSchema, t: &Tables, buf: &[u8], mut p: usize, end: usize, mi: usize, counts: &mut [u32]) {
    let msg = &schema.messages[mi];
    let info = &t.info[mi];
    let uslot = info.n_counts as usize - 1;
    while p < end {
        let tag_pos = p;
        let Ok((tag, q)) = read_tag(buf, p, end) else { return };
        p = q;
        let (num, wtype) = (tag >> 3, (tag & 7) as u8);
        if num == 0 || wtype > 5 {
            return;
        }
        if wtype == wt::END_GROUP {
            return; // the frame's own end (or malformed: the walk will say)
        }
        let fi = if num < info.dense.len() as u32 { info.dense[num as usize] as usize } else { msg.field_index(num).map_or(0, |i| i + 1) };
        let field = if fi == 0 { None } else { Some(&info.ops[fi - 1]) };
        let field = field.filter(|f| wtype == f.wire || (wtype == wt::LEN && f.rep_packable));
        let Some(f) = field else {
            let Some(vend) = skip_quiet(buf, p, end, num, wtype) else { return };
            counts[uslot] += (vend - tag_pos) as u32;
            p = vend;
            continue;
        };
        let slot = info.slot[fi - 1] as usize;
        let closed = if f.is_closed_enum() { Some(&t.closed[f.sub as usize]) } else { None };
        if wtype == wt::LEN && f.rep_packable {
            let Ok((len, q)) = read_varint(buf, p, end) else { return };
            if len > (end - q) as u64 {
                return;
            }
            let vend = q + len as usize;
            match f.wire {
                wt::VARINT => {
                    let mut r = q;
                    while r < vend {
                        let Ok((v, r2)) = read_varint(buf, r, vend) else { return };
                        r = r2;
                        match closed {
                            Some(vals) if vals.binary_search(&(v as u32 as i32)).is_err() => {
                                counts[uslot] += (varint_len((num as u64) << 3) + varint_len(v as u32 as u64)) as u32;
                            }
                            _ => counts[slot] += 1,
                        }
                    }
                }
                w => {
                    let size = if w == wt::FIXED32 { 4 } else { 8 };
                    if len % size != 0 {
                        return;
                    }
                    counts[slot] += (len / size) as u32;
                }
            }
            p = vend;
            continue;
        }
        // One value of the field's own wire type.
        if let (Some(vals), wt::VARINT) = (closed, wtype) {
            let Ok((v, q)) = read_varint(buf, p, end) else { return };
            p = q;
            if vals.binary_search(&(v as u32 as i32)).is_err() {
                counts[uslot] += (varint_len((num as u64) << 3) + varint_len(v as u32 as u64)) as u32;
            } else if f.is_repeated() {
                counts[slot] += 1;
            }
            continue;
        }
        let Some(vend) = skip_quiet(buf, p, end, num, wtype) else { return };
        if f.is_repeated() {
            counts[slot] += 1;
        }
        p = vend;
    }
}

/// Where the value after a tag ends, or `None` if the bytes are malformed.
fn skip_quiet(buf: &[u8], p: usize, end: usize, num: u32, wtype: u8) -> Option<usize> {
    match wtype {
        wt::VARINT => read_varint(buf, p, end).ok().map(|(_, q)| q),
        wt::FIXED64 => (end - p >= 8).then_some(p + 8),
        wt::FIXED32 => (end - p >= 4).then_some(p + 4),
        wt::LEN => {
            let (len, q) = read_varint(buf, p, end).ok()?;
            (len <= (end - q) as u64).then(|| q + len as usize)
        }
        wt::START_GROUP => {
            // Nested groups tracked in a small fixed stack; deeper ones stop the scan.
            let mut stack = [0u32; 32];
            let mut depth = 1;
            stack[0] = num;
            let mut p = p;
            loop {
                let (tag, q) = read_tag(buf, p, end).ok()?;
                p = q;
                let (n, w) = (tag >> 3, (tag & 7) as u8);
                match w {
                    wt::END_GROUP => {
                        if n == 0 || stack[depth - 1] != n {
                            return None;
                        }
                        depth -= 1;
                        if depth == 0 {
                            return Some(p);
                        }
                    }
                    wt::START_GROUP => {
                        if n == 0 || depth == stack.len() {
                            return None;
                        }
                        stack[depth] = n;
                        depth += 1;
                    }
                    _ if n == 0 => return None,
                    _ => p = skip_quiet(buf, p, end, n, w)?,
                }
            }
        }
        _ => None,
    }
}

/// UTF-8 validation: a word-at-a-time ASCII check first (most protobuf strings are short
/// and ASCII), the SIMD validator otherwise.
#[inline(always)]
fn valid_utf8(b: &[u8]) -> bool {
    let mut chunks = b.chunks_exact(8);
    let mut high = 0u64;
    for c in &mut chunks {
        high |= u64::from_le_bytes(c.try_into().unwrap());
    }
    for &x in chunks.remainder() {
        high |= x as u64;
    }
    high & 0x8080_8080_8080_8080 == 0 || simdutf8::basic::from_utf8(b).is_ok()
}

#[inline(always)]
fn align8(v: u32) -> u32 {
    (v + 7) & !7
}

/// Memory representation of a scalar, from its raw wire value.
#[inline(always)]
fn convert(kind: Kind, raw: u64) -> u64 {
    match kind {
        Kind::Int32 | Kind::UInt32 | Kind::Enum | Kind::Fixed32 | Kind::SFixed32 | Kind::Float => raw as u32 as u64,
        Kind::SInt32 => zigzag32(raw as u32) as u32 as u64,
        Kind::SInt64 => zigzag64(raw) as u64,
        Kind::Bool => (raw != 0) as u64,
        _ => raw,
    }
}

fn encode_enum_unknown(out: &mut [u8; 10], num: u32, v: u32) -> usize {
    let mut k = 0;
    for mut x in [(num as u64) << 3, v as u64] {
        while x >= 0x80 {
            out[k] = (x as u8) | 0x80;
            x >>= 7;
            k += 1;
        }
        out[k] = x as u8;
        k += 1;
    }
    k
}

/// Stores a scalar of 1, 4 or 8 bytes (fixed-size stores, no memcpy call).
#[inline(always)]
fn put_scalar(img: &mut [u8], at: usize, size: usize, v: u64) {
    match size {
        8 => img[at..at + 8].copy_from_slice(&v.to_le_bytes()),
        4 => img[at..at + 4].copy_from_slice(&(v as u32).to_le_bytes()),
        _ => img[at] = v as u8,
    }
}

#[inline(always)]
fn write_ptr(img: &mut [u8], at: usize, pw: usize, v: u64) {
    if pw == 8 {
        img[at..at + 8].copy_from_slice(&v.to_le_bytes());
    } else {
        img[at..at + 4].copy_from_slice(&(v as u32).to_le_bytes());
    }
}

#[inline(always)]
fn read_ptr(img: &[u8], at: usize, pw: usize) -> u64 {
    if pw == 8 {
        u64::from_le_bytes(img[at..at + 8].try_into().unwrap())
    } else {
        u32::from_le_bytes(img[at..at + 4].try_into().unwrap()) as u64
    }
}

fn write_header(schema: &CompiledSchema, opts: &DecodeOptions, img: &mut [u8], off: usize, msg: u32) {
    if schema.layout.header_words {
        let v = opts.type_words.get(msg as usize).copied().unwrap_or(msg as u64);
        write_ptr(img, off, schema.ptr() as usize, v);
    }
}

/// Slot of the next element of the repeated field whose `{ptr,count}` is at `at`,
/// allocating the array (of `total` elements) on the first one.
#[allow(clippy::too_many_arguments)]
#[inline]
fn next_element<const M: u8>(img: &mut Vec<u8>, top: &mut u64, base: u64, pw: usize, at: usize, total: u32, stride: usize, limit: u64) -> Result<usize, DecodeError> {
    let n = read_ptr(img, at + pw, pw);
    let arr = if n == 0 {
        let a = *top;
        *top += (total as u64 * stride as u64 + 7) & !7;
        grow::<M>(img, *top, limit, at)?;
        write_ptr(img, at, pw, base + a);
        a
    } else {
        read_ptr(img, at, pw) - base
    };
    if n >= total as u64 {
        // Only the fast pass can miscount (it gives up; the two passes are exact).
        return err(RejectKind::Truncated, at);
    }
    write_ptr(img, at + pw, pw, n + 1);
    Ok((arr + n * stride as u64) as usize)
}

#[allow(clippy::too_many_arguments)]
fn append_unknown<const M: u8>(img: &mut Vec<u8>, top: &mut u64, base: u64, pw: usize, at: usize, total: u32, bytes: &[u8], limit: u64) -> Result<(), DecodeError> {
    let n = read_ptr(img, at + pw, pw);
    let buf = if n == 0 {
        let a = *top;
        *top += align8(total) as u64;
        grow::<M>(img, *top, limit, at)?;
        write_ptr(img, at, pw, base + a);
        a
    } else {
        read_ptr(img, at, pw) - base
    } as usize;
    if n + bytes.len() as u64 > total as u64 {
        return err(RejectKind::Truncated, at);
    }
    let o = buf + n as usize;
    img[o..o + bytes.len()].copy_from_slice(bytes);
    write_ptr(img, at + pw, pw, n + bytes.len() as u64);
    Ok(())
}

fn set_oneof_case(img: &mut [u8], soff: usize, o: &heapwire_schema::Oneof, num: u32) {
    let s = soff + o.storage_offset as usize;
    img[s..s + o.storage_size as usize].fill(0);
    let c = soff + o.case_offset as usize;
    img[c..c + 4].copy_from_slice(&num.to_le_bytes());
}

/// Marks a singular non-message field present (presence bit, or oneof case switch).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn set_present(img: &mut [u8], soff: usize, msg: &heapwire_schema::Message, f: &Op, num: u32, state: &mut [u32], sbase: usize, n_state: usize) {
    match f.presence {
        Presence::HasBit(_) => img[soff + f.hb_byte as usize] |= f.hb_mask,
        Presence::Oneof(o) => {
            let cs = sbase + n_state - msg.oneofs.len() + o as usize;
            if state[cs] != num {
                state[cs] = num;
                set_oneof_case(img, soff, &msg.oneofs[o as usize], num);
            }
        }
        _ => {}
    }
}

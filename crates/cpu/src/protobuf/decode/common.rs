//! Small pieces every pass shares: errors, tag dispatch and field lookup, value reads and
//! scalar conversion, string checks, image stores and the allocator's array and
//! unknown-buffer steps.

use heapwire_engine::RejectKind;
use heapwire_schema::{wire_type as wt, CompiledSchema, Kind, Message, Oneof, Presence};

use super::super::wire::{read_tag, read_varint, varint_len, zigzag32, zigzag64, ReadErr};
use super::tables::{MsgInfo, Op, Scratch, Store};
use super::{DecodeError, DecodeOptions};

pub(super) fn err<T>(kind: RejectKind, offset: usize) -> Result<T, DecodeError> {
    Err(DecodeError { kind, offset })
}

/// The longest length prefix accepted (as the official parsers since protobuf 7.x).
pub(crate) const MAX_LEN_BYTES: usize = 5;

pub(super) fn rd(e: ReadErr, offset: usize) -> DecodeError {
    let kind = match e {
        ReadErr::Truncated => RejectKind::Truncated,
        ReadErr::TooLong => RejectKind::VarintTooLong,
    };
    DecodeError { kind, offset }
}

// ---- reading -------------------------------------------------------------------------

/// Reads the tag at `pos`: field number (never 0), wire type (0-5, end group included)
/// and where the value starts.
#[inline(always)]
pub(super) fn read_field_tag(buf: &[u8], pos: usize, end: usize) -> Result<(u32, u8, usize), DecodeError> {
    let (tag, p) = read_tag(buf, pos, end).map_err(|e| rd(e, pos))?;
    let (num, wtype) = (tag >> 3, (tag & 7) as u8);
    if num == 0 {
        return err(RejectKind::FieldNumberZero, pos);
    }
    if wtype > 5 {
        return err(RejectKind::InvalidWireType, pos);
    }
    Ok((num, wtype, p))
}

/// The known field that number `num` with wire type `wtype` selects (its index and op),
/// or `None`: no such field, or a wire type it cannot take (then it is an unknown field).
#[inline(always)]
pub(super) fn lookup<'a>(info: &'a MsgInfo, msg: &Message, num: u32, wtype: u8) -> Option<(usize, &'a Op)> {
    let fi = if num < info.dense.len() as u32 { info.dense[num as usize] as usize } else { msg.field_index(num).map_or(0, |i| i + 1) };
    if fi == 0 {
        return None;
    }
    let f = &info.ops[fi - 1];
    (wtype == f.wire || (wtype == wt::LEN && f.rep_packable)).then_some((fi - 1, f))
}

/// The field index the one-byte tag `b` selects, if the message's tag table has it (a
/// field of number 1-15 with a wire type it takes): what `read_field_tag` and `lookup`
/// would give for that byte, in one load.
#[inline(always)]
pub(super) fn by_tag(info: &MsgInfo, b: u8) -> Option<usize> {
    let e = info.by_tag[b as usize] as usize;
    (e != 0).then(|| e - 1)
}

/// The value of the two-byte tag at `pos` (`pos < end`), if it is one and `long_table`
/// (a message's table by two-byte tag values) is long enough to have an entry for it.
#[inline(always)]
pub(super) fn two_byte_tag<T>(long_table: &[T], buf: &[u8], pos: usize, end: usize) -> Option<usize> {
    if buf[pos] < 0x80 || pos + 1 >= end || buf[pos + 1] >= 0x80 {
        return None;
    }
    let v = (buf[pos] & 0x7f) as usize | (buf[pos + 1] as usize) << 7;
    (v < long_table.len()).then_some(v)
}

/// What the tag at `pos` opens.
pub(super) enum Next<'a> {
    /// A known field with a wire type it takes.
    Field { num: u32, wtype: u8, fidx: usize, f: &'a Op },
    /// The end of the open group (a group end that does not match it is an error).
    EndGroup,
    /// An unknown field, or a known one with a wire type it cannot take.
    Unknown { num: u32, wtype: u8 },
}

/// Reads the tag at `*pos` (`pos < end`) and moves past it: one-byte tags of known
/// fields through the tag table, the rest through `read_field_tag` and `lookup`.
/// `group` is the open group's field number (0: none).
#[inline(always)]
pub(super) fn next_tag<'a>(info: &'a MsgInfo, msg: &Message, buf: &[u8], pos: &mut usize, end: usize, group: u32) -> Result<Next<'a>, DecodeError> {
    let b = buf[*pos];
    if let Some(fidx) = by_tag(info, b) {
        *pos += 1;
        return Ok(Next::Field { num: (b >> 3) as u32, wtype: b & 7, fidx, f: &info.ops[fidx] });
    }
    if let Some(v) = two_byte_tag(&info.by_tag_long, buf, *pos, end) {
        let e = info.by_tag_long[v] as usize;
        if e != 0 {
            *pos += 2;
            return Ok(Next::Field { num: (v >> 3) as u32, wtype: (v & 7) as u8, fidx: e - 1, f: &info.ops[e - 1] });
        }
    }
    let tag_pos = *pos;
    let (num, wtype, p) = read_field_tag(buf, tag_pos, end)?;
    *pos = p;
    if wtype == wt::END_GROUP {
        return if group == num { Ok(Next::EndGroup) } else { err(RejectKind::GroupMismatch, tag_pos) };
    }
    Ok(match lookup(info, msg, num, wtype) {
        Some((fidx, f)) => Next::Field { num, wtype, fidx, f },
        None => Next::Unknown { num, wtype },
    })
}

/// The bytes of a length-delimited value whose length is at `pos`: `(start, end)`.
/// A length prefix is at most 5 bytes (protobuf 7.x rejects longer ones, non-minimal
/// zero-padded ones included).
#[inline(always)]
pub(super) fn read_len(buf: &[u8], pos: usize, end: usize) -> Result<(usize, usize), DecodeError> {
    let (len, p) = read_varint(buf, pos, end).map_err(|e| rd(e, pos))?;
    if p - pos > MAX_LEN_BYTES {
        return err(RejectKind::VarintTooLong, pos);
    }
    if len > (end - p) as u64 {
        return err(RejectKind::LengthPastEnd, pos);
    }
    Ok((p, p + len as usize))
}

/// One raw value of wire type VARINT, FIXED32 or FIXED64 at `pos`, and where it ends.
#[inline(always)]
pub(super) fn read_scalar(buf: &[u8], pos: usize, end: usize, wtype: u8) -> Result<(u64, usize), DecodeError> {
    match wtype {
        wt::VARINT => read_varint(buf, pos, end).map_err(|e| rd(e, pos)),
        wt::FIXED32 => {
            if end - pos < 4 {
                return err(RejectKind::Truncated, pos);
            }
            Ok((u32::from_le_bytes(buf[pos..pos + 4].try_into().unwrap()) as u64, pos + 4))
        }
        _ => {
            if end - pos < 8 {
                return err(RejectKind::Truncated, pos);
            }
            Ok((u64::from_le_bytes(buf[pos..pos + 8].try_into().unwrap()), pos + 8))
        }
    }
}

/// One element of a packed run of wire type `wire` that ends at `vend`: a fixed-size
/// element cut by the end is a `packed_length` error.
#[inline(always)]
fn read_packed(buf: &[u8], p: usize, vend: usize, wire: u8) -> Result<(u64, usize), DecodeError> {
    match wire {
        wt::VARINT => read_varint(buf, p, vend).map_err(|e| rd(e, p)),
        wt::FIXED32 => {
            if vend - p < 4 {
                return err(RejectKind::PackedLength, p);
            }
            Ok((u32::from_le_bytes(buf[p..p + 4].try_into().unwrap()) as u64, p + 4))
        }
        _ => {
            if vend - p < 8 {
                return err(RejectKind::PackedLength, p);
            }
            Ok((u64::from_le_bytes(buf[p..p + 8].try_into().unwrap()), p + 8))
        }
    }
}

/// The raw values of a scalar field, read in turn: one value of the field's own wire
/// type, or a packed run (wire type LEN).
pub(super) struct Scalars {
    p: usize,
    end: usize,
    /// Wire type of the values (word-sized: a byte here made the compiler shuffle the
    /// struct through memory in the hot loop).
    wire: usize,
    /// Read up to `end` (a packed run, or a single value already read).
    run: bool,
}

impl Scalars {
    /// The values of field `f`, whose value bytes start at `pos`.
    #[inline(always)]
    pub fn new(buf: &[u8], pos: usize, end: usize, wtype: u8, f: &Op) -> Result<Scalars, DecodeError> {
        if wtype == wt::LEN {
            let (p, vend) = read_len(buf, pos, end)?;
            Ok(Scalars { p, end: vend, wire: f.wire as usize, run: true })
        } else {
            Ok(Scalars { p: pos, end, wire: wtype as usize, run: false })
        }
    }

    /// The next raw value, if any.
    #[inline(always)]
    pub fn next(&mut self, buf: &[u8]) -> Result<Option<u64>, DecodeError> {
        if self.run {
            if self.p >= self.end {
                return Ok(None);
            }
            let (v, q) = read_packed(buf, self.p, self.end, self.wire as u8)?;
            self.p = q;
            return Ok(Some(v));
        }
        let (v, q) = read_scalar(buf, self.p, self.end, self.wire as u8)?;
        (self.p, self.end, self.run) = (q, q, true);
        Ok(Some(v))
    }

    /// Where the field's bytes end, once every value has been read.
    #[inline(always)]
    pub fn pos(&self) -> usize {
        self.p
    }
}

/// Whether `raw` is a value outside closed enum `closed` (so it goes to the unknown
/// fields, re-encoded).
#[inline(always)]
pub(super) fn outside(closed: Option<&[i32]>, raw: u64) -> bool {
    closed.is_some_and(|vals| vals.binary_search(&(raw as u32 as i32)).is_err())
}

/// The size of field `num`'s enum value `raw` re-encoded as an unknown field.
#[inline(always)]
pub(super) fn enum_unknown_len(num: u32, raw: u64) -> u32 {
    (varint_len((num as u64) << 3) + varint_len(raw as u32 as u64)) as u32
}

/// Field `num`'s enum value `v` re-encoded (tag and value) into `out`; returns its length.
pub(super) fn encode_enum_unknown(out: &mut [u8; 10], num: u32, v: u32) -> usize {
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

/// Memory representation of a scalar, from its raw wire value.
#[inline(always)]
pub(super) fn convert(kind: Kind, raw: u64) -> u64 {
    match kind {
        Kind::Int32 | Kind::UInt32 | Kind::Enum | Kind::Fixed32 | Kind::SFixed32 | Kind::Float => raw as u32 as u64,
        Kind::SInt32 => zigzag32(raw as u32) as u32 as u64,
        Kind::SInt64 => zigzag64(raw) as u64,
        Kind::Bool => (raw != 0) as u64,
        _ => raw,
    }
}

/// Checks a string field's bytes (at input offset `at`) when its field validates UTF-8.
#[inline(always)]
pub(super) fn check_utf8(f: &Op, data: &[u8], at: usize) -> Result<(), DecodeError> {
    if f.validates_utf8() && !valid_utf8(data) {
        return err(RejectKind::InvalidUtf8, at);
    }
    Ok(())
}

/// UTF-8 validation: a word-at-a-time ASCII check first (most protobuf strings are short
/// and ASCII); short non-ASCII strings through the shift DFA (the SIMD validator hands
/// inputs under 64 bytes to the standard library's, which branches on every character
/// and mispredicts on mixed text); longer ones through the SIMD validator.
#[inline(always)]
fn valid_utf8(b: &[u8]) -> bool {
    ascii(b) || if b.len() < 64 { utf8_dfa(b) } else { simdutf8::basic::from_utf8(b).is_ok() }
}

/// Whether every byte is below 0x80: whole words, the tail as one more (overlapping)
/// word, short strings as two overlapping halves; no loop over single bytes.
#[inline(always)]
fn ascii(b: &[u8]) -> bool {
    let n = b.len();
    let word = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().unwrap());
    let high = if n >= 8 {
        let mut high = word(n - 8);
        let mut i = 0;
        while i + 8 <= n {
            high |= word(i);
            i += 8;
        }
        high
    } else if n >= 4 {
        let half = |i: usize| u32::from_le_bytes(b[i..i + 4].try_into().unwrap()) as u64;
        half(0) | half(n - 4)
    } else if n > 0 {
        (b[0] | b[n / 2] | b[n - 1]) as u64
    } else {
        0
    };
    high & 0x8080_8080_8080_8080 == 0
}

/// The UTF-8 automaton as a shift DFA: a state is a multiple of 6, and `UTF8_NEXT[byte]`
/// holds, at bit `state`, the next state. One load (independent of the state) and one
/// shift per byte, no branch. States: 0 accept, 1 reject (absorbing), 2/3/4 one/two/three
/// continuation bytes to go, 5 after E0 (A0-BF next), 6 after ED (80-9F next: no
/// surrogates), 7 after F0 (90-BF next), 8 after F4 (80-8F next: nothing past U+10FFFF).
static UTF8_NEXT: [u64; 256] = utf8_table();

const fn utf8_table() -> [u64; 256] {
    const fn put(row: u64, from: u64, to: u64) -> u64 {
        (row & !(63 << (6 * from))) | (6 * to) << (6 * from)
    }
    let mut t = [0u64; 256];
    let mut b = 0;
    while b < 256 {
        // Every transition rejects unless set below.
        let mut row = 0u64;
        let mut s = 0;
        while s < 9 {
            row = put(row, s, 1);
            s += 1;
        }
        let (cont_80_8f, cont_90_9f, cont_a0_bf) = (b >= 0x80 && b <= 0x8f, b >= 0x90 && b <= 0x9f, b >= 0xa0 && b <= 0xbf);
        if b < 0x80 {
            row = put(row, 0, 0);
        } else if cont_80_8f || cont_90_9f || cont_a0_bf {
            row = put(row, 2, 0);
            row = put(row, 3, 2);
            row = put(row, 4, 3);
            if cont_a0_bf {
                row = put(row, 5, 2);
            } else {
                row = put(row, 6, 2);
            }
            if !cont_80_8f {
                row = put(row, 7, 3);
            } else {
                row = put(row, 8, 3);
            }
        } else if b >= 0xc2 && b <= 0xdf {
            row = put(row, 0, 2);
        } else if b == 0xe0 {
            row = put(row, 0, 5);
        } else if b == 0xed {
            row = put(row, 0, 6);
        } else if b >= 0xe1 && b <= 0xef {
            row = put(row, 0, 3);
        } else if b == 0xf0 {
            row = put(row, 0, 7);
        } else if b >= 0xf1 && b <= 0xf3 {
            row = put(row, 0, 4);
        } else if b == 0xf4 {
            row = put(row, 0, 8);
        }
        t[b] = row;
        b += 1;
    }
    t
}

#[inline(always)]
fn utf8_dfa(b: &[u8]) -> bool {
    let mut state = 0u64;
    for &x in b {
        state = (UTF8_NEXT[x as usize] >> state) & 63;
    }
    state == 0
}

#[inline(always)]
pub(super) fn align8(v: u32) -> u32 {
    (v + 7) & !7
}

impl Scratch {
    /// Skips one unknown value whose tag ended at `pos`; returns where it ends.
    pub(super) fn skip_value(&mut self, buf: &[u8], pos: usize, end: usize, num: u32, wtype: u8, max_depth: usize) -> Result<usize, DecodeError> {
        match wtype {
            wt::VARINT => read_varint(buf, pos, end).map(|(_, p)| p).map_err(|e| rd(e, pos)),
            wt::FIXED64 => if end - pos < 8 { err(RejectKind::Truncated, pos) } else { Ok(pos + 8) },
            wt::FIXED32 => if end - pos < 4 { err(RejectKind::Truncated, pos) } else { Ok(pos + 4) },
            wt::LEN => read_len(buf, pos, end).map(|(_, e)| e),
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

// ---- the image (write and fast passes) -----------------------------------------------

/// An image being filled: exact-size and zeroed (write pass), or zeroed as it grows
/// (fast pass: the caller's `Vec`, or its fixed buffer).
pub(super) trait Image {
    fn bytes(&mut self) -> &mut [u8];
    /// Makes the first `new_top` bytes addressable and zeroed, within `limit`. An error
    /// only makes the fast pass give up (its offset `at` is never reported).
    fn grow(&mut self, new_top: u64, limit: u64, at: usize) -> Result<(), DecodeError>;
}

/// The write pass's image: sized by the pre-pass, so it never grows.
impl Image for [u8] {
    #[inline(always)]
    fn bytes(&mut self) -> &mut [u8] {
        self
    }
    #[inline(always)]
    fn grow(&mut self, _: u64, _: u64, _: usize) -> Result<(), DecodeError> {
        Ok(())
    }
}

/// Reads one value of a field whose store is `st` at `pos` and stores it at `at`;
/// returns where the value ends. The same bytes as `read_scalar`, `convert` and
/// `put_scalar` give (`General` is never passed: it shares the 8-byte arm).
#[inline(always)]
pub(super) fn store_scalar(st: Store, buf: &[u8], pos: usize, end: usize, img: &mut [u8], at: usize) -> Result<usize, DecodeError> {
    let varint = || read_varint(buf, pos, end).map_err(|e| rd(e, pos));
    // One dispatch: every arm reads and stores its own way.
    match st {
        Store::Varint64 => {
            let (raw, q) = varint()?;
            img[at..at + 8].copy_from_slice(&raw.to_le_bytes());
            Ok(q)
        }
        Store::Varint32 => {
            let (raw, q) = varint()?;
            img[at..at + 4].copy_from_slice(&(raw as u32).to_le_bytes());
            Ok(q)
        }
        Store::Bool => {
            let (raw, q) = varint()?;
            img[at] = (raw != 0) as u8;
            Ok(q)
        }
        Store::ZigZag32 => {
            let (raw, q) = varint()?;
            img[at..at + 4].copy_from_slice(&zigzag32(raw as u32).to_le_bytes());
            Ok(q)
        }
        Store::ZigZag64 => {
            let (raw, q) = varint()?;
            img[at..at + 8].copy_from_slice(&zigzag64(raw).to_le_bytes());
            Ok(q)
        }
        Store::Fixed32 => {
            if end - pos < 4 {
                return err(RejectKind::Truncated, pos);
            }
            img[at..at + 4].copy_from_slice(&buf[pos..pos + 4]);
            Ok(pos + 4)
        }
        Store::Fixed64 | Store::General => {
            if end - pos < 8 {
                return err(RejectKind::Truncated, pos);
            }
            img[at..at + 8].copy_from_slice(&buf[pos..pos + 8]);
            Ok(pos + 8)
        }
    }
}

/// Stores a scalar of 1, 4 or 8 bytes (fixed-size stores, no memcpy call).
#[inline(always)]
pub(super) fn put_scalar(img: &mut [u8], at: usize, size: usize, v: u64) {
    match size {
        8 => img[at..at + 8].copy_from_slice(&v.to_le_bytes()),
        4 => img[at..at + 4].copy_from_slice(&(v as u32).to_le_bytes()),
        _ => img[at] = v as u8,
    }
}

#[inline(always)]
pub(super) fn write_ptr(img: &mut [u8], at: usize, pw: usize, v: u64) {
    if pw == 8 {
        img[at..at + 8].copy_from_slice(&v.to_le_bytes());
    } else {
        img[at..at + 4].copy_from_slice(&(v as u32).to_le_bytes());
    }
}

#[inline(always)]
pub(super) fn read_ptr(img: &[u8], at: usize, pw: usize) -> u64 {
    if pw == 8 {
        u64::from_le_bytes(img[at..at + 8].try_into().unwrap())
    } else {
        u32::from_le_bytes(img[at..at + 4].try_into().unwrap()) as u64
    }
}

/// The struct's header word (its type word), when the layout has them.
pub(super) fn write_header(schema: &CompiledSchema, opts: &DecodeOptions, img: &mut [u8], off: usize, msg: u32) {
    if schema.layout.header_words {
        let v = opts.type_words.get(msg as usize).copied().unwrap_or(msg as u64);
        write_ptr(img, off, schema.ptr() as usize, v);
    }
}

/// Switches the oneof at `soff` to case `num`: its storage zeroed, the case word set.
pub(super) fn set_oneof_case(img: &mut [u8], soff: usize, o: &Oneof, num: u32) {
    let s = soff + o.storage_offset as usize;
    img[s..s + o.storage_size as usize].fill(0);
    let c = soff + o.case_offset as usize;
    img[c..c + 4].copy_from_slice(&num.to_le_bytes());
}

/// Marks a singular non-message field present (presence bit, or oneof case switch).
/// `cases` is the instance's first oneof state slot.
#[inline(always)]
pub(super) fn set_present(img: &mut [u8], soff: usize, msg: &Message, f: &Op, num: u32, state: &mut [u32], cases: usize) {
    match f.presence {
        Presence::HasBit(_) => img[soff + f.hb_byte as usize] |= f.hb_mask,
        Presence::Oneof(o) => {
            let cs = cases + o as usize;
            if state[cs] != num {
                state[cs] = num;
                set_oneof_case(img, soff, &msg.oneofs[o as usize], num);
            }
        }
        _ => {}
    }
}

/// Where the image is placed and how far it may grow: what the allocator steps need.
#[derive(Clone, Copy)]
pub(super) struct Place {
    pub base: u64,
    /// Pointer width in bytes.
    pub pw: usize,
    pub limit: u64,
}

impl Place {
    pub fn new(schema: &CompiledSchema, opts: &DecodeOptions) -> Place {
        Place { base: opts.base, pw: schema.ptr() as usize, limit: fill_limit(schema, opts) }
    }
}

/// How large the write and fast passes may let the image grow. It must also end by the
/// top of the pointers' address space (4 GiB, or 2^64), or `base + offset` would wrap and
/// offsets read back from pointers would be wrong: past that the fast pass gives up, and
/// the two passes reject the base.
pub(super) fn fill_limit(schema: &CompiledSchema, opts: &DecodeOptions) -> u64 {
    let reach = if schema.ptr() == 4 { (1u64 << 32).saturating_sub(opts.base) } else { (u64::MAX - opts.base).saturating_add(1) };
    opts.max_image_bytes.min(u32::MAX as u64).min(reach)
}

/// Allocates `size` bytes (8-aligned) at `top` for a singular sub-message, points the
/// field at `at` to it and writes its header word. Returns the struct's offset.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub(super) fn new_struct<I: Image + ?Sized>(schema: &CompiledSchema, opts: &DecodeOptions, img: &mut I, top: &mut u64, pl: Place, at: usize, sub: u32, size8: u32, tag_pos: usize) -> Result<usize, DecodeError> {
    let off = *top as usize;
    *top += size8 as u64;
    img.grow(*top, pl.limit, tag_pos)?;
    let b = img.bytes();
    write_ptr(b, at, pl.pw, pl.base + off as u64);
    write_header(schema, opts, b, off, sub);
    Ok(off)
}

/// Stores a string's `{ptr,len}` at `at`, its bytes copied to `top` (an empty string:
/// a null pointer, nothing copied). `INLINE` (the fast pass) copies strings of up to 32
/// bytes with [`copy_short`]; the write pass, the reference, always with `copy_from_slice`.
#[inline(always)]
pub(super) fn put_string<const INLINE: bool, I: Image + ?Sized>(img: &mut I, top: &mut u64, pl: Place, at: usize, data: &[u8], tag_pos: usize) -> Result<(), DecodeError> {
    let ptr = if data.is_empty() {
        0
    } else {
        let o = *top as usize;
        *top += align8(data.len() as u32) as u64;
        img.grow(*top, pl.limit, tag_pos)?;
        let dst = &mut img.bytes()[o..o + data.len()];
        if INLINE && data.len() <= 32 {
            copy_short(dst, data);
        } else {
            dst.copy_from_slice(data);
        }
        pl.base + o as u64
    };
    let b = img.bytes();
    write_ptr(b, at, pl.pw, ptr);
    write_ptr(b, at + pl.pw, pl.pw, data.len() as u64);
    Ok(())
}

/// Copies `src` (1 to 32 bytes) to `dst` of the same length without a call to `memcpy`:
/// two loads of the first and the last 16, 8, 4, 2 or 1 bytes (overlapping when the
/// length is not twice the width), then two stores. Nothing outside either slice is read
/// or written. Most strings of the workloads are this short, where the call's fixed cost
/// dominates the copy.
#[inline(always)]
pub(super) fn copy_short(dst: &mut [u8], src: &[u8]) {
    let n = src.len();
    assert!(dst.len() == n && (1..=32).contains(&n));
    macro_rules! two {
        ($w:literal) => {{
            let head: [u8; $w] = src[..$w].try_into().unwrap();
            let tail: [u8; $w] = src[n - $w..].try_into().unwrap();
            dst[..$w].copy_from_slice(&head);
            dst[n - $w..].copy_from_slice(&tail);
        }};
    }
    if n >= 16 {
        two!(16)
    } else if n >= 8 {
        two!(8)
    } else if n >= 4 {
        two!(4)
    } else if n >= 2 {
        two!(2)
    } else {
        dst[0] = src[0];
    }
}

/// Slot of the next element of the repeated field whose `{ptr,count}` is at `at`,
/// allocating the array (of `total` elements) on the first one.
#[inline(always)]
pub(super) fn next_element<I: Image + ?Sized>(img: &mut I, top: &mut u64, pl: Place, at: usize, total: u32, stride: usize) -> Result<usize, DecodeError> {
    let pw = pl.pw;
    let n = read_ptr(img.bytes(), at + pw, pw);
    let arr = if n == 0 {
        let a = *top;
        *top += (total as u64 * stride as u64 + 7) & !7;
        img.grow(*top, pl.limit, at)?;
        write_ptr(img.bytes(), at, pw, pl.base + a);
        a
    } else {
        read_ptr(img.bytes(), at, pw) - pl.base
    };
    if n >= total as u64 {
        // Only the fast pass can miscount (it gives up; the two passes are exact).
        return err(RejectKind::Truncated, at);
    }
    write_ptr(img.bytes(), at + pw, pw, n + 1);
    Ok((arr + n * stride as u64) as usize)
}

/// Appends `bytes` to the unknown-field buffer whose `{ptr,len}` is at `at`, allocating
/// the buffer (`total` bytes) on the first append.
pub(super) fn append_unknown<I: Image + ?Sized>(img: &mut I, top: &mut u64, pl: Place, at: usize, total: u32, bytes: &[u8]) -> Result<(), DecodeError> {
    let pw = pl.pw;
    let n = read_ptr(img.bytes(), at + pw, pw);
    let buf = if n == 0 {
        let a = *top;
        *top += align8(total) as u64;
        img.grow(*top, pl.limit, at)?;
        write_ptr(img.bytes(), at, pw, pl.base + a);
        a
    } else {
        read_ptr(img.bytes(), at, pw) - pl.base
    } as usize;
    if n + bytes.len() as u64 > total as u64 {
        return err(RejectKind::Truncated, at);
    }
    let o = buf + n as usize;
    let b = img.bytes();
    b[o..o + bytes.len()].copy_from_slice(bytes);
    write_ptr(b, at + pw, pw, n + bytes.len() as u64);
    Ok(())
}

/// Appends field `num`'s closed-enum value `raw` (not one of the enum's) to the unknown
/// fields at `at`, re-encoded.
pub(super) fn append_enum_unknown<I: Image + ?Sized>(img: &mut I, top: &mut u64, pl: Place, at: usize, total: u32, num: u32, raw: u64) -> Result<(), DecodeError> {
    let mut tmp = [0u8; 10];
    let k = encode_enum_unknown(&mut tmp, num, raw as u32);
    append_unknown(img, top, pl, at, total, &tmp[..k])
}

#[cfg(test)]
mod tests {
    use super::{ascii, copy_short, lookup, next_tag, read_field_tag, utf8_dfa, valid_utf8, Next};

    #[test]
    fn copy_short_copies_every_length_and_writes_nothing_else() {
        let src: Vec<u8> = (0..40u8).map(|i| i.wrapping_mul(29) ^ 0x5a).collect();
        for n in 1..=32 {
            for off in 0..8 {
                let mut dst = [0xeeu8; 48];
                copy_short(&mut dst[off..off + n], &src[off..off + n]);
                assert_eq!(&dst[off..off + n], &src[off..off + n], "length {n} at {off}");
                assert!(dst[..off].iter().chain(&dst[off + n..]).all(|&b| b == 0xee), "length {n} at {off} wrote outside");
            }
        }
    }
    use crate::protobuf::decode::tables::Tables;
    use heapwire_schema::{compile_files, wire_type as wt, LayoutOptions};

    #[test]
    fn tag_tables_agree_with_the_general_reading_on_every_two_byte_prefix() {
        // unit.Node has fields 1-27 (one- and two-byte tags, packable repeated ones);
        // every first two bytes, with the end after one byte, two, and further.
        let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("testdata");
        let schema = compile_files(&[dir.join("unit.proto")], &[dir], LayoutOptions::default()).unwrap();
        let t = Tables::new(&schema);
        for (mi, msg) in schema.messages.iter().enumerate() {
            let info = &t.info[mi];
            for b0 in 0..=255u8 {
                for b1 in 0..=255u8 {
                    let buf = [b0, b1, 0x01, 0x01, 0x01];
                    for end in [1, 2, buf.len()] {
                        let mut pos = 0;
                        let got = match next_tag(info, msg, &buf, &mut pos, end, 5) {
                            Ok(Next::Field { num, wtype, fidx, .. }) => Ok((0, num, wtype, fidx, pos)),
                            Ok(Next::EndGroup) => Ok((1, 0, 0, 0, pos)),
                            Ok(Next::Unknown { num, wtype }) => Ok((2, num, wtype, 0, pos)),
                            Err(e) => Err(e),
                        };
                        let want = read_field_tag(&buf, 0, end).and_then(|(num, wtype, p)| {
                            if wtype == wt::END_GROUP {
                                return if num == 5 { Ok((1, 0, 0, 0, p)) } else { super::err(heapwire_engine::RejectKind::GroupMismatch, 0) };
                            }
                            Ok(match lookup(info, msg, num, wtype) {
                                Some((fidx, _)) => (0, num, wtype, fidx, p),
                                None => (2, num, wtype, 0, p),
                            })
                        });
                        assert_eq!(got, want, "{} tag {b0:02x} {b1:02x} end {end}", msg.full_name);
                    }
                }
            }
        }
    }

    #[test]
    fn ascii_finds_a_high_byte_at_every_position_of_every_short_length() {
        for n in 0..40 {
            let b = vec![b'a'; n];
            assert!(ascii(&b), "{n}");
            for i in 0..n {
                for high in [0x80u8, 0xc3, 0xff] {
                    let mut c = b.clone();
                    c[i] = high;
                    assert!(!ascii(&c), "length {n}, byte {i}");
                }
            }
        }
    }

    fn agree(b: &[u8]) {
        assert_eq!(ascii(b), b.iter().all(|&x| x < 0x80), "{b:02x?}");
        let want = std::str::from_utf8(b).is_ok();
        assert_eq!(utf8_dfa(b), want, "{b:02x?}");
        assert_eq!(valid_utf8(b), want, "{b:02x?}");
    }

    #[test]
    fn utf8_dfa_agrees_with_std_on_every_sequence_up_to_three_bytes() {
        agree(&[]);
        for a in 0..=255u8 {
            agree(&[a]);
            for b in 0..=255u8 {
                agree(&[a, b]);
                for c in 0..=255u8 {
                    let s = [a, b, c];
                    assert_eq!(utf8_dfa(&s), std::str::from_utf8(&s).is_ok(), "{s:02x?}");
                }
            }
        }
    }

    #[test]
    fn utf8_dfa_agrees_with_std_on_four_byte_sequences() {
        // Every lead byte with every second byte, and third and fourth bytes at the edges
        // of the continuation range and just outside it.
        let edges = [0x00u8, 0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0, 0xff];
        for a in 0..=255u8 {
            for b in 0..=255u8 {
                for c in edges {
                    for d in edges {
                        agree(&[a, b, c, d]);
                    }
                }
            }
        }
    }

    proptest::proptest! {
        #[test]
        fn utf8_validation_agrees_with_std(text in ".{0,40}", cut in 0usize..200, junk in proptest::prelude::any::<u8>(), at in 0usize..200) {
            // Valid text (any length, through every path), then cut or corrupted.
            let mut b = text.into_bytes();
            agree(&b);
            if !b.is_empty() {
                let i = at % b.len();
                b[i] = junk;
                agree(&b);
                b.truncate(cut % (b.len() + 1));
                agree(&b);
            }
            let long: Vec<u8> = b.iter().copied().cycle().take(b.len() * 9).collect();
            agree(&long);
        }
    }
}

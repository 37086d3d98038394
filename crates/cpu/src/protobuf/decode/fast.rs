//! The fast pass: the write pass without a pre-pass. A repeated field's array is
//! allocated at its first value for the run that starts there: the values that follow
//! one another with the same tag, or a packed run's elements (`count_len_run`,
//! `count_scalar_run`, `count_varint_ends`). The official serializers write a field's
//! values together, so that is all of them; a value after the array is allocated means
//! they came apart, and the pass gives up. Closed enums, groups and unknown bytes are
//! counted lazily: the first time an instance needs one of those counts, the rest of its
//! bytes are scanned at top level (`scan_counts`), exact whenever every instance's bytes
//! are contiguous. On a merge (a singular message field seen twice), values of a repeated
//! field apart, a map entry with unknown fields, a full image, or any error, it gives up
//! and the caller runs the two passes instead (which also report errors canonically), so
//! the errors it returns carry no meaning.

use heapwire_engine::RejectKind;
use heapwire_schema::{wire_type as wt, CompiledSchema, Kind, Presence, NONE};

use super::super::wire::{read_tag, read_varint};
use super::common::{
    append_enum_unknown, append_unknown, by_tag, check_utf8, convert, enum_unknown_len, err, lookup, new_struct, next_element, outside, put_scalar, store_scalar, two_byte_tag,
    put_string, next_tag, read_len, read_ptr, read_scalar, set_oneof_case, set_present, write_header, write_ptr, Image, Next, Place, Scalars,
};
use super::tables::{Frame, Run, Store, Tables, Undo, SCAN_COUNT_ONE, SCAN_COUNT_PACKED, SCAN_FIXED32, SCAN_FIXED64, SCAN_VARINT};
use super::{DecodeError, DecodeOptions, Scratch};

/// `inst_counts` of an instance whose counts have not been scanned yet.
const UNSCANNED: usize = u32::MAX as usize;

/// Runs the fast pass over `buf` as message `root` into `img` (grown as needed, within
/// `pl.limit`); returns
/// the image size, or an error: give up. Inlined into its one caller per image type
/// (measurably faster on small messages than a call).
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub(super) fn fast_pass<I: Image + ?Sized>(schema: &CompiledSchema, t: &Tables, s: &mut Scratch, root: u32, buf: &[u8], opts: &DecodeOptions, pl: Place, img: &mut I) -> Result<u64, DecodeError> {
    let max_depth = opts.max_depth as usize;
    s.clear_fast();
    // The bump allocator.
    let mut top: u64 = t.info[root as usize].size8 as u64;
    let root_id = s.uncounted_instance(t, root);
    img.grow(top, pl.limit, 0)?;
    write_header(schema, opts, img.bytes(), 0, root);
    s.frames.push(Frame { msg: root, inst: root_id, off: 0, end: buf.len(), group: 0, start: 0, undo: Undo::default(), run: Run::default() });
    let mut pos = 0usize;

    'frames: loop {
        let fr = s.frames.last().unwrap();
        let (mi, inst, soff, end, group) = (fr.msg as usize, fr.inst as usize, fr.off as usize, fr.end, fr.group);
        let msg = &schema.messages[mi];
        let info = &t.info[mi];
        let mut cbase = s.inst_counts[inst] as usize;
        let sbase = s.inst_state[inst] as usize;
        let cases = sbase + info.oneof_state as usize;
        let unknown_at = soff + msg.unknown_offset as usize;
        let uslot = info.unknown_slot();
        let mut run = fr.run;
        loop {
            if pos >= end {
                if group != 0 || run.left != 0 {
                    return err(RejectKind::Truncated, pos);
                }
                let done = s.frames.pop().unwrap();
                if msg.is_map_entry() && cbase != UNSCANNED && s.counts[cbase + uslot] > 0 {
                    // Kept among the parent's unknown fields (see the pre-pass): give up.
                    return err(RejectKind::Truncated, done.start);
                }
                if s.frames.is_empty() {
                    break 'frames;
                }
                continue 'frames;
            }
            let tag_pos = pos;
            let (num, wtype, fidx, f) = match next_tag(info, msg, buf, &mut pos, end, group)? {
                Next::Field { num, wtype, fidx, f } => (num, wtype, fidx, f),
                Next::EndGroup => {
                    s.frames.pop();
                    continue 'frames;
                }
                Next::Unknown { num, wtype } => {
                    let vend = s.skip_value(buf, pos, end, num, wtype, max_depth)?;
                    if cbase == UNSCANNED {
                        cbase = s.scan_instance(schema, t, buf, tag_pos, end, mi, inst);
                    }
                    append_unknown(img, &mut top, pl, unknown_at, s.counts[cbase + uslot], &buf[tag_pos..vend])?;
                    pos = vend;
                    continue;
                }
            };
            if f.store != Store::General {
                // The common case, tested before the dispatch on the kind: one value of a
                // singular scalar (not a closed enum, not in a oneof), read and stored by
                // its kind and width.
                let b = img.bytes();
                if f.hb_mask != 0 {
                    b[soff + f.hb_byte as usize] |= f.hb_mask;
                }
                pos = store_scalar(f.store, buf, pos, end, b, soff + f.offset as usize)?;
                continue;
            }
            if f.simple && wtype != wt::LEN {
                // A singular scalar in a oneof.
                let (raw, q) = read_scalar(buf, pos, end, wtype)?;
                pos = q;
                let b = img.bytes();
                set_present(b, soff, msg, f, num, &mut s.state, cases);
                put_scalar(b, soff + f.offset as usize, f.size as usize, convert(f.kind, raw));
                continue;
            }
            let fslot = info.slot[fidx] as usize;

            match f.kind {
                Kind::Message | Kind::Group => {
                    let vstart = pos;
                    let (cend, cgroup) = if f.kind == Kind::Group {
                        (end, num)
                    } else {
                        let (p, e) = read_len(buf, pos, end)?;
                        pos = p;
                        (e, 0)
                    };
                    if s.frames.len() > max_depth {
                        return err(RejectKind::DepthExceeded, tag_pos);
                    }
                    let sub = f.sub;
                    let (child, coff);
                    if f.run {
                        let (at, stride) = (soff + f.offset as usize, schema.messages[sub as usize].size as usize);
                        if run.left != 0 && run.at as usize == at {
                            // The next element of the open run.
                            coff = run.next as usize;
                            run.next += stride as u32;
                            run.left -= 1;
                        } else {
                            if run.left != 0 {
                                return err(RejectKind::Truncated, tag_pos); // a run cut short: miscounted
                            }
                            let k = count_len_run(buf, tag_pos, vstart, end);
                            let arr = new_array(img, &mut top, pl, at, k, stride)?;
                            if t.info[sub as usize].flat_entry {
                                // The whole run of map entries, in place.
                                let mut p = vstart;
                                for i in 0..k as usize {
                                    if i > 0 {
                                        p += vstart - tag_pos;
                                    }
                                    let (d, e) = read_len(buf, p, end)?;
                                    write_header(schema, opts, img.bytes(), arr + i * stride, sub);
                                    flat_entry(schema, t, img, &mut top, pl, buf, d, e, arr + i * stride, sub as usize)?;
                                    p = e;
                                }
                                pos = p;
                                continue;
                            }
                            coff = arr;
                            run = Run { at: at as u32, next: (arr + stride) as u32, left: k - 1 };
                        }
                        write_header(schema, opts, img.bytes(), coff, sub);
                        child = s.uncounted_instance(t, sub);
                    } else if f.is_repeated() {
                        // Repeated groups: counted by the instance's scan.
                        if cbase == UNSCANNED {
                            cbase = s.scan_instance(schema, t, buf, tag_pos, end, mi, inst);
                        }
                        coff = next_element(img, &mut top, pl, soff + f.offset as usize, s.counts[cbase + fslot], schema.messages[sub as usize].size as usize)?;
                        write_header(schema, opts, img.bytes(), coff, sub);
                        if t.info[sub as usize].flat_entry {
                            flat_entry(schema, t, img, &mut top, pl, buf, pos, cend, coff, sub as usize)?;
                            pos = cend;
                            continue;
                        }
                        child = s.uncounted_instance(t, sub);
                    } else {
                        let sslot = sbase + fslot;
                        let mut existing = s.state[sslot];
                        if let Presence::Oneof(o) = f.presence {
                            let cs = cases + o as usize;
                            if s.state[cs] != num {
                                existing = NONE;
                                s.state[cs] = num;
                                set_oneof_case(img.bytes(), soff, &msg.oneofs[o as usize], num);
                            }
                        }
                        if existing != NONE {
                            // A merge: this instance's bytes are not contiguous.
                            return err(RejectKind::Truncated, tag_pos);
                        }
                        coff = new_struct(schema, opts, img, &mut top, pl, soff + f.offset as usize, sub, t.info[sub as usize].size8, tag_pos)?;
                        child = s.uncounted_instance(t, sub);
                        s.state[sslot] = child;
                    }
                    s.frames.last_mut().unwrap().run = run;
                    s.frames.push(Frame { msg: sub, inst: child, off: coff as u32, end: cend, group: cgroup, start: tag_pos, undo: Undo::default(), run: Run::default() });
                    continue 'frames;
                }
                Kind::String | Kind::Bytes if f.is_repeated() => {
                    // The whole run of strings: the array first, then each string's bytes.
                    let (stride, tl) = (2 * pl.pw, pos - tag_pos);
                    let k = count_len_run(buf, tag_pos, pos, end);
                    let arr = new_array(img, &mut top, pl, soff + f.offset as usize, k, stride)?;
                    for i in 0..k as usize {
                        if i > 0 {
                            pos += tl;
                        }
                        let (p, vend) = read_len(buf, pos, end)?;
                        let data = &buf[p..vend];
                        check_utf8(f, data, p)?;
                        put_string::<true, _>(img, &mut top, pl, arr + i * stride, data, tag_pos)?;
                        pos = vend;
                    }
                }
                Kind::String | Kind::Bytes => {
                    let (p, vend) = read_len(buf, pos, end)?;
                    pos = vend;
                    let data = &buf[p..vend];
                    check_utf8(f, data, p)?;
                    set_present(img.bytes(), soff, msg, f, num, &mut s.state, cases);
                    put_string::<true, _>(img, &mut top, pl, soff + f.offset as usize, data, tag_pos)?;
                }
                _ if !f.is_repeated() => {
                    // A singular closed enum (every other singular scalar took the simple
                    // path): a value outside the enum goes to the unknown fields.
                    let (raw, q) = read_scalar(buf, pos, end, wtype)?;
                    pos = q;
                    if outside(t.closed_values(f), raw) {
                        if cbase == UNSCANNED {
                            cbase = s.scan_instance(schema, t, buf, tag_pos, end, mi, inst);
                        }
                        append_enum_unknown(img, &mut top, pl, unknown_at, s.counts[cbase + uslot], num, raw)?;
                    } else {
                        let b = img.bytes();
                        set_present(b, soff, msg, f, num, &mut s.state, cases);
                        put_scalar(b, soff + f.offset as usize, f.size as usize, convert(f.kind, raw));
                    }
                }
                _ if f.run => {
                    // Repeated scalars (not closed enums): a packed run, or the values
                    // that follow one another with this tag, into an array of their count.
                    let (at, size) = (soff + f.offset as usize, f.size as usize);
                    if wtype == wt::LEN {
                        let (p, vend) = read_len(buf, pos, end)?;
                        let k = match f.wire {
                            wt::VARINT => count_varint_ends(&buf[p..vend]),
                            w => {
                                let width = if w == wt::FIXED32 { 4 } else { 8 };
                                if (vend - p) % width != 0 {
                                    return err(RejectKind::PackedLength, p);
                                }
                                ((vend - p) / width) as u32
                            }
                        };
                        if k == 0 && vend > p {
                            // Bytes, but no varint ends among them.
                            return err(RejectKind::Truncated, p);
                        }
                        if k != 0 {
                            // Every varint read ends at one of the k bytes counted: at most
                            // k values are stored.
                            let arr = new_array(img, &mut top, pl, at, k, size)?;
                            let mut values = Scalars::new(buf, pos, end, wtype, f)?;
                            let mut e = arr;
                            while let Some(raw) = values.next(buf)? {
                                put_scalar(img.bytes(), e, size, convert(f.kind, raw));
                                e += size;
                            }
                            if e != arr + k as usize * size {
                                return err(RejectKind::PackedLength, p);
                            }
                        }
                        pos = vend;
                    } else {
                        let tl = pos - tag_pos;
                        let k = count_scalar_run(buf, tag_pos, pos, end, wtype);
                        let arr = new_array(img, &mut top, pl, at, k, size)?;
                        for i in 0..k as usize {
                            if i > 0 {
                                pos += tl;
                            }
                            let (raw, q) = read_scalar(buf, pos, end, wtype)?;
                            put_scalar(img.bytes(), arr + i * size, size, convert(f.kind, raw));
                            pos = q;
                        }
                    }
                }
                _ => {
                    // Repeated closed enums: one value, or a packed run. Values outside
                    // the enum go to the unknown fields, re-encoded.
                    if cbase == UNSCANNED {
                        cbase = s.scan_instance(schema, t, buf, tag_pos, end, mi, inst);
                    }
                    let closed = t.closed_values(f);
                    let (at, size) = (soff + f.offset as usize, f.size as usize);
                    let (total, unknown_total) = (s.counts[cbase + fslot], s.counts[cbase + uslot]);
                    let mut values = Scalars::new(buf, pos, end, wtype, f)?;
                    while let Some(raw) = values.next(buf)? {
                        if outside(closed, raw) {
                            append_enum_unknown(img, &mut top, pl, unknown_at, unknown_total, num, raw)?;
                        } else {
                            let e = next_element(img, &mut top, pl, at, total, size)?;
                            put_scalar(img.bytes(), e, size, convert(f.kind, raw));
                        }
                    }
                    pos = values.pos();
                }
            }
        }
    }
    Ok(top)
}

/// Fills a flat map entry (`MsgInfo::flat_entry`) whose struct is at `soff` from its
/// bytes `buf[pos..end]`, field by field as the main loop would (same stores in the same
/// order: a repeated key or value overwrites, its string copied anew), but without a
/// frame or an instance: a map entry is the most common sub-message of real requests.
/// Anything else in the entry (an unknown field, a wire type its field does not take)
/// gives up, as the main loop does for map entries with unknown fields.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn flat_entry<I: Image + ?Sized>(schema: &CompiledSchema, t: &Tables, img: &mut I, top: &mut u64, pl: Place, buf: &[u8], mut pos: usize, end: usize, soff: usize, mi: usize) -> Result<(), DecodeError> {
    let (msg, info) = (&schema.messages[mi], &t.info[mi]);
    while pos < end {
        let tag_pos = pos;
        let Some(i) = by_tag(info, buf[pos]) else { return err(RejectKind::Truncated, tag_pos) };
        let (f, num) = (&info.ops[i], (buf[pos] >> 3) as u32);
        pos += 1;
        if f.store != Store::General {
            // A scalar key or value (a flat entry has no oneof, so every scalar has a
            // store); a presence bit only in a proto2 entry.
            let b = img.bytes();
            if f.hb_mask != 0 {
                b[soff + f.hb_byte as usize] |= f.hb_mask;
            }
            pos = store_scalar(f.store, buf, pos, end, b, soff + f.offset as usize)?;
        } else {
            let (p, vend) = read_len(buf, pos, end)?;
            pos = vend;
            let data = &buf[p..vend];
            check_utf8(f, data, p)?;
            set_present(img.bytes(), soff, msg, f, num, &mut [], 0);
            put_string::<true, _>(img, top, pl, soff + f.offset as usize, data, tag_pos)?;
        }
    }
    Ok(())
}

/// Allocates the array of the `k` elements (`stride` bytes each) of one run of the
/// repeated field whose `{ptr,count}` is at `at`, its count set at once; returns its
/// offset. Gives up (an error) on an empty run (malformed bytes) and when the field
/// already has elements: its values do not follow one another, so the run was not all.
#[inline(always)]
fn new_array<I: Image + ?Sized>(img: &mut I, top: &mut u64, pl: Place, at: usize, k: u32, stride: usize) -> Result<usize, DecodeError> {
    let pw = pl.pw;
    if k == 0 || read_ptr(img.bytes(), at + pw, pw) != 0 {
        return err(RejectKind::Truncated, at);
    }
    let a = *top as usize;
    *top += (k as u64 * stride as u64 + 7) & !7;
    img.grow(*top, pl.limit, at)?;
    let b = img.bytes();
    write_ptr(b, at, pw, pl.base + a as u64);
    write_ptr(b, at + pw, pw, k as u64);
    Ok(a)
}

/// Whether the tag at `p` is the `tl` bytes at `tag_pos`.
#[inline(always)]
fn same_tag(buf: &[u8], p: usize, end: usize, tag_pos: usize, tl: usize) -> bool {
    // Byte compares: a slice compare is a memcmp call.
    match tl {
        1 => p < end && buf[p] == buf[tag_pos],
        2 => end - p >= 2 && buf[p] == buf[tag_pos] && buf[p + 1] == buf[tag_pos + 1],
        _ => end - p >= tl && (0..tl).all(|i| buf[p + i] == buf[tag_pos + i]),
    }
}

/// How many length-delimited values follow one another with the tag at
/// `buf[tag_pos..vstart]` (the first one's length at `vstart`), up to `end`: stops at
/// another tag or a malformed length (where the pass gives up).
#[inline(always)]
fn count_len_run(buf: &[u8], tag_pos: usize, vstart: usize, end: usize) -> u32 {
    let tl = vstart - tag_pos;
    let (mut n, mut p) = (0u32, vstart);
    loop {
        let Ok((len, q)) = read_varint(buf, p, end) else { return n };
        if len > (end - q) as u64 {
            return n;
        }
        n += 1;
        p = q + len as usize;
        if !same_tag(buf, p, end, tag_pos, tl) {
            return n;
        }
        p += tl;
    }
}

/// The same for values of wire type `wtype` (VARINT, FIXED32 or FIXED64).
#[inline(always)]
fn count_scalar_run(buf: &[u8], tag_pos: usize, vstart: usize, end: usize, wtype: u8) -> u32 {
    let tl = vstart - tag_pos;
    let (mut n, mut p) = (0u32, vstart);
    loop {
        p = match wtype {
            wt::VARINT => match read_varint(buf, p, end) {
                Ok((_, q)) => q,
                Err(_) => return n,
            },
            w => {
                let width = if w == wt::FIXED32 { 4 } else { 8 };
                if end - p < width {
                    return n;
                }
                p + width
            }
        };
        n += 1;
        if !same_tag(buf, p, end, tag_pos, tl) {
            return n;
        }
        p += tl;
    }
}

/// The number of bytes without a continuation bit: of varints in a well-formed packed
/// run, eight bytes at a time.
#[inline(always)]
fn count_varint_ends(b: &[u8]) -> u32 {
    let mut chunks = b.chunks_exact(8);
    let mut n = 0;
    for c in &mut chunks {
        n += (!u64::from_le_bytes(c.try_into().unwrap()) & 0x8080_8080_8080_8080).count_ones();
    }
    n + chunks.remainder().iter().filter(|&&x| x < 0x80).count() as u32
}

impl Scratch {
    /// A new instance of message `msg` whose counts are made only when needed; returns
    /// its id.
    #[inline(always)]
    fn uncounted_instance(&mut self, t: &Tables, msg: u32) -> u32 {
        let id = self.inst_counts.len() as u32;
        self.inst_counts.push(UNSCANNED as u32);
        self.push_state(&t.info[msg as usize]);
        id
    }

    /// Makes instance `inst`'s counts from the tag at `from` to the end of its bytes;
    /// returns its first count slot.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn scan_instance(&mut self, schema: &CompiledSchema, t: &Tables, buf: &[u8], from: usize, end: usize, mi: usize, inst: usize) -> usize {
        let cbase = self.counts.len();
        self.counts.resize(cbase + t.info[mi].n_counts as usize, 0);
        self.inst_counts[inst] = cbase as u32;
        scan_counts(schema, t, buf, from, end, mi, &mut self.counts[cbase..]);
        cbase
    }
}

/// Counts, from the tag at `p` to the end of the instance's bytes, what the instance's
/// arrays and unknown buffer will hold, classifying every field exactly as the passes
/// do. Stops quietly at malformed bytes (the pass reports them); an undercount only makes
/// the fast pass give up, never write out of place.
#[inline(never)]
fn scan_counts(schema: &CompiledSchema, t: &Tables, buf: &[u8], mut p: usize, end: usize, mi: usize, counts: &mut [u32]) {
    let msg = &schema.messages[mi];
    let info = &t.info[mi];
    let uslot = info.unknown_slot();
    while p < end {
        // Short tags of fields the scan table covers: one load gives what to do.
        let (mut e, mut q) = (info.scan_by_tag[buf[p] as usize], p + 1);
        if e == 0 {
            if let Some(v) = two_byte_tag(&info.scan_by_tag_long, buf, p, end) {
                (e, q) = (info.scan_by_tag_long[v], p + 2);
            }
        }
        if e != 0 {
            let vend = match e & 3 {
                SCAN_VARINT if e & 12 != SCAN_COUNT_PACKED => match read_varint(buf, q, end) {
                    Ok((_, r)) => r,
                    Err(_) => return,
                },
                SCAN_FIXED64 if e & 12 != SCAN_COUNT_PACKED => q + 8,
                SCAN_FIXED32 if e & 12 != SCAN_COUNT_PACKED => q + 4,
                shape => {
                    // Length-delimited: a string, message or packed run.
                    let Ok((len, r)) = read_varint(buf, q, end) else { return };
                    if len > (end - r) as u64 {
                        return;
                    }
                    let vend = r + len as usize;
                    if e & 12 == SCAN_COUNT_PACKED {
                        let n = match shape {
                            SCAN_VARINT => buf[r..vend].iter().filter(|&&b| b < 0x80).count() as u32,
                            SCAN_FIXED32 if len % 4 == 0 => (len / 4) as u32,
                            SCAN_FIXED64 if len % 8 == 0 => (len / 8) as u32,
                            _ => return,
                        };
                        counts[(e >> 4) as usize] += n;
                        p = vend;
                        continue;
                    }
                    vend
                }
            };
            if vend > end {
                return;
            }
            if e & 12 == SCAN_COUNT_ONE {
                counts[(e >> 4) as usize] += 1;
            }
            p = vend;
            continue;
        }
        let tag_pos = p;
        let Ok((tag, q)) = read_tag(buf, p, end) else { return };
        p = q;
        let (num, wtype) = (tag >> 3, (tag & 7) as u8);
        if num == 0 || wtype > 5 {
            return;
        }
        if wtype == wt::END_GROUP {
            return; // the frame's own end (or malformed: the pass will say)
        }
        let Some((fidx, f)) = lookup(info, msg, num, wtype) else {
            let Some(vend) = skip_quiet(buf, p, end, num, wtype) else { return };
            counts[uslot] += (vend - tag_pos) as u32;
            p = vend;
            continue;
        };
        let slot = info.slot[fidx] as usize;
        let closed = t.closed_values(f);
        if wtype == wt::LEN && f.rep_packable {
            let Ok((len, q)) = read_varint(buf, p, end) else { return };
            if len > (end - q) as u64 {
                return;
            }
            let vend = q + len as usize;
            match f.wire {
                // Not a closed enum: every varint ends in the one byte without a
                // continuation bit, so count those (a malformed run makes the pass give up).
                wt::VARINT if closed.is_none() => counts[slot] += buf[q..vend].iter().filter(|&&b| b < 0x80).count() as u32,
                wt::VARINT => {
                    let mut r = q;
                    while r < vend {
                        let Ok((v, r2)) = read_varint(buf, r, vend) else { return };
                        r = r2;
                        if outside(closed, v) {
                            counts[uslot] += enum_unknown_len(num, v);
                        } else {
                            counts[slot] += 1;
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
        if closed.is_some() && wtype == wt::VARINT {
            let Ok((v, q)) = read_varint(buf, p, end) else { return };
            p = q;
            if outside(closed, v) {
                counts[uslot] += enum_unknown_len(num, v);
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

/// The caller's vector as the fast pass's image: zeroed as it grows (doubling), up to
/// the limit.
impl Image for Vec<u8> {
    #[inline(always)]
    fn bytes(&mut self) -> &mut [u8] {
        self
    }
    #[inline(always)]
    fn grow(&mut self, new_top: u64, limit: u64, at: usize) -> Result<(), DecodeError> {
        if new_top as usize > self.len() {
            if new_top > limit {
                return err(RejectKind::ImageTooLarge, at);
            }
            let want = (new_top as usize).max(self.len() * 2).min(limit as usize);
            self.resize(want, 0);
        }
        Ok(())
    }
}

/// The caller's fixed buffer as the fast pass's image: its zeroed prefix grows (doubling)
/// within the buffer; an image that does not fit gives up.
pub(super) struct Fixed<'a> {
    buf: &'a mut [u8],
    /// `buf[..zeroed]` is addressable and was zeroed.
    zeroed: usize,
}

impl<'a> Fixed<'a> {
    /// Zeroes the first `first` bytes (at most the buffer).
    pub fn new(buf: &'a mut [u8], first: usize) -> Fixed<'a> {
        let zeroed = first.min(buf.len());
        buf[..zeroed].fill(0);
        Fixed { buf, zeroed }
    }
}

impl Image for Fixed<'_> {
    #[inline(always)]
    fn bytes(&mut self) -> &mut [u8] {
        &mut self.buf[..self.zeroed]
    }
    #[inline(always)]
    fn grow(&mut self, new_top: u64, limit: u64, at: usize) -> Result<(), DecodeError> {
        if new_top as usize > self.zeroed {
            if new_top > limit || new_top > self.buf.len() as u64 {
                return err(RejectKind::BufferTooSmall, at);
            }
            let want = (new_top as usize).max(self.zeroed * 2).min(limit as usize).min(self.buf.len());
            self.buf[self.zeroed..want].fill(0);
            self.zeroed = want;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::{DecodeOptions, Decoder};
    use super::fast_pass;
    use crate::protobuf::decode::common::Place;
    use crate::protobuf::wire::put_varint;
    use heapwire_schema::{compile_files, CompiledSchema, LayoutOptions};

    fn schema(file: &str) -> CompiledSchema {
        let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("testdata");
        compile_files(&[dir.join(file)], &[dir], LayoutOptions::default()).unwrap()
    }

    fn tag(m: &mut Vec<u8>, num: u32, wt: u8) {
        put_varint(m, (num as u64) << 3 | wt as u64);
    }

    fn len(m: &mut Vec<u8>, num: u32, body: &[u8]) {
        tag(m, num, 2);
        put_varint(m, body.len() as u64);
        m.extend_from_slice(body);
    }

    /// Whether the fast pass alone decodes `input` (it gives up with an error); its image
    /// must be the reference's, and it must give up on what the reference rejects.
    fn fast_alone(s: &CompiledSchema, ty: &str, input: &[u8]) -> bool {
        let (mi, opts) = (s.message_index(ty).unwrap(), DecodeOptions::default());
        let mut d = Decoder::new(s);
        let mut img = vec![0u8; 64];
        let fast = fast_pass(s, &d.t, &mut d.s, mi as u32, input, &opts, Place::new(s, &opts), &mut img).map(|n| img[..n as usize].to_vec());
        let mut want = Vec::new();
        match d.decode_reference(mi, input, &opts, &mut want) {
            Ok(()) => {
                if let Ok(got) = &fast {
                    assert_eq!(got, &want, "fast pass image differs on {input:02x?}");
                }
            }
            Err(_) => assert!(fast.is_err(), "the fast pass takes {input:02x?}, the reference rejects it"),
        }
        fast.is_ok()
    }

    fn leaf(id: u64, vals: &[u64]) -> Vec<u8> {
        let mut l = Vec::new();
        tag(&mut l, 1, 0);
        put_varint(&mut l, id);
        let mut packed = Vec::new();
        vals.iter().for_each(|&v| put_varint(&mut packed, v));
        len(&mut l, 3, &packed);
        l
    }

    #[test]
    fn runs_of_every_repeated_shape_take_the_fast_pass() {
        // Each repeated field's values one after another, as the official serializers
        // write them: arrays allocated from the run's count, no scan of the instance.
        let s = schema("unit.proto");
        let mut m = Vec::new();
        for i in 0..3 {
            len(&mut m, 19, &leaf(i, &[i, 300 * i, u64::MAX]));
        }
        let mut packed = Vec::new();
        [1u64, 200, 70000, u64::MAX].iter().for_each(|&v| put_varint(&mut packed, v));
        len(&mut m, 20, &packed);
        for t in ["a", "", "héllo"] {
            len(&mut m, 21, t.as_bytes());
        }
        for k in ["x", "y"] {
            let mut e = Vec::new();
            len(&mut e, 1, k.as_bytes());
            len(&mut e, 2, &leaf(7, &[1, 2]));
            len(&mut m, 22, &e);
        }
        for v in [1.5f64, -2.0, 0.0] {
            tag(&mut m, 27, 1);
            m.extend_from_slice(&v.to_le_bytes());
        }
        assert!(fast_alone(&s, "unit.Node", &m));

        // Flat map entries, a run per map; an unpacked run of a packable field.
        let sm = schema("maps.proto");
        let mut m = Vec::new();
        for k in ["a", "b", "c"] {
            let mut e = Vec::new();
            len(&mut e, 1, k.as_bytes());
            len(&mut e, 2, b"value");
            len(&mut m, 1, &e);
        }
        for k in [1u64, 2] {
            let mut e = Vec::new();
            tag(&mut e, 1, 0);
            put_varint(&mut e, k);
            tag(&mut e, 2, 0);
            put_varint(&mut e, 1);
            len(&mut m, 5, &e);
        }
        assert!(fast_alone(&sm, "maps.Maps", &m));
        let mut m = Vec::new();
        for v in [5u64, 1 << 40, 0] {
            tag(&mut m, 20, 0);
            put_varint(&mut m, v);
        }
        assert!(fast_alone(&s, "unit.Node", &m));
    }

    #[test]
    fn images_that_outgrow_the_learned_estimate_are_the_reference() {
        // One decoder, messages of one type whose images expand their input from about
        // 1x (one long string) to 8x (1-byte varints into 8-byte int64s): the first
        // estimate learnt from the last is too small, and the image grows.
        let sm = schema("maps.proto");
        let mi = sm.message_index("maps.Maps").unwrap();
        let mut d = Decoder::new(&sm);
        let opts = DecodeOptions::default();
        let mut inputs = Vec::new();
        for n in [4000usize, 10, 3000, 70, 1] {
            let mut string = Vec::new();
            let mut e = Vec::new();
            len(&mut e, 2, &vec![b'x'; n]);
            len(&mut string, 1, &e);
            inputs.push(string);
            let mut reals = Vec::new();
            for k in 0..n as u64 {
                let mut e = Vec::new();
                tag(&mut e, 1, 0);
                put_varint(&mut e, k % 64);
                len(&mut reals, 3, &e);
            }
            inputs.push(reals);
        }
        for input in &inputs {
            let (mut got, mut want) = (vec![0xEE; 5], Vec::new());
            d.decode(mi, input, &opts, &mut got).unwrap();
            Decoder::new(&sm).decode_reference(mi, input, &opts, &mut want).unwrap();
            assert_eq!(got, want);
            let mut buf = vec![0xA5u8; want.len() + 100];
            assert_eq!(d.decode_into(mi, input, &opts, &mut buf), Ok(want.len()));
            assert_eq!(buf[..want.len()], want[..]);
        }
    }

    #[test]
    fn values_of_one_field_apart_make_the_fast_pass_give_up() {
        // A second run of a field whose array is allocated: the two passes decode it
        // (the same image, checked by `fast_alone` and the proptests).
        let s = schema("unit.proto");
        type Field = dyn Fn(&mut Vec<u8>);
        let apart: [&Field; 4] = [
            &|m| len(m, 19, &leaf(1, &[])),
            &|m| len(m, 20, &[1, 2]),
            &|m| len(m, 21, b"s"),
            &|m| {
                tag(m, 27, 1);
                m.extend_from_slice(&1f64.to_le_bytes())
            },
        ];
        for (i, field) in apart.iter().enumerate() {
            let mut m = Vec::new();
            field(&mut m);
            tag(&mut m, 1, 0);
            put_varint(&mut m, 9);
            field(&mut m);
            assert!(!fast_alone(&s, "unit.Node", &m), "shape {i}");
            let mut out = Vec::new();
            Decoder::new(&s).decode(s.message_index("unit.Node").unwrap(), &m, &DecodeOptions::default(), &mut out).unwrap();
        }
        // An empty packed run allocates nothing: the next run is the first.
        let mut m = Vec::new();
        len(&mut m, 20, &[]);
        len(&mut m, 20, &[3, 4]);
        assert!(fast_alone(&s, "unit.Node", &m));
        // Packed runs whose varints do not all end inside: rejected, as the reference.
        let d = &mut Decoder::new(&s);
        for run in [&[0x80u8][..], &[0x80, 0x80], &[1, 0x80], &[0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80]] {
            let mut m = Vec::new();
            len(&mut m, 20, run);
            assert!(!fast_alone(&s, "unit.Node", &m), "{run:02x?}");
            assert!(d.decode(s.message_index("unit.Node").unwrap(), &m, &DecodeOptions::default(), &mut Vec::new()).is_err(), "{run:02x?}");
        }
    }
}

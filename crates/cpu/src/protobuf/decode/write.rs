//! The write pass: after the pre-pass, allocates in wire order with the bump allocator
//! (arrays and unknown buffers at their first element, sized by the pre-pass's counts)
//! and fills the image. The pre-pass has validated the input; this pass re-creates its
//! instances in the same order, merges repeated occurrences of a singular sub-message
//! into the first, and copies the map entries the pre-pass dropped to the unknown fields.

use heapwire_engine::RejectKind;
use heapwire_schema::{wire_type as wt, CompiledSchema, Kind, Presence, NONE};

use super::common::{
    append_enum_unknown, append_unknown, convert, err, new_struct, next_element, outside, put_scalar, put_string, next_tag,
    read_len, read_ptr, read_scalar, set_oneof_case, set_present, write_header, Next, Place, Scalars,
};
use super::tables::{Frame, Tables, Undo, Run};
use super::{DecodeError, DecodeOptions, Scratch};

/// Runs the write pass over `buf` as message `root` into `img` (zeroed, of the size the
/// pre-pass gave); returns the image size.
#[allow(clippy::too_many_arguments)]
pub(super) fn write_pass(schema: &CompiledSchema, t: &Tables, s: &mut Scratch, root: u32, buf: &[u8], opts: &DecodeOptions, img: &mut [u8]) -> Result<u64, DecodeError> {
    let pl = Place::new(schema, opts);
    let max_depth = opts.max_depth as usize;
    s.frames.clear();
    // Instance ids and dropped map entries, in the pre-pass's order.
    let mut next_inst = 0u32;
    let mut next_drop = 0usize;
    // The bump allocator.
    let mut top: u64 = t.info[root as usize].size8 as u64;
    let root_id = s.reused_instance(t, root, &mut next_inst);
    write_header(schema, opts, img, 0, root);
    s.frames.push(Frame { msg: root, inst: root_id, off: 0, end: buf.len(), group: 0, start: 0, undo: Undo::default(), run: Run::default() });
    let mut pos = 0usize;

    'frames: loop {
        let fr = s.frames.last().unwrap();
        let (mi, soff, end, group) = (fr.msg as usize, fr.off as usize, fr.end, fr.group);
        let msg = &schema.messages[mi];
        let info = &t.info[mi];
        let cbase = s.inst_counts[fr.inst as usize] as usize;
        let sbase = s.inst_state[fr.inst as usize] as usize;
        let cases = sbase + info.oneof_state as usize;
        let unknown_at = soff + msg.unknown_offset as usize;
        let unknown_total = s.counts[cbase + info.unknown_slot()];
        loop {
            if pos >= end {
                if group != 0 {
                    return err(RejectKind::Truncated, pos);
                }
                s.frames.pop();
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
                    append_unknown(img, &mut top, pl, unknown_at, unknown_total, &buf[tag_pos..vend])?;
                    pos = vend;
                    continue;
                }
            };
            if f.simple && wtype != wt::LEN {
                // The common case, tested before the dispatch on the kind: one value of a
                // singular scalar (not a closed enum).
                let (raw, q) = read_scalar(buf, pos, end, wtype)?;
                pos = q;
                set_present(img, soff, msg, f, num, &mut s.state, cases);
                put_scalar(img, soff + f.offset as usize, f.size as usize, convert(f.kind, raw));
                continue;
            }
            let fslot = info.slot[fidx] as usize;

            match f.kind {
                Kind::Message | Kind::Group => {
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
                    if f.is_map() && s.dropped.get(next_drop) == Some(&tag_pos) {
                        next_drop += 1;
                        append_unknown(img, &mut top, pl, unknown_at, unknown_total, &buf[tag_pos..cend])?;
                        pos = cend;
                        continue;
                    }
                    let sub = f.sub;
                    let (child, coff);
                    if f.is_repeated() {
                        coff = next_element(img, &mut top, pl, soff + f.offset as usize, s.counts[cbase + fslot], schema.messages[sub as usize].size as usize)?;
                        write_header(schema, opts, img, coff, sub);
                        child = s.reused_instance(t, sub, &mut next_inst);
                    } else {
                        let sslot = sbase + fslot;
                        let mut existing = s.state[sslot];
                        if let Presence::Oneof(o) = f.presence {
                            let cs = cases + o as usize;
                            if s.state[cs] != num {
                                existing = NONE;
                                s.state[cs] = num;
                                set_oneof_case(img, soff, &msg.oneofs[o as usize], num);
                            }
                        }
                        if existing != NONE {
                            // A merge: the first occurrence's instance and struct go on.
                            child = existing;
                            coff = (read_ptr(img, soff + f.offset as usize, pl.pw) - pl.base) as usize;
                        } else {
                            coff = new_struct(schema, opts, img, &mut top, pl, soff + f.offset as usize, sub, t.info[sub as usize].size8, tag_pos)?;
                            child = s.reused_instance(t, sub, &mut next_inst);
                            s.state[sslot] = child;
                        }
                    }
                    s.frames.push(Frame { msg: sub, inst: child, off: coff as u32, end: cend, group: cgroup, start: tag_pos, undo: Undo::default(), run: Run::default() });
                    continue 'frames;
                }
                Kind::String | Kind::Bytes => {
                    let (p, vend) = read_len(buf, pos, end)?;
                    pos = vend;
                    let at = if f.is_repeated() {
                        next_element(img, &mut top, pl, soff + f.offset as usize, s.counts[cbase + fslot], 2 * pl.pw)?
                    } else {
                        set_present(img, soff, msg, f, num, &mut s.state, cases);
                        soff + f.offset as usize
                    };
                    put_string::<false, _>(img, &mut top, pl, at, &buf[p..vend], tag_pos)?;
                }
                _ if !f.is_repeated() => {
                    // A singular closed enum (every other singular scalar took the simple
                    // path): a value outside the enum goes to the unknown fields.
                    let (raw, q) = read_scalar(buf, pos, end, wtype)?;
                    pos = q;
                    if outside(t.closed_values(f), raw) {
                        append_enum_unknown(img, &mut top, pl, unknown_at, unknown_total, num, raw)?;
                    } else {
                        set_present(img, soff, msg, f, num, &mut s.state, cases);
                        put_scalar(img, soff + f.offset as usize, f.size as usize, convert(f.kind, raw));
                    }
                }
                _ => {
                    // Repeated scalars: one value, or a packed run. Closed-enum values
                    // outside the enum go to the unknown fields, re-encoded.
                    let closed = t.closed_values(f);
                    let (at, size) = (soff + f.offset as usize, f.size as usize);
                    let total = s.counts[cbase + fslot];
                    let mut values = Scalars::new(buf, pos, end, wtype, f)?;
                    while let Some(raw) = values.next(buf)? {
                        if outside(closed, raw) {
                            append_enum_unknown(img, &mut top, pl, unknown_at, unknown_total, num, raw)?;
                        } else {
                            let e = next_element(img, &mut top, pl, at, total, size)?;
                            put_scalar(img, e, size, convert(f.kind, raw));
                        }
                    }
                    pos = values.pos();
                }
            }
        }
    }
    Ok(top)
}

impl Scratch {
    /// The next instance in the pre-pass's numbering, its state slots reset (merges are
    /// tracked anew); returns its id.
    #[inline]
    fn reused_instance(&mut self, t: &Tables, msg: u32, next: &mut u32) -> u32 {
        let id = *next;
        *next += 1;
        self.reset_state(&t.info[msg as usize], id);
        id
    }
}

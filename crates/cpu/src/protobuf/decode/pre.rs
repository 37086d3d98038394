//! The pre-pass: validates the whole input, numbers message instances in creation order,
//! counts each instance's repeated elements and unknown bytes, tracks singular
//! sub-message instances and oneof cases (they decide merges), and sums the image size
//! exactly. Writes nothing; after it the write pass cannot fail.

use heapwire_engine::RejectKind;
use heapwire_schema::{wire_type as wt, CompiledSchema, Kind, Presence, NONE};

use super::common::{align8, check_utf8, enum_unknown_len, err, lookup, outside, read_field_tag, read_len, Scalars};
use super::tables::{Frame, Tables, Undo, Run};
use super::{DecodeError, DecodeOptions, Scratch};

/// Runs the pre-pass over `buf` as message `root`; returns the image size.
pub(super) fn pre_pass(schema: &CompiledSchema, t: &Tables, s: &mut Scratch, root: u32, buf: &[u8], opts: &DecodeOptions) -> Result<u64, DecodeError> {
    let limit = opts.max_image_bytes.min(u32::MAX as u64);
    let max_depth = opts.max_depth as usize;
    s.clear();
    // The running image size: structs and strings as they come, arrays and unknown
    // buffers at the end (when their counts are known).
    let mut top: u64 = t.info[root as usize].size8 as u64;
    let root_id = s.counted_instance(t, root);
    s.frames.push(Frame { msg: root, inst: root_id, off: 0, end: buf.len(), group: 0, start: 0, undo: Undo::default(), run: Run::default() });
    let mut pos = 0usize;

    'frames: loop {
        let fr = s.frames.last().unwrap();
        let (mi, end, group) = (fr.msg as usize, fr.end, fr.group);
        let msg = &schema.messages[mi];
        let info = &t.info[mi];
        let cbase = s.inst_counts[fr.inst as usize] as usize;
        let sbase = s.inst_state[fr.inst as usize] as usize;
        let uslot = cbase + info.unknown_slot();
        let cases = sbase + info.oneof_state as usize;
        loop {
            if pos >= end {
                if group != 0 {
                    return err(RejectKind::Truncated, pos);
                }
                let done = s.frames.pop().unwrap();
                if msg.is_map_entry() && s.counts[uslot] > 0 && !s.frames.is_empty() {
                    s.drop_map_entry(t, &done, &mut top);
                }
                if s.frames.is_empty() {
                    break 'frames;
                }
                continue 'frames;
            }
            let tag_pos = pos;
            let (num, wtype, p) = read_field_tag(buf, pos, end)?;
            pos = p;
            if wtype == wt::END_GROUP {
                if group == num {
                    s.frames.pop();
                    continue 'frames;
                }
                return err(RejectKind::GroupMismatch, tag_pos);
            }
            let Some((fidx, f)) = lookup(info, msg, num, wtype) else {
                let vend = s.skip_value(buf, pos, end, num, wtype, max_depth)?;
                s.counts[uslot] += (vend - tag_pos) as u32;
                pos = vend;
                continue;
            };
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
                    let undo = if f.is_map() {
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
                    let child;
                    if f.is_repeated() {
                        // Its struct is an array element, sized at the end.
                        s.counts[cbase + fslot] += 1;
                        child = s.counted_instance(t, f.sub);
                    } else {
                        let sslot = sbase + fslot;
                        let mut existing = s.state[sslot];
                        if let Presence::Oneof(o) = f.presence {
                            let cs = cases + o as usize;
                            if s.state[cs] != num {
                                existing = NONE;
                                s.state[cs] = num;
                            }
                        }
                        if existing != NONE {
                            child = existing; // a merge: the instance goes on
                        } else {
                            top += t.info[f.sub as usize].size8 as u64;
                            child = s.counted_instance(t, f.sub);
                            s.state[sslot] = child;
                        }
                    }
                    if top > limit {
                        return err(RejectKind::ImageTooLarge, tag_pos);
                    }
                    s.frames.push(Frame { msg: f.sub, inst: child, off: 0, end: cend, group: cgroup, start: tag_pos, undo, run: Run::default() });
                    continue 'frames;
                }
                Kind::String | Kind::Bytes => {
                    let (p, vend) = read_len(buf, pos, end)?;
                    pos = vend;
                    check_utf8(f, &buf[p..vend], p)?;
                    top += align8((vend - p) as u32) as u64;
                    if f.is_repeated() {
                        s.counts[cbase + fslot] += 1;
                    } else if let Presence::Oneof(o) = f.presence {
                        // The pre-pass tracks oneof cases too: they decide merges.
                        s.state[cases + o as usize] = num;
                    }
                    if top > limit {
                        return err(RejectKind::ImageTooLarge, tag_pos);
                    }
                }
                _ => {
                    // Scalars: one value, or a packed run. Closed-enum values outside
                    // the enum go to the unknown fields, re-encoded.
                    let closed = t.closed_values(f);
                    let (mut known, mut unknown) = (0u32, 0u32);
                    let mut values = Scalars::new(buf, pos, end, wtype, f)?;
                    while let Some(raw) = values.next(buf)? {
                        if outside(closed, raw) {
                            unknown += enum_unknown_len(num, raw);
                        } else {
                            known += 1;
                        }
                    }
                    pos = values.pos();
                    if f.is_repeated() {
                        s.counts[cbase + fslot] += known;
                    } else if known > 0 {
                        if let Presence::Oneof(o) = f.presence {
                            s.state[cases + o as usize] = num;
                        }
                    }
                    s.counts[uslot] += unknown;
                }
            }
        }
    }
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
    Ok(top)
}

impl Scratch {
    /// A new instance of message `msg` with zeroed counts; returns its id.
    #[inline]
    fn counted_instance(&mut self, t: &Tables, msg: u32) -> u32 {
        let info = &t.info[msg as usize];
        let id = self.inst_counts.len() as u32;
        self.inst_msg.push(msg);
        self.inst_counts.push(self.counts.len() as u32);
        self.counts.extend(std::iter::repeat_n(0, info.n_counts as usize));
        self.push_state(info);
        id
    }

    /// A map entry with unknown fields is not a map entry: like upb, keep it whole (tag
    /// to end) among the parent's unknown fields instead. Rolls back what the entry
    /// counted and records it for the write pass.
    #[cold]
    fn drop_map_entry(&mut self, t: &Tables, done: &Frame, top: &mut u64) {
        let u = done.undo;
        self.inst_msg.truncate(u.insts as usize);
        self.inst_counts.truncate(u.insts as usize);
        self.inst_state.truncate(u.insts as usize);
        self.counts.truncate(u.counts as usize);
        self.state.truncate(u.state as usize);
        *top = u.top;
        self.counts[u.parent_count_slot as usize] -= 1;
        let parent = self.frames.last().unwrap();
        let pu = self.inst_counts[parent.inst as usize] as usize + t.info[parent.msg as usize].unknown_slot();
        self.counts[pu] += (done.end - done.start) as u32;
        // Entries dropped inside this one are copied with it, not on their own: they are
        // the list's tail (they ended before it), so forget them.
        while self.dropped.last().is_some_and(|&d| d > done.start) {
            self.dropped.pop();
        }
        self.dropped.push(done.start);
    }
}

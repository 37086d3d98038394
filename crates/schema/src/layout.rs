//! Struct layout rules (documented in `docs/image-layout.md`).
//!
//! C ABI natural alignment; fields in field-number order; a oneof is placed where its
//! lowest-numbered member would be, as a `u32` case word followed by a union.

use crate::model::*;

pub(crate) fn align_up(v: u32, a: u32) -> u32 {
    (v + a - 1) & !(a - 1)
}

/// (size, alignment) of a field's slot in its struct.
pub fn slot_size_align(kind: Kind, repeated: bool, pw: u32) -> (u32, u32) {
    if repeated || kind.is_string_like() {
        (2 * pw, pw)
    } else if kind.is_message() {
        (pw, pw)
    } else {
        let s = kind.scalar_size().expect("scalar");
        (s, s)
    }
}

/// Assigns offsets to `msg`'s fields, oneofs, presence words and unknown-field range,
/// and sets `size`/`align`. `fields` must be sorted by number and have `presence` set.
pub fn lay_out(msg: &mut Message, oneof_count: usize, layout: LayoutOptions) {
    let pw = layout.pointer_width.bytes();
    let mut off = 0u32;
    let mut max_align = pw;
    if layout.header_words {
        off = pw;
    }
    msg.hasbit_count = msg.fields.iter().filter(|f| matches!(f.presence, Presence::HasBit(_))).count() as u32;
    off = align_up(off, 4);
    msg.hasbits_offset = off;
    off += 4 * msg.hasbit_count.div_ceil(32);

    // Union size/alignment per oneof, from all of its members.
    let mut union: Vec<(u32, u32)> = vec![(0, 1); oneof_count];
    for f in &msg.fields {
        if let Presence::Oneof(i) = f.presence {
            let (s, a) = slot_size_align(f.kind, false, pw);
            let u = &mut union[i as usize];
            u.0 = u.0.max(s);
            u.1 = u.1.max(a);
        }
    }
    msg.oneofs.iter_mut().for_each(|o| o.case_offset = u32::MAX);
    for i in 0..msg.fields.len() {
        let f = &msg.fields[i];
        if let Presence::Oneof(o) = f.presence {
            let o = o as usize;
            if msg.oneofs[o].case_offset == u32::MAX {
                off = align_up(off, 4);
                msg.oneofs[o].case_offset = off;
                off += 4;
                let (s, a) = union[o];
                off = align_up(off, a);
                max_align = max_align.max(a);
                msg.oneofs[o].storage_offset = off;
                msg.oneofs[o].storage_size = s;
                off += s;
            }
            msg.fields[i].offset = msg.oneofs[o].storage_offset;
        } else {
            let (s, a) = slot_size_align(f.kind, f.is_repeated(), pw);
            off = align_up(off, a);
            max_align = max_align.max(a);
            msg.fields[i].offset = off;
            off += s;
        }
    }
    off = align_up(off, pw);
    msg.unknown_offset = off;
    off += 2 * pw;
    msg.align = max_align;
    msg.size = align_up(off, max_align);
}

impl CompiledSchema {
    /// Bytes one element of a repeated field occupies in its array.
    pub fn element_size(&self, f: &Field) -> u32 {
        match f.kind {
            Kind::String | Kind::Bytes => 2 * self.ptr(),
            Kind::Message | Kind::Group => self.messages[f.sub as usize].size,
            k => k.scalar_size().expect("scalar"),
        }
    }
}

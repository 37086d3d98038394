//! Encode: heap image → protobuf wire bytes.
//!
//! Fields go out in field-number order with the official semantics: implicit-presence
//! fields when non-default, explicit-presence fields when set, a oneof member when its
//! case is set, repeated fields packed when the schema says so, map entries as messages
//! with key = 1 and value = 2 (both always written, as the official encoders do); then
//! the message's unknown-field bytes verbatim, so round trips keep them.
//!
//! One pass, no recursion: an explicit stack of frames walks the image. A sub-message's
//! length is not known until its body is written, so each gets a 5-byte placeholder that
//! a final in-place compaction pass replaces with the minimal varint. The image may be
//! untrusted: every read is bounds-checked ([`ImageView`]), nesting is limited
//! ([`EncodeOptions::max_depth`]), and a [`Budget`] of the image's length stops shared or
//! cyclic pointers from multiplying the work.

use super::wire::{enc_zigzag32, enc_zigzag64, put_varint, varint_len};
use heapwire_image::{ArrayRef, Budget, ImageView, ViewError};
use heapwire_schema::{wire_type, CompiledSchema, Field, Kind, Presence};

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EncodeError {
    #[error("bad_image: {0}")]
    Image(#[from] ViewError),
    #[error("too_deep: nesting deeper than {limit} at image offset {offset}")]
    TooDeep { limit: usize, offset: u64 },
    #[error("too_large: message of {len} bytes at image offset {offset} exceeds the wire format's limit")]
    TooLarge { len: u64, offset: u64 },
    #[error("bad_type: no message type with index {0}")]
    BadType(usize),
}

#[derive(Clone, Debug)]
pub struct EncodeOptions {
    /// Deepest nesting of messages (the root is depth 1) before `TooDeep`.
    pub max_depth: usize,
    /// Limit the traversal to the image's length in referenced bytes (see [`Budget`]);
    /// always on for untrusted images.
    pub budget: bool,
}

impl Default for EncodeOptions {
    fn default() -> Self {
        EncodeOptions { max_depth: 200, budget: true }
    }
}

/// Encodes the message of type `msg_index` whose struct is at `root_offset` in `view`,
/// appending its wire bytes to `out`.
pub fn encode(
    schema: &CompiledSchema,
    msg_index: usize,
    view: &ImageView<'_>,
    root_offset: usize,
    out: &mut Vec<u8>,
) -> Result<(), EncodeError> {
    encode_with(schema, msg_index, view, root_offset, out, &EncodeOptions::default())
}

/// Placeholder width for sub-message lengths: 5 bytes cover lengths below 2^35; wire
/// messages are limited to 2 GiB anyway.
const PH: usize = 5;
const NO_PH: usize = usize::MAX;

struct Frame {
    msg: usize,
    off: usize,
    fi: usize,
    ei: usize,
    arr: Option<ArrayRef>,
    /// Output position where the body starts (after the placeholder).
    body_start: usize,
    /// Bytes nested placeholders will give back at compaction.
    savings: usize,
    /// Index into `phs` of this message's length placeholder, or `NO_PH`.
    ph: usize,
    /// End-group tag to write after the body (groups), else 0.
    end_tag: u32,
}

pub fn encode_with(
    schema: &CompiledSchema,
    msg_index: usize,
    view: &ImageView<'_>,
    root_offset: usize,
    out: &mut Vec<u8>,
    opts: &EncodeOptions,
) -> Result<(), EncodeError> {
    let root = schema.messages.get(msg_index).ok_or(EncodeError::BadType(msg_index))?;
    view.check_struct(root, root_offset)?;
    let mut budget = if opts.budget { Budget::for_view(view) } else { Budget::unlimited() };
    budget.charge(root.size as u64, root_offset)?;
    let start = out.len();
    // (position of the placeholder, compacted length); in output (= pre-) order.
    let mut phs: Vec<(usize, u64)> = Vec::new();
    let mut stack: Vec<Frame> = vec![Frame {
        msg: msg_index,
        off: root_offset,
        fi: 0,
        ei: 0,
        arr: None,
        body_start: out.len(),
        savings: 0,
        ph: NO_PH,
        end_tag: 0,
    }];

    'frames: while let Some(top) = stack.last_mut() {
        let m = &schema.messages[top.msg];
        let all_present = m.is_map_entry();
        while top.fi < m.fields.len() {
            let f = &m.fields[top.fi];
            if f.is_repeated() {
                let arr = match top.arr {
                    Some(a) => a,
                    None => {
                        let a = view.repeated(schema, f, top.off)?;
                        budget.charge(a.byte_len() as u64, a.offset)?;
                        top.arr = Some(a);
                        a
                    }
                };
                if f.kind.is_message() {
                    if top.ei < arr.count {
                        let elem = arr.element(top.ei);
                        top.ei += 1;
                        let child = open_child(f, elem, out, &mut phs);
                        push(&mut stack, child, opts, elem)?;
                        continue 'frames;
                    }
                } else {
                    write_repeated_scalars(schema, view, f, arr, out, &mut top.savings, &mut phs, &mut budget)?;
                }
                top.fi += 1;
                top.ei = 0;
                top.arr = None;
                continue;
            }
            top.fi += 1;
            let present = if all_present { true } else { view.has(m, f, top.off)? };
            if !present {
                continue;
            }
            if f.kind.is_message() {
                match view.sub_message(schema, f, top.off)? {
                    Some(sub) => {
                        budget.charge(schema.messages[f.sub as usize].size as u64, sub)?;
                        let child = open_child(f, sub, out, &mut phs);
                        push(&mut stack, child, opts, sub)?;
                        continue 'frames;
                    }
                    None => {
                        // Set (oneof case, map value) but null: an empty message.
                        if f.kind == Kind::Group {
                            put_tag(out, f.number, wire_type::START_GROUP);
                            put_tag(out, f.number, wire_type::END_GROUP);
                        } else {
                            put_tag(out, f.number, wire_type::LEN);
                            out.push(0);
                        }
                    }
                }
                continue;
            }
            let slot = view.slot(f, top.off)?;
            if f.kind.is_string_like() {
                let s = view.slice_at(slot, "string")?;
                budget.charge(s.len() as u64, slot)?;
                put_tag(out, f.number, wire_type::LEN);
                put_varint(out, s.len() as u64);
                out.extend_from_slice(s);
            } else {
                put_tag(out, f.number, f.kind.wire_type());
                put_scalar(view, f.kind, slot, out)?;
            }
        }
        // Fields done: unknown bytes, then close the message.
        let unknown = view.unknown(m, top.off)?;
        budget.charge(unknown.len() as u64, top.off)?;
        out.extend_from_slice(unknown);
        let done = stack.pop().expect("frame");
        if done.end_tag != 0 {
            put_varint(out, done.end_tag as u64);
        }
        let mut give_back = done.savings;
        if done.ph != NO_PH {
            let len = (out.len() - done.body_start - done.savings) as u64;
            if len >= 1 << 31 {
                return Err(EncodeError::TooLarge { len, offset: done.off as u64 });
            }
            phs[done.ph].1 = len;
            give_back += PH - varint_len(len);
        }
        if let Some(parent) = stack.last_mut() {
            parent.savings += give_back;
        }
    }
    compact(out, start, &phs);
    Ok(())
}

fn push(stack: &mut Vec<Frame>, child: Frame, opts: &EncodeOptions, off: usize) -> Result<(), EncodeError> {
    if stack.len() >= opts.max_depth {
        return Err(EncodeError::TooDeep { limit: opts.max_depth, offset: off as u64 });
    }
    stack.push(child);
    Ok(())
}

/// Writes the tag (and the length placeholder) of sub-message field `f` whose struct is
/// at `off`, and returns its frame.
fn open_child(f: &Field, off: usize, out: &mut Vec<u8>, phs: &mut Vec<(usize, u64)>) -> Frame {
    let (ph, end_tag) = if f.kind == Kind::Group {
        put_tag(out, f.number, wire_type::START_GROUP);
        (NO_PH, (f.number << 3) | wire_type::END_GROUP as u32)
    } else {
        put_tag(out, f.number, wire_type::LEN);
        phs.push((out.len(), 0));
        out.extend_from_slice(&[0u8; PH]);
        (phs.len() - 1, 0)
    };
    Frame { msg: f.sub as usize, off, fi: 0, ei: 0, arr: None, body_start: out.len(), savings: 0, ph, end_tag }
}

/// Replaces every 5-byte placeholder after `start` by its minimal varint, moving the
/// bytes in between down; `phs` is in position order.
fn compact(out: &mut Vec<u8>, start: usize, phs: &[(usize, u64)]) {
    if phs.is_empty() {
        return;
    }
    let mut read = phs[0].0;
    let mut write = read;
    let _ = start;
    for (i, &(pos, len)) in phs.iter().enumerate() {
        if i > 0 {
            out.copy_within(read..pos, write);
            write += pos - read;
        }
        let mut v = len;
        while v >= 0x80 {
            out[write] = (v as u8) | 0x80;
            write += 1;
            v >>= 7;
        }
        out[write] = v as u8;
        write += 1;
        read = pos + PH;
    }
    let end = out.len();
    out.copy_within(read..end, write);
    out.truncate(write + (end - read));
}

#[inline]
fn put_tag(out: &mut Vec<u8>, number: u32, wt: u8) {
    put_varint(out, ((number as u64) << 3) | wt as u64);
}

/// Writes the value of a scalar of `kind` stored at image offset `off` (no tag).
#[inline]
fn put_scalar(view: &ImageView<'_>, kind: Kind, off: usize, out: &mut Vec<u8>) -> Result<(), EncodeError> {
    match kind {
        Kind::Double | Kind::Fixed64 | Kind::SFixed64 => out.extend_from_slice(&view.u64_at(off)?.to_le_bytes()),
        Kind::Float | Kind::Fixed32 | Kind::SFixed32 => out.extend_from_slice(&view.u32_at(off)?.to_le_bytes()),
        Kind::Int64 | Kind::UInt64 => put_varint(out, view.u64_at(off)?),
        Kind::Int32 | Kind::Enum => put_varint(out, view.i32_at(off)? as i64 as u64),
        Kind::UInt32 => put_varint(out, view.u32_at(off)? as u64),
        Kind::SInt32 => put_varint(out, enc_zigzag32(view.i32_at(off)?) as u64),
        Kind::SInt64 => put_varint(out, enc_zigzag64(view.i64_at(off)?)),
        Kind::Bool => out.push((view.u8_at(off)? != 0) as u8),
        Kind::String | Kind::Bytes | Kind::Message | Kind::Group => {}
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn write_repeated_scalars(
    _schema: &CompiledSchema,
    view: &ImageView<'_>,
    f: &Field,
    arr: ArrayRef,
    out: &mut Vec<u8>,
    savings: &mut usize,
    phs: &mut Vec<(usize, u64)>,
    budget: &mut Budget,
) -> Result<(), EncodeError> {
    if arr.count == 0 {
        return Ok(());
    }
    if f.kind.is_string_like() {
        for i in 0..arr.count {
            let at = arr.element(i);
            let s = view.slice_at(at, "string element")?;
            budget.charge(s.len() as u64, at)?;
            put_tag(out, f.number, wire_type::LEN);
            put_varint(out, s.len() as u64);
            out.extend_from_slice(s);
        }
    } else if f.is_packed() {
        put_tag(out, f.number, wire_type::LEN);
        let ph = out.len();
        out.extend_from_slice(&[0u8; PH]);
        let body = out.len();
        for i in 0..arr.count {
            put_scalar(view, f.kind, arr.element(i), out)?;
        }
        let len = (out.len() - body) as u64;
        phs.push((ph, len));
        *savings += PH - varint_len(len);
    } else {
        for i in 0..arr.count {
            put_tag(out, f.number, f.kind.wire_type());
            put_scalar(view, f.kind, arr.element(i), out)?;
        }
    }
    debug_assert!(matches!(f.presence, Presence::Implicit));
    Ok(())
}

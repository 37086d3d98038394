//! What the decoder derives from the compiled schema once (`Tables`), and the scratch
//! the passes share between calls (`Scratch`).

use heapwire_schema::{field_flags, wire_type, CompiledSchema, Field, Kind, Message, Presence, NONE};

use super::common::align8;

/// A field as the hot loop needs it: small and flat (the schema's `Field` carries names
/// and defaults the decoder never reads).
#[derive(Clone, Copy)]
pub(super) struct Op {
    pub kind: Kind,
    /// Wire type of one unpacked value.
    pub wire: u8,
    pub flags: u8,
    /// Repeated and packable: a LEN wire type is a packed run.
    pub rep_packable: bool,
    /// Scalar size in the image (0 for strings and messages).
    pub size: u8,
    /// A singular scalar that is not a closed enum: one value, stored as is.
    pub simple: bool,
    /// How the fast pass reads and stores a simple field outside a oneof, by kind and
    /// width (`Store::General` for every other field).
    pub store: Store,
    /// A repeated field the fast pass allocates by its run: the values that follow one
    /// another with the same tag (every repeated field but closed enums and groups, whose
    /// counts come from the instance's count scan).
    pub run: bool,
    /// Presence bit as a byte offset in the struct and a mask.
    pub hb_mask: u8,
    pub hb_byte: u32,
    pub presence: Presence,
    pub offset: u32,
    pub sub: u32,
}

impl Op {
    fn from_field(m: &Message, f: &Field) -> Op {
        let simple = !f.is_repeated() && f.kind.scalar_size().is_some() && !f.is_closed_enum();
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
            simple,
            store: if simple && !matches!(f.presence, Presence::Oneof(_)) { Store::of(f.kind) } else { Store::General },
            run: f.is_repeated() && !f.is_closed_enum() && f.kind != Kind::Group,
            hb_mask,
            hb_byte,
            presence: f.presence,
            offset: f.offset,
            sub: f.sub,
        }
    }
    #[inline(always)]
    pub fn is_repeated(&self) -> bool {
        self.flags & field_flags::REPEATED != 0
    }
    #[inline(always)]
    pub fn is_map(&self) -> bool {
        self.flags & field_flags::MAP != 0
    }
    #[inline(always)]
    pub fn validates_utf8(&self) -> bool {
        self.flags & field_flags::VALIDATE_UTF8 != 0
    }
    #[inline(always)]
    pub fn is_closed_enum(&self) -> bool {
        self.flags & field_flags::CLOSED_ENUM != 0
    }
}

/// A simple field's read and store, specialised by kind and width (as upb's fast table
/// entries are): one dispatch instead of one on the wire type, one on the kind and one on
/// the size.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Store {
    General,
    /// int64, uint64: the varint's 8 bytes.
    Varint64,
    /// int32, uint32, open enums: the varint's low 4 bytes.
    Varint32,
    ZigZag32,
    ZigZag64,
    Bool,
    /// fixed32, sfixed32, float: the 4 bytes as they are.
    Fixed32,
    /// fixed64, sfixed64, double.
    Fixed64,
}

impl Store {
    fn of(kind: Kind) -> Store {
        match kind {
            Kind::Int64 | Kind::UInt64 => Store::Varint64,
            Kind::Int32 | Kind::UInt32 | Kind::Enum => Store::Varint32,
            Kind::SInt32 => Store::ZigZag32,
            Kind::SInt64 => Store::ZigZag64,
            Kind::Bool => Store::Bool,
            Kind::Fixed32 | Kind::SFixed32 | Kind::Float => Store::Fixed32,
            Kind::Fixed64 | Kind::SFixed64 | Kind::Double => Store::Fixed64,
            _ => Store::General,
        }
    }
}

/// Per message type, what the decoder derives from the compiled schema once.
pub(super) struct MsgInfo {
    pub ops: Vec<Op>,
    pub size8: u32,
    /// Per field: count slot (repeated) or state slot (singular message); NONE otherwise.
    pub slot: Vec<u32>,
    /// Count slots: one per repeated field, then the unknown-bytes slot.
    pub n_counts: u32,
    /// State slots: one per singular message field (its instance id), then one per oneof
    /// (its case).
    pub n_state: u32,
    /// The first oneof state slot (the number of singular message fields).
    pub oneof_state: u32,
    /// For each count slot, the element size (unknown slot: 1).
    pub count_elem: Vec<u32>,
    /// field number → field index + 1, for small numbers.
    pub dense: Vec<u16>,
    /// A one-byte tag → field index + 1, for the tags `lookup` maps to a field (fields
    /// 1-15 with their own wire type, or LEN for packable repeated ones); 0 for every
    /// other byte. One load replaces the tag read, its checks and the lookup.
    pub by_tag: Box<[u16; 256]>,
    /// The same for two-byte tags, by the tag's value, up to the highest field number
    /// below `TAG_TABLE_FIELDS` (at least 128 entries): larger tags take the general way.
    pub by_tag_long: Box<[u16]>,
    /// A one-byte tag → what the count scan does with its field (`scan_step`); 0 for
    /// every byte `by_tag` leaves out and for fields the scan reads the general way
    /// (closed enums, groups).
    pub scan_by_tag: Box<[u32; 256]>,
    /// The same for two-byte tags, by value, as long as `by_tag_long`.
    pub scan_by_tag_long: Box<[u32]>,
    /// A map entry whose key and value are both singular scalars (not closed enums),
    /// strings or bytes: the fast pass fills it in place, without a frame or an instance.
    pub flat_entry: bool,
}

impl MsgInfo {
    /// The unknown-bytes count slot, relative to an instance's first count.
    #[inline(always)]
    pub fn unknown_slot(&self) -> usize {
        self.n_counts as usize - 1
    }
}

const DENSE_LIMIT: u32 = 1024;

/// Fields below this number get entries in the tag tables (at most 4096 entries of a
/// message's tables: 24 KiB).
const TAG_TABLE_FIELDS: u32 = 512;

/// What the decoder derives from the compiled schema once.
pub(super) struct Tables {
    pub info: Vec<MsgInfo>,
    /// Sorted value lists of closed enums (empty for open ones).
    pub closed: Vec<Vec<i32>>,
}

impl Tables {
    pub fn new(schema: &CompiledSchema) -> Tables {
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
                let max_tabled = m.fields.iter().map(|f| f.number).filter(|&n| n < TAG_TABLE_FIELDS).max().unwrap_or(0);
                let mut by_tag_long = vec![0u16; ((max_tabled as usize + 1) << 3).max(128)].into_boxed_slice();
                for (i, f) in m.fields.iter().enumerate() {
                    if f.number < DENSE_LIMIT {
                        dense[f.number as usize] = (i + 1) as u16;
                    }
                    if f.number < TAG_TABLE_FIELDS {
                        by_tag_long[(f.number << 3 | f.kind.wire_type() as u32) as usize] = (i + 1) as u16;
                        if f.is_repeated() && f.kind.is_packable() {
                            by_tag_long[(f.number << 3 | wire_type::LEN as u32) as usize] = (i + 1) as u16;
                        }
                    }
                }
                let mut by_tag = Box::new([0u16; 256]);
                by_tag[..128].copy_from_slice(&by_tag_long[..128]);
                let ops: Vec<Op> = m.fields.iter().map(|f| Op::from_field(m, f)).collect();
                let scan_by_tag_long: Box<[u32]> = by_tag_long
                    .iter()
                    .enumerate()
                    .map(|(tag, &e)| if e == 0 { 0 } else { scan_step(&ops[e as usize - 1], (tag & 7) as u8, slot[e as usize - 1]) })
                    .collect();
                let mut scan_by_tag = Box::new([0u32; 256]);
                scan_by_tag[..128].copy_from_slice(&scan_by_tag_long[..128]);
                let flat_entry = m.is_map_entry()
                    && ops.iter().all(|o| !o.is_repeated() && !matches!(o.presence, Presence::Oneof(_)) && (o.simple || matches!(o.kind, Kind::String | Kind::Bytes)));
                MsgInfo {
                    ops,
                    size8: align8(m.size),
                    slot,
                    n_counts: nc + 1,
                    n_state: ns + m.oneofs.len() as u32,
                    oneof_state: ns,
                    count_elem,
                    dense,
                    by_tag,
                    by_tag_long,
                    scan_by_tag,
                    scan_by_tag_long,
                    flat_entry,
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
        Tables { info, closed }
    }

    /// The sorted values of `f`'s enum if it is closed (values outside go to the unknown
    /// fields).
    #[inline(always)]
    pub fn closed_values(&self, f: &Op) -> Option<&[i32]> {
        if f.is_closed_enum() {
            Some(&self.closed[f.sub as usize])
        } else {
            None
        }
    }
}

/// What the count scan does with one value of a field, packed in a `u32`: the value's
/// shape in bits 0-1 (`SCAN_VARINT`, `SCAN_FIXED64`, `SCAN_LEN`, `SCAN_FIXED32`; for a
/// packed run, the shape of its elements), the action in bits 2-3 (`SCAN_SKIP`,
/// `SCAN_COUNT_ONE`, `SCAN_COUNT_PACKED`; 0: read the general way) and the field's
/// count slot from bit 4.
pub(super) const SCAN_VARINT: u32 = 0;
pub(super) const SCAN_FIXED64: u32 = 1;
pub(super) const SCAN_LEN: u32 = 2;
pub(super) const SCAN_FIXED32: u32 = 3;
pub(super) const SCAN_SKIP: u32 = 1 << 2;
pub(super) const SCAN_COUNT_ONE: u32 = 2 << 2;
pub(super) const SCAN_COUNT_PACKED: u32 = 3 << 2;

/// The count scan's step for a value of wire type `wtype` of field `f` (count slot
/// `slot` if repeated): as the general reading in `scan_counts` classifies it.
fn scan_step(f: &Op, wtype: u8, slot: u32) -> u32 {
    let shape = |w: u8| match w {
        wire_type::VARINT => Some(SCAN_VARINT),
        wire_type::FIXED64 => Some(SCAN_FIXED64),
        wire_type::LEN => Some(SCAN_LEN),
        wire_type::FIXED32 => Some(SCAN_FIXED32),
        _ => None,
    };
    if f.is_closed_enum() {
        return 0; // a value outside the enum counts as unknown bytes
    }
    let step = if wtype == wire_type::LEN && f.rep_packable {
        shape(f.wire).map(|s| s | SCAN_COUNT_PACKED)
    } else if f.is_repeated() {
        shape(wtype).map(|s| s | SCAN_COUNT_ONE)
    } else {
        shape(wtype).map(|s| s | SCAN_SKIP)
    };
    match step {
        Some(st) if slot <= u32::MAX >> 4 || !f.is_repeated() => st | if f.is_repeated() { slot << 4 } else { 0 },
        _ => 0,
    }
}

/// One open message: the frame stack replaces recursion.
pub(super) struct Frame {
    pub msg: u32,
    pub inst: u32,
    /// Struct offset in the image (write and fast passes).
    pub off: u32,
    /// Where this message's bytes end (for groups: the parent's end).
    pub end: usize,
    /// Group field number, or 0 for a length-delimited message.
    pub group: u32,
    /// Where the field's tag starts (a map entry the pre-pass drops is copied from here).
    pub start: usize,
    /// Map entries (pre-pass): what to roll back to if the entry turns out to hold
    /// unknown fields.
    pub undo: Undo,
    /// Fast pass: the run of repeated sub-messages this message is filling (kept here
    /// while one of them is open).
    pub run: Run,
}

/// The fast pass's open run of repeated sub-messages: the array was allocated for all of
/// them at the first; the rest go to `next`, `next + stride`, ... Image offsets.
#[derive(Clone, Copy, Default)]
pub(super) struct Run {
    /// The repeated field's `{ptr,count}` in the image.
    pub at: u32,
    /// Where the next element's struct goes.
    pub next: u32,
    /// Elements still to come.
    pub left: u32,
}

/// Pre-pass state before a map entry, restored when upb's rule sends the whole entry
/// to the parent's unknown fields.
#[derive(Clone, Copy, Default)]
pub(super) struct Undo {
    pub insts: u32,
    pub counts: u32,
    pub state: u32,
    pub top: u64,
    pub parent_count_slot: u32,
}

/// Per-decode scratch, kept between calls. Instances are numbered in creation order;
/// the pre-pass and the write pass create the same instances in the same order.
#[derive(Default)]
pub(super) struct Scratch {
    /// Count slots of every instance (`MsgInfo::n_counts` each).
    pub counts: Vec<u32>,
    /// State slots of every instance (`MsgInfo::n_state` each).
    pub state: Vec<u32>,
    /// Per instance (pre-pass): its message type.
    pub inst_msg: Vec<u32>,
    /// Per instance: its first count slot (fast pass: `UNSCANNED` until needed).
    pub inst_counts: Vec<u32>,
    /// Per instance: its first state slot.
    pub inst_state: Vec<u32>,
    pub frames: Vec<Frame>,
    /// Open unknown groups while one is skipped.
    pub groups: Vec<u32>,
    /// Tag offsets of map entries the pre-pass sent to the unknown fields, in order.
    pub dropped: Vec<usize>,
}

impl Scratch {
    /// Forgets the last decode's instances (pre-pass).
    pub fn clear(&mut self) {
        self.dropped.clear();
        self.inst_msg.clear();
        self.clear_fast();
    }

    /// Forgets the last decode's instances: what the fast pass uses.
    #[inline(always)]
    pub fn clear_fast(&mut self) {
        self.counts.clear();
        self.state.clear();
        self.inst_counts.clear();
        self.inst_state.clear();
        self.frames.clear();
    }

    /// Appends a new instance's state slots: no sub-message instance yet, no oneof case.
    #[inline(always)]
    pub fn push_state(&mut self, info: &MsgInfo) {
        self.inst_state.push(self.state.len() as u32);
        // Most sub-messages have no singular message field and no oneof.
        if info.n_state != 0 {
            self.state.extend(std::iter::repeat_n(NONE, info.oneof_state as usize));
            self.state.extend(std::iter::repeat_n(0, (info.n_state - info.oneof_state) as usize));
        }
    }

    /// Resets instance `id`'s state slots (the write pass reuses the pre-pass's).
    #[inline]
    pub fn reset_state(&mut self, info: &MsgInfo, id: u32) {
        let s = self.inst_state[id as usize] as usize;
        let n_msg = info.oneof_state as usize;
        self.state[s..s + n_msg].fill(NONE);
        self.state[s + n_msg..s + info.n_state as usize].fill(0);
    }
}

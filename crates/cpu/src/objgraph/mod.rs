//! Object graphs: the MSR paper's wire format (`docs/objgraph-wire.md`).
//!
//! * [`ObjDecoder`]: wire bytes → heap image of C++-style objects at a chosen base
//!   (phase 1 allocates every object contiguously in wire order, phase 2 writes header
//!   words, members and relocated references); the fast path, proven identical to
//! * [`reference::ReferenceDecoder`]: the same written out literally.
//! * [`encode`]: objects in memory (an image, or live objects of this process) → wire
//!   bytes, two passes in prefix order with an object → id map, so shared objects and
//!   cycles survive.
//!
//! Its JSON form lives in `heapwire-json`, its C++ header in `heapwire-emit`.
//!
//! Nothing here recurses: graphs are flat lists and traversals use explicit stacks.

mod decode;
#[cfg(test)]
mod decode_tests;
pub mod encode;
pub mod reference;

use heapwire_engine::RejectKind;
use heapwire_schema::{CompiledSchema, Kind, NONE};

pub use decode::ObjDecoder;
pub use encode::{encode, ImageMemory, Memory, RawMemory};

/// Reference value on the wire meaning null.
pub const NULL_REF: u32 = u32::MAX;

/// A rejected input (or object structure): what and where. For decoding, `offset` is
/// a byte offset in the wire input; for encoding, the address of the offending object
/// or member. `needed` is the image size for `BufferTooSmall`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ObjError {
    pub kind: RejectKind,
    pub offset: u64,
    pub needed: u64,
}

impl std::fmt::Display for ObjError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} at byte {}", self.kind.name(), self.offset)
    }
}

impl std::error::Error for ObjError {}

pub(crate) fn oerr<T>(kind: RejectKind, offset: u64) -> Result<T, ObjError> {
    Err(ObjError { kind, offset, needed: 0 })
}

#[inline(always)]
pub(crate) fn rd32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap())
}

/// The checks before the type ids: an aligned base, the count, and a count the input can
/// hold (every object costs at least its 4-byte type id, so memory stays bounded by the
/// input). Returns the count.
pub(crate) fn object_count(input: &[u8], opts: &heapwire_engine::Options) -> Result<usize, ObjError> {
    if opts.base % 8 != 0 {
        return oerr(RejectKind::BadBase, 0);
    }
    if input.len() < 4 {
        return oerr(RejectKind::Truncated, 0);
    }
    let n = rd32(input, 0) as usize;
    if n > (input.len() - 4) / 4 {
        return oerr(RejectKind::CountTooLarge, 0);
    }
    Ok(n)
}

/// An image of `total` bytes at `base` must fit the address space of `ptr`-byte pointers.
pub(crate) fn check_image_range(ptr: u32, base: u64, total: u64) -> Result<(), ObjError> {
    let limit = if ptr == 4 { 1u64 << 32 } else { u64::MAX };
    if base.checked_add(total).is_none_or(|e| e > limit) {
        return oerr(RejectKind::BadBase, 0);
    }
    Ok(())
}

/// How a member is read and written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Conv {
    /// Reference to an object of class index `target` or a subclass.
    Ref(u32),
    Signed,
    Unsigned,
    Bool,
    /// Floats: bits copied.
    Bits,
}

#[derive(Clone, Copy, Debug)]
pub struct Op {
    pub offset: u32,
    pub size: u8,
    /// 0 = not on the wire.
    pub wire: u8,
    pub conv: Conv,
}

#[derive(Clone, Debug)]
pub struct ClassT {
    pub msg: u32,
    pub type_id: u32,
    pub size: u32,
    pub align: u32,
    /// Bytes of this class's members on the wire.
    pub wire_size: u32,
    /// Every member, memory order (wire order is the same, skipping `wire == 0`).
    pub ops: Vec<Op>,
}

/// What the objgraph engines derive from the compiled schema once.
#[derive(Clone, Debug)]
pub struct Tables {
    pub classes: Vec<ClassT>,
    /// type id → class index, for ids below `DENSE_IDS`.
    dense: Vec<u32>,
    /// Other type ids, sorted (id, class index).
    sparse: Vec<(u32, u32)>,
    /// `sub[c * n + t]`: class c is t or derives from t.
    sub: Vec<bool>,
    pub ptr: u32,
}

const DENSE_IDS: u32 = 4096;

fn conv_of(kind: Kind, sub: u32, schema: &CompiledSchema) -> Conv {
    match kind {
        Kind::Message | Kind::Group => Conv::Ref(schema.class_of(sub as usize).map(|c| c as u32).unwrap_or(NONE)),
        Kind::Bool => Conv::Bool,
        Kind::Float | Kind::Double => Conv::Bits,
        Kind::Int32 | Kind::Int64 | Kind::SInt32 | Kind::SInt64 | Kind::SFixed32 | Kind::SFixed64 | Kind::Enum => Conv::Signed,
        _ => Conv::Unsigned,
    }
}

impl Tables {
    pub fn new(schema: &CompiledSchema) -> Tables {
        let n = schema.classes.len();
        let classes: Vec<ClassT> = schema
            .classes
            .iter()
            .map(|c| {
                let ops: Vec<Op> = c
                    .members
                    .iter()
                    .map(|m| {
                        let f = schema.member_field(m);
                        Op { offset: m.offset, size: m.size as u8, wire: m.wire_width as u8, conv: conv_of(f.kind, f.sub, schema) }
                    })
                    .collect();
                ClassT {
                    msg: c.message,
                    type_id: c.type_id,
                    size: c.size,
                    align: c.align,
                    wire_size: ops.iter().map(|o| o.wire as u32).sum(),
                    ops,
                }
            })
            .collect();
        let mut dense = Vec::new();
        let mut sparse = Vec::new();
        for (ci, c) in classes.iter().enumerate() {
            if c.type_id == NONE {
                continue;
            }
            if c.type_id < DENSE_IDS {
                if dense.len() <= c.type_id as usize {
                    dense.resize(c.type_id as usize + 1, NONE);
                }
                dense[c.type_id as usize] = ci as u32;
            } else {
                sparse.push((c.type_id, ci as u32));
            }
        }
        sparse.sort_unstable();
        let mut sub = vec![false; n * n];
        for c in 0..n {
            for t in 0..n {
                sub[c * n + t] = schema.is_subclass(c, t);
            }
        }
        Tables { classes, dense, sparse, sub, ptr: schema.ptr() }
    }

    #[inline]
    pub fn class_for_type(&self, id: u32) -> Option<u32> {
        if id < DENSE_IDS {
            self.dense.get(id as usize).copied().filter(|&c| c != NONE)
        } else {
            self.sparse.binary_search_by_key(&id, |x| x.0).ok().map(|i| self.sparse[i].1)
        }
    }

    #[inline]
    pub fn is_sub(&self, c: u32, t: u32) -> bool {
        t != NONE && self.sub[c as usize * self.classes.len() + t as usize]
    }
}

/// Sign- or zero-extends `wire` little-endian bytes to a u64.
#[inline(always)]
pub fn extend(bytes: &[u8], conv: Conv) -> u64 {
    let v = match bytes.len() {
        8 => u64::from_le_bytes(bytes.try_into().unwrap()),
        4 => u32::from_le_bytes(bytes.try_into().unwrap()) as u64,
        2 => u16::from_le_bytes(bytes.try_into().unwrap()) as u64,
        _ => bytes[0] as u64,
    };
    let bits = 8 * bytes.len() as u32;
    match conv {
        Conv::Signed if bits < 64 => ((v << (64 - bits)) as i64 >> (64 - bits)) as u64,
        Conv::Bool => (v != 0) as u64,
        _ => v,
    }
}

/// Whether `v` (a member value of `size` bytes in memory) survives a trip through
/// `wire` bytes.
pub fn fits(v: u64, size: u8, wire: u8, conv: Conv) -> bool {
    if wire >= size {
        return conv != Conv::Bool || v <= 1;
    }
    let bits = 8 * wire as u32;
    let mem_bits = 8 * size as u32;
    let v = if mem_bits < 64 { v & ((1u64 << mem_bits) - 1) } else { v };
    match conv {
        Conv::Signed => {
            // Sign-extend from the memory width, then check it is representable in `bits`.
            let sv = ((v << (64 - mem_bits)) as i64) >> (64 - mem_bits);
            sv >= -(1i64 << (bits - 1)) && sv < (1i64 << (bits - 1))
        }
        Conv::Bool => v <= 1,
        _ => v >> bits == 0,
    }
}

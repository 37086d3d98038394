//! Objects in memory → objgraph wire bytes: the paper's Listing 1 (section 3).
//!
//! Pass 1 visits the graph in prefix order from the root (an explicit stack, children
//! pushed in reverse so the order equals the recursive traversal's), giving each
//! object the next id in an address → id map; an object already in the map is not
//! visited again. Pass 2 writes the count, the type ids, then every object's members:
//! primitives at their wire width, references as the target's id (null: `0xFFFFFFFF`).
//! An object's class comes from its header word (the per-type register value).

use std::collections::HashMap;

use heapwire_engine::RejectKind as K;
use heapwire_schema::{CompiledSchema, NONE};

use super::{fits, oerr, Conv, ObjError, Tables, NULL_REF};

/// Memory the serializer reads objects from.
pub trait Memory {
    /// Fills `buf` from address `addr`; false when the range is not readable.
    fn read(&self, addr: u64, buf: &mut [u8]) -> bool;
}

/// A heap image placed at `base`.
pub struct ImageMemory<'a> {
    pub bytes: &'a [u8],
    pub base: u64,
}

impl Memory for ImageMemory<'_> {
    fn read(&self, addr: u64, buf: &mut [u8]) -> bool {
        let Some(off) = addr.checked_sub(self.base) else { return false };
        let Some(end) = off.checked_add(buf.len() as u64) else { return false };
        if end > self.bytes.len() as u64 {
            return false;
        }
        buf.copy_from_slice(&self.bytes[off as usize..end as usize]);
        true
    }
}

/// This process's own memory: live objects (e.g. C++ objects whose layout the
/// generated header checked). Only null is refused.
pub struct RawMemory(());

impl RawMemory {
    /// # Safety
    /// Every object reachable from the root handed to [`encode`] must be readable
    /// for its class's size, and must not change during the call.
    pub unsafe fn new() -> Self {
        RawMemory(())
    }
}

impl Memory for RawMemory {
    fn read(&self, addr: u64, buf: &mut [u8]) -> bool {
        if addr == 0 || addr.checked_add(buf.len() as u64).is_none() {
            return false;
        }
        // SAFETY: the caller of `RawMemory::new` promised the objects are readable.
        unsafe { std::ptr::copy_nonoverlapping(addr as usize as *const u8, buf.as_mut_ptr(), buf.len()) };
        true
    }
}

fn word(b: &[u8], pw: usize) -> u64 {
    let mut x = [0u8; 8];
    x[..pw].copy_from_slice(&b[..pw]);
    u64::from_le_bytes(x)
}

/// Serializes the graph rooted at address `root` (0 = null root: zero objects), whose
/// class must be message `root_msg` or a subclass. `type_words[msg]` is each class's
/// header word (default: the message index), as given to the decoder.
pub fn encode(
    schema: &CompiledSchema,
    t: &Tables,
    mem: &dyn Memory,
    root: u64,
    root_msg: usize,
    type_words: &[u64],
    out: &mut Vec<u8>,
) -> Result<(), ObjError> {
    out.clear();
    let Some(root_class) = schema.class_of(root_msg) else { return oerr(K::NotAClass, 0) };
    let pw = t.ptr as usize;
    // Header word → concrete class.
    let mut by_word: HashMap<u64, u32> = HashMap::new();
    for (ci, c) in t.classes.iter().enumerate() {
        if c.type_id != NONE {
            by_word.insert(type_words.get(c.msg as usize).copied().unwrap_or(c.msg as u64), ci as u32);
        }
    }
    // Pass 1: prefix order.
    let mut ids: HashMap<u64, u32> = HashMap::new();
    let mut list: Vec<(u64, u32)> = Vec::new();
    let mut stack: Vec<(u64, u32)> = Vec::new(); // (address, required class)
    let mut buf = vec![0u8; t.classes.iter().map(|c| c.size as usize).max().unwrap_or(0).max(8)];
    if root != 0 {
        stack.push((root, root_class as u32));
    }
    while let Some((addr, want)) = stack.pop() {
        if ids.contains_key(&addr) {
            continue;
        }
        if !mem.read(addr, &mut buf[..pw]) {
            return oerr(K::BadPointer, addr);
        }
        let Some(&c) = by_word.get(&word(&buf, pw)) else { return oerr(K::UnknownHeader, addr) };
        if !t.is_sub(c, want) {
            return oerr(if list.is_empty() { K::RootType } else { K::ReferenceType }, addr);
        }
        let ct = &t.classes[c as usize];
        if addr % ct.align as u64 != 0 || !mem.read(addr, &mut buf[..ct.size as usize]) {
            return oerr(K::BadPointer, addr);
        }
        if list.len() >= NULL_REF as usize {
            return oerr(K::TooManyObjects, addr);
        }
        ids.insert(addr, list.len() as u32);
        list.push((addr, c));
        for op in ct.ops.iter().rev() {
            if let (Conv::Ref(target), true) = (op.conv, op.wire != 0) {
                let p = word(&buf[op.offset as usize..], pw);
                if p != 0 {
                    stack.push((p, target));
                }
            }
        }
    }
    // Pass 2: count, type ids, members.
    let wire_bytes: usize = list.iter().map(|&(_, c)| 4 + t.classes[c as usize].wire_size as usize).sum();
    out.reserve(4 + wire_bytes);
    out.extend_from_slice(&(list.len() as u32).to_le_bytes());
    for &(_, c) in &list {
        out.extend_from_slice(&t.classes[c as usize].type_id.to_le_bytes());
    }
    for &(addr, c) in &list {
        let ct = &t.classes[c as usize];
        if !mem.read(addr, &mut buf[..ct.size as usize]) {
            return oerr(K::BadPointer, addr);
        }
        for op in &ct.ops {
            if op.wire == 0 {
                continue;
            }
            let at = op.offset as usize;
            match op.conv {
                Conv::Ref(_) => {
                    let p = word(&buf[at..], pw);
                    let id = if p == 0 { NULL_REF } else { ids[&p] };
                    out.extend_from_slice(&id.to_le_bytes());
                }
                conv => {
                    let v = word(&buf[at..], op.size as usize);
                    if !fits(v, op.size, op.wire, conv) {
                        return oerr(K::ValueOutOfRange, addr + at as u64);
                    }
                    out.extend_from_slice(&v.to_le_bytes()[..op.wire as usize]);
                }
            }
        }
    }
    Ok(())
}

//! The versioned binary table file (`compile -o`), documented in `docs/table-format.md`.
//!
//! Everything little-endian. A device is installed from these bytes, so `read` treats
//! them as untrusted: every index, offset and size is checked before a schema is built.

use crate::layout::slot_size_align;
use crate::model::*;
use crate::SchemaError;

pub const MAGIC: &[u8; 8] = b"HWSCHEMA";
/// 2: adds the class section (object graphs) after the enums.
pub const VERSION: u32 = 2;
/// Bounds that keep a hostile table file from asking for absurd memory.
const MAX_TYPES: u32 = 1 << 20;
const MAX_STRUCT: u32 = 1 << 24;

/// The trailer checksum: CRC-32 (IEEE 802.3, reflected), bitwise — tables are small and
/// read once. Public so tools that frame table bytes (the fuzz target) use the same one.
pub fn crc32(data: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in data {
        crc ^= b as u32;
        for _ in 0..8 {
            crc = if crc & 1 != 0 { (crc >> 1) ^ 0xEDB8_8320 } else { crc >> 1 };
        }
    }
    !crc
}

struct W(Vec<u8>);
impl W {
    fn u8(&mut self, v: u8) {
        self.0.push(v);
    }
    fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn bytes(&mut self, v: &[u8]) {
        self.u32(v.len() as u32);
        self.0.extend_from_slice(v);
    }
}

pub fn write(s: &CompiledSchema) -> Vec<u8> {
    let mut w = W(Vec::new());
    w.0.extend_from_slice(MAGIC);
    w.u32(VERSION);
    w.u8(s.layout.pointer_width.bytes() as u8);
    w.u8(s.layout.header_words as u8);
    w.u8(0);
    w.u8(0);
    w.u32(s.messages.len() as u32);
    w.u32(s.enums.len() as u32);
    for m in &s.messages {
        w.bytes(m.full_name.as_bytes());
        for v in [m.size, m.align, m.flags, m.hasbits_offset, m.hasbit_count, m.unknown_offset] {
            w.u32(v);
        }
        w.u32(m.fields.len() as u32);
        w.u32(m.oneofs.len() as u32);
        for f in &m.fields {
            w.u32(f.number);
            w.u8(f.kind as u8);
            w.u8(f.flags);
            let (pk, pi) = match f.presence {
                Presence::Implicit => (0, 0),
                Presence::HasBit(i) => (1, i),
                Presence::Oneof(i) => (2, i),
                Presence::Pointer => (3, 0),
            };
            w.u8(pk);
            match &f.default {
                None => w.u8(0),
                Some(DefaultValue::Int(_)) => w.u8(1),
                Some(DefaultValue::UInt(_)) => w.u8(2),
                Some(DefaultValue::Double(_)) => w.u8(3),
                Some(DefaultValue::Float(_)) => w.u8(4),
                Some(DefaultValue::Bytes(_)) => w.u8(5),
            }
            w.u32(pi);
            w.u32(f.offset);
            w.u32(f.sub);
            w.bytes(f.name.as_bytes());
            w.bytes(f.json_name.as_bytes());
            match &f.default {
                None => {}
                Some(DefaultValue::Int(v)) => w.u64(*v as u64),
                Some(DefaultValue::UInt(v)) => w.u64(*v),
                Some(DefaultValue::Double(v)) => w.u64(v.to_bits()),
                Some(DefaultValue::Float(v)) => w.u64(v.to_bits() as u64),
                Some(DefaultValue::Bytes(b)) => w.bytes(b),
            }
        }
        for o in &m.oneofs {
            w.bytes(o.name.as_bytes());
            w.u32(o.case_offset);
            w.u32(o.storage_offset);
            w.u32(o.storage_size);
        }
    }
    for e in &s.enums {
        w.bytes(e.full_name.as_bytes());
        w.u8(e.closed as u8);
        w.u32(e.values.len() as u32);
        for v in &e.values {
            w.bytes(v.name.as_bytes());
            w.u32(v.number as u32);
        }
    }
    crate::objgraph::write_classes(&mut w.0, s);
    let crc = crc32(&w.0);
    w.u32(crc);
    w.0
}

struct R<'a> {
    b: &'a [u8],
    pos: usize,
}

impl<'a> R<'a> {
    fn err(&self, what: &str) -> SchemaError {
        SchemaError::Table { offset: self.pos, reason: what.to_string() }
    }
    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], SchemaError> {
        if self.b.len() - self.pos < n {
            return Err(self.err(&format!("truncated: {what}")));
        }
        let s = &self.b[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }
    fn u8(&mut self, what: &str) -> Result<u8, SchemaError> {
        Ok(self.take(1, what)?[0])
    }
    fn u32(&mut self, what: &str) -> Result<u32, SchemaError> {
        Ok(u32::from_le_bytes(self.take(4, what)?.try_into().unwrap()))
    }
    fn u64(&mut self, what: &str) -> Result<u64, SchemaError> {
        Ok(u64::from_le_bytes(self.take(8, what)?.try_into().unwrap()))
    }
    fn bytes(&mut self, what: &str) -> Result<&'a [u8], SchemaError> {
        let n = self.u32(what)? as usize;
        self.take(n, what)
    }
    fn string(&mut self, what: &str) -> Result<String, SchemaError> {
        let at = self.pos;
        let b = self.bytes(what)?;
        String::from_utf8(b.to_vec()).map_err(|_| SchemaError::Table { offset: at, reason: format!("{what} is not UTF-8") })
    }
    fn count(&mut self, what: &str, min_item_bytes: usize) -> Result<usize, SchemaError> {
        let n = self.u32(what)?;
        // A count the remaining bytes cannot hold is rejected before anything is allocated.
        if n > MAX_TYPES || (n as usize).saturating_mul(min_item_bytes) > self.b.len() - self.pos {
            return Err(self.err(&format!("{what} {n} exceeds the file")));
        }
        Ok(n as usize)
    }
}

/// Parses and validates a table file.
pub fn read(bytes: &[u8]) -> Result<CompiledSchema, SchemaError> {
    if bytes.len() < MAGIC.len() + 4 + 4 + 8 + 4 || &bytes[..8] != MAGIC {
        return Err(SchemaError::Table { offset: 0, reason: "not a heapwire table file (bad magic)".into() });
    }
    let body = &bytes[..bytes.len() - 4];
    let stored = u32::from_le_bytes(bytes[bytes.len() - 4..].try_into().unwrap());
    if crc32(body) != stored {
        return Err(SchemaError::Table { offset: bytes.len() - 4, reason: "checksum mismatch".into() });
    }
    let mut r = R { b: body, pos: 8 };
    let version = r.u32("version")?;
    if version != VERSION {
        return Err(SchemaError::Table { offset: 8, reason: format!("unsupported version {version} (this build reads {VERSION})") });
    }
    let pointer_width = match r.u8("pointer width")? {
        4 => PointerWidth::P32,
        8 => PointerWidth::P64,
        w => return Err(r.err(&format!("pointer width {w} is not 4 or 8"))),
    };
    let header_words = match r.u8("header flag")? {
        0 => false,
        1 => true,
        _ => return Err(r.err("header flag is not 0 or 1")),
    };
    if r.take(2, "reserved")? != [0, 0] {
        return Err(r.err("reserved header bytes are not zero"));
    }
    let n_msgs = r.count("message count", 40)?;
    let n_enums = r.count("enum count", 9)?;
    let mut messages = Vec::with_capacity(n_msgs);
    for _ in 0..n_msgs {
        let full_name = r.string("message name")?;
        let mut v = [0u32; 6];
        for x in v.iter_mut() {
            *x = r.u32("message header")?;
        }
        let [size, align, flags, hasbits_offset, hasbit_count, unknown_offset] = v;
        let n_fields = r.count("field count", 28)?;
        let n_oneofs = r.count("oneof count", 16)?;
        let mut fields = Vec::with_capacity(n_fields);
        for _ in 0..n_fields {
            let number = r.u32("field number")?;
            let kind_at = r.pos;
            let kind = Kind::from_u8(r.u8("kind")?)
                .ok_or(SchemaError::Table { offset: kind_at, reason: "unknown field kind".into() })?;
            let flags = r.u8("field flags")?;
            let pk = r.u8("presence kind")?;
            let dk = r.u8("default kind")?;
            let pi = r.u32("presence index")?;
            let offset = r.u32("field offset")?;
            let sub = r.u32("sub-type")?;
            let name = r.string("field name")?;
            let json_name = r.string("json name")?;
            let presence = match (pk, pi) {
                (0, 0) => Presence::Implicit,
                (1, _) => Presence::HasBit(pi),
                (2, _) => Presence::Oneof(pi),
                (3, 0) => Presence::Pointer,
                (0 | 3, _) => return Err(r.err("presence index set for a presence kind without one")),
                _ => return Err(r.err("unknown presence kind")),
            };
            let default = match dk {
                0 => None,
                1 => Some(DefaultValue::Int(r.u64("default")? as i64)),
                2 => Some(DefaultValue::UInt(r.u64("default")?)),
                3 => Some(DefaultValue::Double(f64::from_bits(r.u64("default")?))),
                4 => Some(DefaultValue::Float(f32::from_bits(r.u64("default")? as u32))),
                5 => Some(DefaultValue::Bytes(r.bytes("default")?.to_vec())),
                _ => return Err(r.err("unknown default kind")),
            };
            fields.push(Field { number, name, json_name, kind, flags, presence, offset, sub, default });
        }
        let mut oneofs = Vec::with_capacity(n_oneofs);
        for _ in 0..n_oneofs {
            let name = r.string("oneof name")?;
            let case_offset = r.u32("oneof case offset")?;
            let storage_offset = r.u32("oneof storage offset")?;
            let storage_size = r.u32("oneof storage size")?;
            oneofs.push(Oneof { name, case_offset, storage_offset, storage_size });
        }
        messages.push(Message { full_name, size, align, flags, hasbits_offset, hasbit_count, unknown_offset, fields, oneofs });
    }
    let mut enums = Vec::with_capacity(n_enums);
    for _ in 0..n_enums {
        let full_name = r.string("enum name")?;
        let closed = match r.u8("enum closed flag")? {
            0 => false,
            1 => true,
            _ => return Err(r.err("enum closed flag is not 0 or 1")),
        };
        let n = r.count("enum value count", 8)?;
        let mut values = Vec::with_capacity(n);
        for _ in 0..n {
            let name = r.string("enum value name")?;
            let number = r.u32("enum value")? as i32;
            values.push(EnumValue { name, number });
        }
        enums.push(Enum { full_name, closed, values });
    }
    let classes = {
        let r = std::cell::RefCell::new(&mut r);
        crate::objgraph::read_classes(
            &mut |w| r.borrow_mut().u32(w),
            &mut |w| r.borrow_mut().string(w),
            &mut |w, m| r.borrow_mut().count(w, m),
        )?
    };
    if r.pos != body.len() {
        return Err(r.err("trailing bytes after the last class"));
    }
    let s = CompiledSchema { layout: LayoutOptions { pointer_width, header_words }, messages, enums, classes };
    validate(&s)?;
    crate::objgraph::validate_classes(&s)?;
    Ok(s)
}

/// Checks the invariants every engine relies on: each field's storage lies inside its
/// struct, indices refer to existing types, numbers are sorted and in range.
pub fn validate(s: &CompiledSchema) -> Result<(), SchemaError> {
    let pw = s.ptr();
    let bad = |m: &Message, what: String| SchemaError::Invalid(format!("table: {}: {what}", m.full_name));
    for m in &s.messages {
        if !m.align.is_power_of_two() || m.align > 16 || m.align < pw || m.size % m.align != 0 || m.size > MAX_STRUCT {
            return Err(bad(m, format!("bad size {} / alignment {}", m.size, m.align)));
        }
        if m.flags & !message_flags::ALL != 0 {
            return Err(bad(m, "unknown message flags".into()));
        }
        let fits = |off: u32, len: u32, a: u32| off % a == 0 && (off as u64 + len as u64) <= m.size as u64;
        if !fits(m.unknown_offset, 2 * pw, pw) || !fits(m.hasbits_offset, 4 * m.hasbit_count.div_ceil(32), 4) {
            return Err(bad(m, "unknown-field range or presence words outside the struct".into()));
        }
        if s.layout.header_words && (m.hasbits_offset < pw && m.hasbit_count > 0) {
            return Err(bad(m, "presence words overlap the header word".into()));
        }
        for o in &m.oneofs {
            if !fits(o.case_offset, 4, 4) || !fits(o.storage_offset, o.storage_size, 1) {
                return Err(bad(m, format!("oneof {} outside the struct", o.name)));
            }
        }
        let mut last = 0u32;
        for f in &m.fields {
            if f.number <= last || f.number > crate::MAX_FIELD_NUMBER {
                return Err(bad(m, format!("field numbers not ascending or out of range at {}", f.number)));
            }
            last = f.number;
            if f.flags & !field_flags::ALL != 0 {
                return Err(bad(m, format!("field {}: unknown flags", f.number)));
            }
            let (size, a) = slot_size_align(f.kind, f.is_repeated(), pw);
            if !fits(f.offset, size, a) {
                return Err(bad(m, format!("field {} storage outside the struct", f.number)));
            }
            match f.presence {
                Presence::HasBit(i) if i >= m.hasbit_count => return Err(bad(m, format!("field {}: presence bit out of range", f.number))),
                Presence::Oneof(i) => {
                    let o = m.oneofs.get(i as usize).ok_or_else(|| bad(m, format!("field {}: oneof out of range", f.number)))?;
                    if f.is_repeated() || f.offset != o.storage_offset || size > o.storage_size {
                        return Err(bad(m, format!("field {}: does not fit its oneof", f.number)));
                    }
                }
                Presence::Pointer if !f.kind.is_message() || f.is_repeated() => {
                    return Err(bad(m, format!("field {}: pointer presence on a non-message", f.number)))
                }
                _ => {}
            }
            let sub_ok = match f.kind {
                Kind::Message | Kind::Group => (f.sub as usize) < s.messages.len(),
                Kind::Enum => (f.sub as usize) < s.enums.len(),
                _ => f.sub == NONE,
            };
            if !sub_ok {
                return Err(bad(m, format!("field {}: sub-type index {} invalid", f.number, f.sub)));
            }
            if f.is_packed() && !(f.is_repeated() && f.kind.is_packable()) {
                return Err(bad(m, format!("field {}: packed on a non-packable field", f.number)));
            }
            if f.is_map() && !(f.is_repeated() && f.kind == Kind::Message && s.messages[f.sub as usize].is_map_entry()) {
                return Err(bad(m, format!("field {}: map flag without a map-entry type", f.number)));
            }
        }
        if m.is_map_entry() && (m.fields.len() != 2 || m.fields[0].number != 1 || m.fields[1].number != 2 || m.fields[0].is_repeated() || m.fields[1].is_repeated()) {
            return Err(bad(m, "map entry must have exactly fields 1 (key) and 2 (value)".into()));
        }
    }
    Ok(())
}

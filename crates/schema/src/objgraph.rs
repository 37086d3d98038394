//! Classes for object graphs (the `objgraph` wire format, `docs/objgraph-wire.md`).
//!
//! A message marked `option (heapwire.class) = {...}` (see `proto/heapwire/options.proto`)
//! is also compiled as a C++-style polymorphic class: a header word (vtable pointer, from
//! the per-type register) at offset 0, the base class's members, then its own members
//! in declaration order, each at its natural alignment after the previous one (the
//! Itanium C++ ABI for a class with virtual methods, single inheritance). Message-typed
//! fields of a class are references. The protobuf layout of the same message is
//! unchanged: classes are a separate list in the compiled schema.

use std::collections::HashMap;
use prost_reflect::{DescriptorPool, MessageDescriptor, Value};

use crate::layout::align_up;
use crate::model::*;
use crate::SchemaError;

/// The text of `proto/heapwire/options.proto`, built into the compiler so that schemas
/// can `import "heapwire/options.proto"` without an `-I` flag.
pub const OPTIONS_PROTO: &str = include_str!("../../../proto/heapwire/options.proto");
pub const OPTIONS_PROTO_NAME: &str = "heapwire/options.proto";

/// References are object indices: 4 bytes on the wire.
pub const REF_WIRE_WIDTH: u32 = 4;

#[derive(Clone, Debug, PartialEq)]
pub struct ClassMember {
    /// Message index of the class that declares the field (a base class for inherited members).
    pub decl: u32,
    /// Index into `messages[decl].fields`.
    pub field: u32,
    /// Byte offset in the object.
    pub offset: u32,
    /// Bytes in memory (pointer width for references).
    pub size: u32,
    /// Bytes on the wire; 0 = not on the wire (zero / null in the rebuilt object).
    pub wire_width: u32,
    /// C++ data member name the layout is checked against.
    pub cpp_member: String,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Class {
    /// Message index (names and field descriptions come from there).
    pub message: u32,
    /// Wire type id, or `NONE` for an abstract class.
    pub type_id: u32,
    /// Class index of the base class, or `NONE`. Bases precede their subclasses.
    pub base: u32,
    /// Object size (a multiple of `align`) and alignment (at least the pointer width).
    pub size: u32,
    pub align: u32,
    pub cpp_name: String,
    /// Every member in memory order: the base's first, then the class's own.
    pub members: Vec<ClassMember>,
}

impl Class {
    pub fn is_abstract(&self) -> bool {
        self.type_id == NONE
    }
}

impl CompiledSchema {
    /// The class index of message `msg`, if it is a class.
    pub fn class_of(&self, msg: usize) -> Option<usize> {
        self.classes.iter().position(|c| c.message as usize == msg)
    }
    /// The field a member describes.
    pub fn member_field(&self, m: &ClassMember) -> &Field {
        &self.messages[m.decl as usize].fields[m.field as usize]
    }
    /// Whether class `c` is class `ancestor` or derives from it.
    pub fn is_subclass(&self, mut c: usize, ancestor: usize) -> bool {
        // Bases precede subclasses, so the walk ends within `classes.len()` steps.
        for _ in 0..=self.classes.len() {
            if c == ancestor {
                return true;
            }
            let b = self.classes[c].base;
            if b == NONE {
                return false;
            }
            c = b as usize;
        }
        false
    }
}

fn mem_size(kind: Kind, pw: u32) -> u32 {
    if kind.is_message() {
        pw
    } else {
        kind.scalar_size().unwrap_or(0)
    }
}

fn is_integral(kind: Kind) -> bool {
    !matches!(kind, Kind::Float | Kind::Double) && kind.scalar_size().is_some()
}

/// Reads the class options of every message in `pool` and lays out the classes.
/// `msg_descs[i]` is the descriptor of `messages[i]`.
pub(crate) fn classes_from_pool(
    pool: &DescriptorPool,
    msg_descs: &[MessageDescriptor],
    messages: &[Message],
    layout: LayoutOptions,
) -> Result<Vec<Class>, SchemaError> {
    let Some(class_ext) = pool.get_extension_by_name("heapwire.class") else {
        return Ok(Vec::new());
    };
    let width_ext = pool.get_extension_by_name("heapwire.wire_width");
    let member_ext = pool.get_extension_by_name("heapwire.cpp_member");
    let pw = layout.pointer_width.bytes();
    let by_name: HashMap<&str, usize> = msg_descs.iter().enumerate().map(|(i, m)| (m.full_name(), i)).collect();

    // (message index, type id, base message index, omit base members, cpp name)
    struct Raw {
        msg: usize,
        type_id: u32,
        base: Option<usize>,
        omit_base: bool,
        cpp_name: String,
    }
    let mut raws = Vec::new();
    for (mi, md) in msg_descs.iter().enumerate() {
        let opts = md.options();
        if !opts.has_extension(&class_ext) {
            continue;
        }
        let v = opts.get_extension(&class_ext);
        let Value::Message(co) = v.as_ref() else { continue };
        let get = |name: &str| co.get_field_by_name(name).map(|v| v.into_owned());
        let has = |name: &str| co.has_field_by_name(name);
        let type_id = if has("type_id") {
            match get("type_id") {
                Some(Value::U32(t)) if t != NONE => t,
                _ => return Err(SchemaError::Invalid(format!("{}: bad class type_id", md.full_name()))),
            }
        } else {
            NONE
        };
        let base = if has("base") {
            let Some(Value::String(b)) = get("base") else { unreachable!() };
            let b = b.strip_prefix('.').unwrap_or(&b).to_string();
            // Full name first, then relative to the message's scope outward.
            let mut found = by_name.get(b.as_str()).copied();
            let mut scope = md.full_name().to_string();
            while found.is_none() {
                match scope.rfind('.') {
                    Some(p) => {
                        scope.truncate(p);
                        found = by_name.get(format!("{scope}.{b}").as_str()).copied();
                    }
                    None => break,
                }
            }
            Some(found.ok_or_else(|| SchemaError::Invalid(format!("{}: base class {b} not found", md.full_name())))?)
        } else {
            None
        };
        let omit_base = matches!(get("omit_base_members"), Some(Value::Bool(true)));
        let cpp_name = match get("cpp_name") {
            Some(Value::String(s)) if has("cpp_name") => s,
            _ => md.name().to_string(),
        };
        raws.push(Raw { msg: mi, type_id, base, omit_base, cpp_name });
    }
    if raws.is_empty() {
        return Ok(Vec::new());
    }
    // Order classes so that every base precedes its subclasses (iteratively; a cycle
    // or a base that is not a class is an error).
    let is_class: HashMap<usize, usize> = raws.iter().enumerate().map(|(i, r)| (r.msg, i)).collect();
    for r in &raws {
        if let Some(b) = r.base {
            if !is_class.contains_key(&b) {
                return Err(SchemaError::Invalid(format!(
                    "{}: base {} is not a class (mark it with option (heapwire.class))",
                    messages[r.msg].full_name, messages[b].full_name
                )));
            }
        }
    }
    let mut order: Vec<usize> = Vec::with_capacity(raws.len());
    let mut placed = vec![NONE; raws.len()]; // raw index -> class index
    while order.len() < raws.len() {
        let before = order.len();
        for (i, r) in raws.iter().enumerate() {
            if placed[i] != NONE {
                continue;
            }
            if r.base.is_none_or(|b| placed[is_class[&b]] != NONE) {
                placed[i] = order.len() as u32;
                order.push(i);
            }
        }
        if order.len() == before {
            return Err(SchemaError::Invalid("class inheritance has a cycle".into()));
        }
    }
    let mut seen_ids: HashMap<u32, usize> = HashMap::new();
    let mut classes: Vec<Class> = Vec::with_capacity(raws.len());
    for &ri in &order {
        let r = &raws[ri];
        let md = &msg_descs[r.msg];
        let msg = &messages[r.msg];
        if r.type_id != NONE {
            if let Some(other) = seen_ids.insert(r.type_id, r.msg) {
                return Err(SchemaError::Invalid(format!(
                    "{} and {}: both have type_id {}",
                    messages[other].full_name, msg.full_name, r.type_id
                )));
            }
        }
        let base_ci = r.base.map(|b| placed[is_class[&b]]).unwrap_or(NONE);
        let mut members = Vec::new();
        let mut off = pw; // the header word
        let mut align = pw;
        if base_ci != NONE {
            let b = &classes[base_ci as usize];
            for m in &b.members {
                let mut m = m.clone();
                if r.omit_base {
                    m.wire_width = 0;
                }
                members.push(m);
            }
            align = align.max(b.align);
            // Own members start at the base's data size (its tail padding is reused,
            // as the Itanium ABI does for non-POD bases).
            off = b.members.iter().map(|m| m.offset + m.size).max().unwrap_or(pw);
        }
        // Own fields in declaration order.
        for fd in md.fields() {
            let fi = msg.field_index(fd.number()).expect("field in message");
            let f = &msg.fields[fi];
            let what = |s: &str| SchemaError::Unsupported(format!("{}: class member {}: {s}", msg.full_name, f.name));
            if f.is_repeated() || f.kind.is_string_like() || f.kind == Kind::Group || matches!(f.presence, Presence::Oneof(_)) {
                return Err(what("only scalars and references can be class members (no repeated, string, bytes, group, oneof)"));
            }
            if f.kind == Kind::Message && !is_class.contains_key(&(f.sub as usize)) {
                return Err(what("a reference must be to a class"));
            }
            let size = mem_size(f.kind, pw);
            let opts = fd.options();
            let ww = match &width_ext {
                Some(e) if opts.has_extension(e) => match opts.get_extension(e).as_ref() {
                    Value::U32(w) => *w,
                    _ => 0,
                },
                _ => if f.kind.is_message() { REF_WIRE_WIDTH } else { size },
            };
            if f.kind.is_message() && ww != REF_WIRE_WIDTH {
                return Err(what("references are 4 bytes on the wire"));
            }
            if !f.kind.is_message() && (!matches!(ww, 1 | 2 | 4 | 8) || ww > size || (ww != size && !is_integral(f.kind))) {
                return Err(what(&format!("wire_width {ww} is not 1, 2, 4 or 8 up to the member's size {size} (integers only)")));
            }
            let cpp_member = match &member_ext {
                Some(e) if opts.has_extension(e) => match opts.get_extension(e).as_ref() {
                    Value::String(s) => s.clone(),
                    _ => f.name.clone(),
                },
                _ => f.name.clone(),
            };
            off = align_up(off, size);
            align = align.max(size);
            members.push(ClassMember { decl: r.msg as u32, field: fi as u32, offset: off, size, wire_width: ww, cpp_member });
            off += size;
        }
        classes.push(Class {
            message: r.msg as u32,
            type_id: r.type_id,
            base: base_ci,
            size: align_up(off, align),
            align,
            cpp_name: r.cpp_name.clone(),
            members,
        });
    }
    Ok(classes)
}

/// Checks what the objgraph engines rely on (used on table files, which are untrusted).
pub fn validate_classes(s: &CompiledSchema) -> Result<(), SchemaError> {
    let pw = s.ptr();
    let bad = |c: &Class, what: String| {
        let name = s.messages.get(c.message as usize).map(|m| m.full_name.as_str()).unwrap_or("?");
        SchemaError::Invalid(format!("table: class {name}: {what}"))
    };
    let mut ids = HashMap::new();
    let mut msgs = HashMap::new();
    for (ci, c) in s.classes.iter().enumerate() {
        if c.message as usize >= s.messages.len() || msgs.insert(c.message, ci).is_some() {
            return Err(bad(c, "message index invalid or repeated".into()));
        }
        if c.type_id != NONE && ids.insert(c.type_id, ci).is_some() {
            return Err(bad(c, format!("type id {} repeated", c.type_id)));
        }
        if c.base != NONE && c.base as usize >= ci {
            return Err(bad(c, "base class must precede its subclass".into()));
        }
        if !c.align.is_power_of_two() || c.align < pw || c.align > 16 || c.size % c.align != 0 || c.size < pw || c.size > 1 << 24 {
            return Err(bad(c, format!("bad size {} / alignment {}", c.size, c.align)));
        }
    }
    for c in &s.classes {
        let mut spans: Vec<(u32, u32)> = Vec::with_capacity(c.members.len());
        for m in &c.members {
            let Some(f) = s.messages.get(m.decl as usize).and_then(|d| d.fields.get(m.field as usize)) else {
                return Err(bad(c, "member refers to no field".into()));
            };
            let ok_kind = !f.is_repeated() && (f.kind == Kind::Message && msgs.contains_key(&f.sub) || f.kind.scalar_size().is_some());
            if !ok_kind || m.size != mem_size(f.kind, pw) {
                return Err(bad(c, format!("member {}: kind or size not allowed", f.name)));
            }
            if m.offset < pw || m.offset % m.size != 0 || m.offset as u64 + m.size as u64 > c.size as u64 {
                return Err(bad(c, format!("member {}: offset {} outside the object", f.name, m.offset)));
            }
            let ww_ok = if f.kind == Kind::Message {
                m.wire_width == 0 || m.wire_width == REF_WIRE_WIDTH
            } else {
                m.wire_width == 0 || m.wire_width == m.size || (is_integral(f.kind) && matches!(m.wire_width, 1 | 2 | 4) && m.wire_width < m.size)
            };
            if !ww_ok {
                return Err(bad(c, format!("member {}: wire width {}", f.name, m.wire_width)));
            }
            spans.push((m.offset, m.offset + m.size));
        }
        spans.sort_unstable();
        if spans.windows(2).any(|w| w[0].1 > w[1].0) {
            return Err(bad(c, "members overlap".into()));
        }
    }
    Ok(())
}

pub(crate) fn write_classes(out: &mut Vec<u8>, s: &CompiledSchema) {
    let u32 = |o: &mut Vec<u8>, v: u32| o.extend_from_slice(&v.to_le_bytes());
    let str = |o: &mut Vec<u8>, v: &str| {
        o.extend_from_slice(&(v.len() as u32).to_le_bytes());
        o.extend_from_slice(v.as_bytes());
    };
    u32(out, s.classes.len() as u32);
    for c in &s.classes {
        for v in [c.message, c.type_id, c.base, c.size, c.align] {
            u32(out, v);
        }
        str(out, &c.cpp_name);
        u32(out, c.members.len() as u32);
        for m in &c.members {
            for v in [m.decl, m.field, m.offset, m.size, m.wire_width] {
                u32(out, v);
            }
            str(out, &m.cpp_member);
        }
    }
}

/// Reads the class section; `u32`/`string`/`count` are the table reader's primitives.
pub(crate) fn read_classes(
    u32: &mut dyn FnMut(&str) -> Result<u32, SchemaError>,
    string: &mut dyn FnMut(&str) -> Result<String, SchemaError>,
    count: &mut dyn FnMut(&str, usize) -> Result<usize, SchemaError>,
) -> Result<Vec<Class>, SchemaError> {
    let n = count("class count", 28)?;
    let mut classes = Vec::with_capacity(n);
    for _ in 0..n {
        let mut v = [0u32; 5];
        for x in v.iter_mut() {
            *x = u32("class header")?;
        }
        let [message, type_id, base, size, align] = v;
        let cpp_name = string("class C++ name")?;
        let nm = count("member count", 24)?;
        let mut members = Vec::with_capacity(nm);
        for _ in 0..nm {
            let mut v = [0u32; 5];
            for x in v.iter_mut() {
                *x = u32("class member")?;
            }
            let [decl, field, offset, size, wire_width] = v;
            let cpp_member = string("member C++ name")?;
            members.push(ClassMember { decl, field, offset, size, wire_width, cpp_member });
        }
        classes.push(Class { message, type_id, base, size, align, cpp_name, members });
    }
    Ok(classes)
}

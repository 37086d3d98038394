//! `.proto` files → `CompiledSchema`, through protox (no protoc needed).

use std::path::{Path, PathBuf};

use prost_reflect::{Cardinality, DescriptorPool, Kind as RKind, Syntax, Value};

use crate::features::{self, Editions, Resolver};
use crate::fields::Fd;
use crate::layout::lay_out;
use crate::model::*;
use crate::SchemaError;

/// Field numbers are at most 2^29 - 1 (protobuf's limit).
pub const MAX_FIELD_NUMBER: u32 = (1 << 29) - 1;

/// protox's parser recurses on nesting; a deep schema must not overflow our stack, so the
/// front end runs on a thread with a large stack and the nesting depth is bounded.
const COMPILER_STACK_BYTES: usize = 256 << 20;
/// Nested declarations (messages, enums, groups, options blocks) deeper than this are
/// rejected before parsing.
pub const MAX_DECLARATION_DEPTH: usize = 256;

/// Compiles `files` (searched in `includes`; a file's own directory is added when it
/// is not under any include directory) with the given layout.
pub fn compile_files(
    files: &[PathBuf],
    includes: &[PathBuf],
    layout: LayoutOptions,
) -> Result<CompiledSchema, SchemaError> {
    let mut incs: Vec<PathBuf> = includes.to_vec();
    let mut names = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(f)
            .map_err(|e| SchemaError::Io(format!("{}: {e}", f.display())))?;
        check_depth(&text, f)?;
        let abs = std::fs::canonicalize(f).map_err(|e| SchemaError::Io(format!("{}: {e}", f.display())))?;
        let under = incs.iter().find_map(|i| {
            let i = std::fs::canonicalize(i).ok()?;
            abs.strip_prefix(&i).ok().map(Path::to_path_buf)
        });
        match under {
            Some(rel) => names.push(rel),
            None => {
                let dir = abs.parent().unwrap_or(Path::new("/")).to_path_buf();
                names.push(PathBuf::from(abs.file_name().unwrap()));
                incs.push(dir);
            }
        }
    }
    // protox names a file by its path under the include directory, '/'-separated.
    let roots: Vec<String> = names
        .iter()
        .map(|n| n.iter().map(|c| c.to_string_lossy()).collect::<Vec<_>>().join("/"))
        .collect();
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Editions::new()));
    let recorder = seen.clone();
    let thread_roots = roots.clone();
    let pool = std::thread::Builder::new()
        .stack_size(COMPILER_STACK_BYTES)
        .spawn(move || -> Result<DescriptorPool, String> {
            // The include path, the well-known types, then heapwire/options.proto (built in).
            // Parse errors do not name their file by themselves.
            let named = |e: protox::Error| match e.file() {
                Some(f) if !e.to_string().contains(f) => format!("{f}: {e}"),
                _ => e.to_string(),
            };
            // The include path, the built-in files, the well-known types; descriptor.proto
            // loaded first (see `bundled::compiler`) unless the schema holds its own copy.
            let run = |preload: bool| -> Result<DescriptorPool, protox::Error> {
                recorder.lock().unwrap().clear();
                let mut c = crate::bundled::compiler(&incs, &thread_roots, recorder.clone(), preload)?;
                c.open_files(&names)?;
                Ok(c.descriptor_pool())
            };
            match run(true) {
                Err(e) if crate::bundled::clashes_with_preload(&e) => run(false),
                r => r,
            }
            .map_err(named)
        })
        .map_err(|e| SchemaError::Io(e.to_string()))?
        .join()
        .map_err(|_| SchemaError::Invalid("schema compiler panicked".into()))?
        .map_err(SchemaError::Parse)?;
    let editions = std::mem::take(&mut *seen.lock().unwrap());
    from_pool_editions(&pool, &editions, Some(&roots), layout)
}

/// The names of `roots` and of every file they import, directly or not.
fn reachable(pool: &DescriptorPool, roots: &[String]) -> std::collections::HashSet<String> {
    let mut seen = std::collections::HashSet::new();
    let mut todo: Vec<_> = roots.iter().filter_map(|r| pool.get_file_by_name(r)).collect();
    while let Some(f) = todo.pop() {
        if seen.insert(f.name().to_string()) {
            todo.extend(f.dependencies());
        }
    }
    seen
}

/// Rejects brace nesting deeper than `MAX_DECLARATION_DEPTH`, ignoring comments and strings.
fn check_depth(text: &str, path: &Path) -> Result<(), SchemaError> {
    let b = text.as_bytes();
    let (mut i, mut depth, mut line) = (0usize, 0usize, 1usize);
    while i < b.len() {
        match b[i] {
            b'\n' => line += 1,
            b'/' if b.get(i + 1) == Some(&b'/') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                i += 2;
                while i + 1 < b.len() && !(b[i] == b'*' && b[i + 1] == b'/') {
                    if b[i] == b'\n' {
                        line += 1;
                    }
                    i += 1;
                }
                i += 2;
                continue;
            }
            q @ (b'"' | b'\'') => {
                i += 1;
                while i < b.len() && b[i] != q && b[i] != b'\n' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
            }
            b'{' | b'[' | b'(' | b'<' => {
                depth += 1;
                if depth > MAX_DECLARATION_DEPTH {
                    return Err(SchemaError::Invalid(format!(
                        "{}:{line}: declarations nested deeper than {MAX_DECLARATION_DEPTH}",
                        path.display()
                    )));
                }
            }
            b'}' | b']' | b')' | b'>' => depth = depth.saturating_sub(1),
            _ => {}
        }
        i += 1;
    }
    Ok(())
}

fn convert_kind(f: &Fd) -> Kind {
    match f.kind() {
        RKind::Double => Kind::Double,
        RKind::Float => Kind::Float,
        RKind::Int64 => Kind::Int64,
        RKind::Uint64 => Kind::UInt64,
        RKind::Int32 => Kind::Int32,
        RKind::Fixed64 => Kind::Fixed64,
        RKind::Fixed32 => Kind::Fixed32,
        RKind::Bool => Kind::Bool,
        RKind::String => Kind::String,
        RKind::Bytes => Kind::Bytes,
        RKind::Uint32 => Kind::UInt32,
        RKind::Sfixed32 => Kind::SFixed32,
        RKind::Sfixed64 => Kind::SFixed64,
        RKind::Sint32 => Kind::SInt32,
        RKind::Sint64 => Kind::SInt64,
        RKind::Enum(_) => Kind::Enum,
        RKind::Message(_) if f.is_group() => Kind::Group,
        RKind::Message(_) => Kind::Message,
    }
}

/// Builds the compiled schema from a descriptor pool (every message and enum in it).
pub fn from_pool(pool: &DescriptorPool, layout: LayoutOptions) -> Result<CompiledSchema, SchemaError> {
    from_pool_editions(pool, &Editions::new(), None, layout)
}

/// As `from_pool`, the files named in `editions` resolved as editions files (they are in
/// the pool as proto2, see `features.rs`); with `roots`, only the messages and enums of
/// those files and the files they import (the pool may hold descriptor.proto unimported).
pub fn from_pool_editions(
    pool: &DescriptorPool,
    editions: &Editions,
    roots: Option<&[String]>,
    layout: LayoutOptions,
) -> Result<CompiledSchema, SchemaError> {
    let mut res = Resolver::new(editions);
    let keep = roots.map(|r| reachable(pool, r));
    let kept = |f: prost_reflect::FileDescriptor| keep.as_ref().is_none_or(|k| k.contains(f.name()));
    let msg_descs: Vec<_> = pool.all_messages().filter(|m| kept(m.parent_file())).collect();
    let enum_descs: Vec<_> = pool.all_enums().filter(|e| kept(e.parent_file())).collect();
    let msg_index = |name: &str| msg_descs.iter().position(|m| m.full_name() == name).map(|i| i as u32);
    let enum_index = |name: &str| enum_descs.iter().position(|e| e.full_name() == name).map(|i| i as u32);

    let mut closed_enums = Vec::with_capacity(enum_descs.len());
    for e in &enum_descs {
        closed_enums.push(match res.enum_(e)? {
            Some(f) => f.enum_type == features::CLOSED,
            None => e.parent_file().syntax() == Syntax::Proto2,
        });
    }
    let enums = enum_descs
        .iter()
        .zip(&closed_enums)
        .map(|(e, &closed)| Enum {
            full_name: e.full_name().to_string(),
            closed,
            // Declaration order (aliases included): JSON prints the first name of a number.
            values: e
                .enum_descriptor_proto()
                .value
                .iter()
                .map(|v| EnumValue { name: v.name().to_string(), number: v.number() })
                .collect(),
        })
        .collect::<Vec<_>>();

    let mut messages = Vec::with_capacity(msg_descs.len());
    for md in &msg_descs {
        let proto3 = md.parent_file().syntax() == Syntax::Proto3 && res.edition(md.parent_file().name()).is_none();
        if !matches!(md.parent_file().syntax(), Syntax::Proto2 | Syntax::Proto3) {
            return Err(SchemaError::Unsupported(format!("{}: unknown syntax", md.full_name())));
        }
        let real_oneofs: Vec<_> = md.oneofs().filter(|o| !o.is_synthetic()).collect();
        // Its own fields and the extensions of it, by number.
        let fields = Fd::of(md);
        let mut hasbit = 0u32;
        let mut out_fields = Vec::with_capacity(fields.len());
        for f in &fields {
            if f.number() == 0 || f.number() > MAX_FIELD_NUMBER {
                return Err(SchemaError::Invalid(format!("{}: field number {} out of range", f.full_name(), f.number())));
            }
            // Editions: the resolved features (None for proto2/proto3 files).
            let feats = res.field(f)?;
            // proto3 rules follow the file that declares the field (an extension's own).
            let proto3 = f.file().syntax() == Syntax::Proto3 && res.edition(f.file().name()).is_none();
            let mut kind = convert_kind(f);
            if let Some(ft) = feats {
                // DELIMITED is group encoding on the wire (never for map entries' values).
                if kind == Kind::Message && ft.message_encoding == features::DELIMITED && !md.is_map_entry() {
                    kind = Kind::Group;
                }
            }
            let repeated = f.cardinality() == Cardinality::Repeated;
            let mut flags = 0u8;
            if repeated {
                flags |= field_flags::REPEATED;
            }
            let packed = match feats {
                Some(ft) => ft.repeated_field_encoding == features::PACKED,
                // The `packed` option as written (prost-reflect's is_packed() misses it when
                // protox interprets options after building the pool), else the syntax's default.
                None => match f.options().get_field_by_name("packed").filter(|_| f.options().has_field_by_name("packed")) {
                    Some(v) => v.as_bool().unwrap_or(false),
                    None => proto3,
                },
            };
            if repeated && kind.is_packable() && packed {
                flags |= field_flags::PACKED;
            }
            if f.is_map() {
                flags |= field_flags::MAP;
            }
            let required = match feats {
                Some(ft) => !repeated && ft.field_presence == features::LEGACY_REQUIRED,
                None => f.cardinality() == Cardinality::Required,
            };
            if required {
                flags |= field_flags::REQUIRED;
            }
            let utf8 = match feats {
                Some(ft) => ft.utf8_validation == features::VERIFY,
                None => proto3,
            };
            if kind == Kind::String && utf8 {
                flags |= field_flags::VALIDATE_UTF8;
            }
            let sub = match f.kind() {
                RKind::Message(m) => msg_index(m.full_name()).expect("message in pool"),
                RKind::Enum(e) => {
                    let i = enum_index(e.full_name()).expect("enum in pool");
                    if closed_enums[i as usize] {
                        flags |= field_flags::CLOSED_ENUM;
                    }
                    i
                }
                _ => NONE,
            };
            let real_oneof = f
                .oneof()
                .filter(|o| !o.is_synthetic())
                .map(|o| real_oneofs.iter().position(|r| r.name() == o.name()).unwrap() as u32);
            let presence = if repeated {
                Presence::Implicit
            } else if let Some(o) = real_oneof {
                Presence::Oneof(o)
            } else if kind.is_message() {
                Presence::Pointer
            } else if feats.map_or_else(|| f.supports_presence(), |ft| ft.field_presence != features::IMPLICIT) {
                hasbit += 1;
                Presence::HasBit(hasbit - 1)
            } else {
                Presence::Implicit
            };
            let default = if f.has_default() {
                match f.default_value() {
                    Value::Bool(b) => Some(DefaultValue::Int(b as i64)),
                    Value::I32(v) => Some(DefaultValue::Int(v as i64)),
                    Value::I64(v) => Some(DefaultValue::Int(v)),
                    Value::U32(v) => Some(DefaultValue::UInt(v as u64)),
                    Value::U64(v) => Some(DefaultValue::UInt(v)),
                    Value::F32(v) => Some(DefaultValue::Float(v)),
                    Value::F64(v) => Some(DefaultValue::Double(v)),
                    Value::EnumNumber(v) => Some(DefaultValue::Int(v as i64)),
                    Value::String(s) => Some(DefaultValue::Bytes(s.into_bytes())),
                    Value::Bytes(b) => Some(DefaultValue::Bytes(b.to_vec())),
                    _ => None,
                }
            } else {
                None
            };
            out_fields.push(Field {
                number: f.number(),
                name: f.name().to_string(),
                json_name: f.json_name().to_string(),
                kind,
                flags,
                presence,
                offset: 0,
                sub,
                default,
            });
        }
        let mut m = Message {
            full_name: md.full_name().to_string(),
            size: 0,
            align: 0,
            flags: if md.is_map_entry() { message_flags::MAP_ENTRY } else { 0 }
                | if proto3 { message_flags::PROTO3 } else { 0 }
                | if md.extension_ranges().next().is_some() { message_flags::EXTENDABLE } else { 0 },
            hasbits_offset: 0,
            hasbit_count: 0,
            unknown_offset: 0,
            fields: out_fields,
            oneofs: real_oneofs
                .iter()
                .map(|o| Oneof { name: o.name().to_string(), case_offset: 0, storage_offset: 0, storage_size: 0 })
                .collect(),
        };
        lay_out(&mut m, real_oneofs.len(), layout);
        messages.push(m);
    }
    let classes = crate::objgraph::classes_from_pool(pool, &msg_descs, &messages, layout)?;
    Ok(CompiledSchema { layout, messages, enums, classes })
}

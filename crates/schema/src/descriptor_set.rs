//! A serialized `google.protobuf.FileDescriptorSet` (what `protoc --descriptor_set_out`
//! and `buf build -o` write) as schema input: any schema the official compiler handles,
//! whatever its syntax, compiles without our `.proto` front end.
//!
//! The descriptor library (prost-reflect 0.16) refuses `syntax = "editions"`, so each
//! editions file's syntax is rewritten to proto2 on the wire and its `edition` (field 14)
//! recorded; features are then resolved from the options as for `.proto` input
//! (`features.rs`). Options keep their bytes, so `features` survive.

use prost_reflect::DescriptorPool;

use crate::features::{Edition, Editions};
use crate::model::{CompiledSchema, LayoutOptions};
use crate::SchemaError;

fn varint(b: &[u8], i: &mut usize) -> Option<u64> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let byte = *b.get(*i)?;
        *i += 1;
        v |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return Some(v);
        }
    }
    None
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// One top-level field: number, wire type, the whole record's range, the payload's range
/// (length-delimited) or the value (varint).
struct Rec {
    num: u64,
    wt: u8,
    start: usize,
    end: usize,
    body: (usize, usize),
    value: u64,
}

fn records(b: &[u8]) -> Option<Vec<Rec>> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let start = i;
        let tag = varint(b, &mut i)?;
        let (num, wt) = (tag >> 3, (tag & 7) as u8);
        if num == 0 {
            return None;
        }
        let (mut body, mut value) = ((i, i), 0);
        match wt {
            0 => value = varint(b, &mut i)?,
            1 => i += 8,
            5 => i += 4,
            2 => {
                let n = usize::try_from(varint(b, &mut i)?).ok()?;
                body = (i, i.checked_add(n)?);
                i = body.1;
            }
            _ => return None, // groups do not occur in descriptors
        }
        if i > b.len() {
            return None;
        }
        out.push(Rec { num, wt, start, end: i, body, value });
    }
    Some(out)
}

/// Whether `bytes` are a FileDescriptorSet: nothing but `file` records (field 1), each a
/// message that starts with its `name` (field 1), covering every byte. `.proto` text
/// never parses so.
pub fn looks_like(bytes: &[u8]) -> bool {
    match records(bytes) {
        Some(rs) if !rs.is_empty() => rs.iter().all(|r| {
            r.num == 1 && r.wt == 2 && {
                let f = &bytes[r.body.0..r.body.1];
                records(f).is_some_and(|fr| fr.first().is_some_and(|n| n.num == 1 && n.wt == 2))
            }
        }),
        _ => false,
    }
}

/// Compiles a FileDescriptorSet (it must hold every file it depends on:
/// `protoc --include_imports`).
pub fn compile_descriptor_set(bytes: &[u8], layout: LayoutOptions) -> Result<CompiledSchema, SchemaError> {
    let bad = |why: &str| SchemaError::Invalid(format!("descriptor set: {why}"));
    let files = records(bytes).ok_or_else(|| bad("not a serialized FileDescriptorSet"))?;
    let mut editions = Editions::new();
    let mut names = Vec::new();
    let mut set = Vec::with_capacity(bytes.len());
    for f in files.iter().filter(|r| r.num == 1 && r.wt == 2) {
        let fb = &bytes[f.body.0..f.body.1];
        let recs = records(fb).ok_or_else(|| bad("a file that does not parse"))?;
        let name = recs
            .iter()
            .find(|r| r.num == 1 && r.wt == 2)
            .map(|r| String::from_utf8_lossy(&fb[r.body.0..r.body.1]).into_owned())
            .unwrap_or_default();
        names.push(name.clone());
        let syntax = recs.iter().find(|r| r.num == 12 && r.wt == 2).map(|r| &fb[r.body.0..r.body.1]);
        let mut file = Vec::with_capacity(fb.len());
        if syntax == Some(b"editions".as_slice()) {
            let ed = recs.iter().find(|r| r.num == 14 && r.wt == 0).map(|r| r.value);
            let e = match ed {
                Some(1000) => Edition::E2023,
                Some(1001) => Edition::E2024,
                other => {
                    return Err(SchemaError::Unsupported(format!(
                        "{name}: edition {} is not supported (heapwire supports 2023 and 2024)",
                        other.map_or("(none)".to_string(), |v| format!("enum value {v}"))
                    )))
                }
            };
            editions.insert(name.clone(), e);
            for r in &recs {
                if r.num == 12 && r.wt == 2 {
                    file.extend_from_slice(&[0x62, 6]);
                    file.extend_from_slice(b"proto2");
                } else {
                    file.extend_from_slice(&fb[r.start..r.end]);
                }
            }
        } else {
            file.extend_from_slice(fb);
        }
        set.push(0x0a);
        put_varint(&mut set, file.len() as u64);
        set.extend_from_slice(&file);
    }
    // Options decode against the pool's descriptor.proto: the set's own, else the current
    // built-in one (the descriptor library's predates edition 2024's features).
    // (A set whose descriptor.proto goes by another name clashes with it: read alone.)
    let own = names.iter().any(|n| n == crate::bundled::DESCRIPTOR_PROTO_NAME);
    let with_current = if own { None } else { Some(crate::bundled::descriptor_proto_pool()?) };
    let pool = with_current
        .and_then(|mut p| p.decode_file_descriptor_set(set.as_slice()).ok().map(|_| p))
        .map_or_else(|| DescriptorPool::decode(set.as_slice()), Ok)
        .map_err(|e| bad(&format!("{e} (a set must hold the files it imports: protoc --include_imports)")))?;
    crate::compile::from_pool_editions(&pool, &editions, Some(&names), layout)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proto_text_is_not_a_set() {
        assert!(!looks_like(b"\nsyntax = \"proto3\";\nmessage M {}\n"));
        assert!(!looks_like(b""));
        assert!(looks_like(b"\x0a\x03\x0a\x01a"));
    }
}

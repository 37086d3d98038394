//! Protobuf inputs for the system tests of the protobuf core (`protobuf_system.rs`,
//! `verilated_device.rs`): schema-driven random messages (every field kind, packed and
//! unpacked, repeats, merges, oneof switches, unknown fields and groups, closed-enum
//! unknowns, bad UTF-8 now and then) and their mutations, the test schemas, the bench
//! workloads' streams.

use std::path::PathBuf;

use heapwire_engine::framing::{put_varint, Delimited};
use heapwire_schema::{CompiledSchema, Kind, LayoutOptions};

use super::common::{root, Rng};

pub fn tag(out: &mut Vec<u8>, num: u32, wt: u8) {
    put_varint(out, ((num as u64) << 3) | wt as u64);
}

fn rand_varint_value(r: &mut Rng) -> u64 {
    match r.below(6) {
        0 => 0,
        1 => r.below(128),
        2 => r.below(1 << 20),
        3 => r.next(),
        4 => (-(r.below(1000) as i64)) as u64,
        _ => r.below(5),
    }
}

fn rand_bytes(r: &mut Rng, utf8: bool) -> Vec<u8> {
    let n = match r.below(5) {
        0 => 0,
        1 => r.below(8),
        2 => r.below(30),
        3 => 8 + r.below(3) * 8,
        _ => r.below(70),
    } as usize;
    let mut v = Vec::with_capacity(n);
    if utf8 {
        let pool = ["a", "bc", "é", "€", "𝄞", "xyz", " ", "ß"];
        while v.len() < n {
            v.extend_from_slice(pool[r.below(pool.len() as u64) as usize].as_bytes());
        }
        if r.chance(4) && !v.is_empty() {
            let i = r.below(v.len() as u64) as usize;
            v[i] = [0xff, 0xc0, 0x80, 0xed][r.below(4) as usize];
        }
    } else {
        for _ in 0..n {
            v.push(r.next() as u8);
        }
    }
    v
}

/// A random unknown field (numbers far from the schema's).
fn unknown_field(r: &mut Rng, out: &mut Vec<u8>, depth: u32) {
    let num = 1000 + r.below(3000) as u32;
    match r.below(if depth < 3 { 5 } else { 4 }) {
        0 => {
            tag(out, num, 0);
            put_varint(out, rand_varint_value(r));
        }
        1 => {
            tag(out, num, 1);
            out.extend_from_slice(&r.next().to_le_bytes());
        }
        2 => {
            tag(out, num, 5);
            out.extend_from_slice(&(r.next() as u32).to_le_bytes());
        }
        3 => {
            tag(out, num, 2);
            let b = rand_bytes(r, false);
            put_varint(out, b.len() as u64);
            out.extend_from_slice(&b);
        }
        _ => {
            tag(out, num, 3);
            for _ in 0..r.below(3) {
                unknown_field(r, out, depth + 1);
            }
            tag(out, num, 4);
        }
    }
}

fn scalar_value(r: &mut Rng, s: &CompiledSchema, f: &heapwire_schema::Field, out: &mut Vec<u8>) {
    match f.kind.wire_type() {
        0 => {
            let v = if f.kind == Kind::Enum {
                let e = &s.enums[f.sub as usize];
                if r.chance(80) && !e.values.is_empty() {
                    e.values[r.below(e.values.len() as u64) as usize].number as i64 as u64
                } else {
                    r.below(300)
                }
            } else {
                rand_varint_value(r)
            };
            put_varint(out, v);
        }
        1 => out.extend_from_slice(&r.next().to_le_bytes()),
        _ => out.extend_from_slice(&(r.next() as u32).to_le_bytes()),
    }
}

pub fn gen_message(r: &mut Rng, s: &CompiledSchema, mi: usize, depth: u32, budget: &mut i64, out: &mut Vec<u8>) {
    let m = &s.messages[mi];
    if m.fields.is_empty() && !r.chance(50) {
        return;
    }
    let n = r.below(2 + m.fields.len() as u64 * 2);
    for _ in 0..n {
        if *budget <= 0 {
            break;
        }
        if r.chance(6) {
            unknown_field(r, out, 0);
            continue;
        }
        if m.fields.is_empty() {
            continue;
        }
        let f = &m.fields[r.below(m.fields.len() as u64) as usize];
        *budget -= 1;
        if r.chance(3) {
            // wrong wire type: an unknown field
            let wt = [0u8, 1, 5][r.below(3) as usize];
            if wt != f.kind.wire_type() {
                tag(out, f.number, wt);
                match wt {
                    0 => put_varint(out, r.below(1000)),
                    1 => out.extend_from_slice(&r.next().to_le_bytes()),
                    _ => out.extend_from_slice(&(r.next() as u32).to_le_bytes()),
                }
                continue;
            }
        }
        match f.kind {
            Kind::Message => {
                if depth >= 5 {
                    continue;
                }
                let mut sub = Vec::new();
                gen_message(r, s, f.sub as usize, depth + 1, budget, &mut sub);
                tag(out, f.number, 2);
                put_varint(out, sub.len() as u64);
                out.extend_from_slice(&sub);
            }
            Kind::Group => {
                if depth >= 5 {
                    continue;
                }
                tag(out, f.number, 3);
                gen_message(r, s, f.sub as usize, depth + 1, budget, out);
                tag(out, f.number, 4);
            }
            Kind::String | Kind::Bytes => {
                let b = rand_bytes(r, f.kind == Kind::String);
                tag(out, f.number, 2);
                put_varint(out, b.len() as u64);
                out.extend_from_slice(&b);
            }
            _ => {
                if f.is_repeated() && r.chance(50) {
                    let mut body = Vec::new();
                    for _ in 0..r.below(6) {
                        scalar_value(r, s, f, &mut body);
                    }
                    tag(out, f.number, 2);
                    put_varint(out, body.len() as u64);
                    out.extend_from_slice(&body);
                } else {
                    tag(out, f.number, f.kind.wire_type());
                    scalar_value(r, s, f, out);
                }
            }
        }
    }
}

pub fn mutate(r: &mut Rng, v: &[u8]) -> Vec<u8> {
    let mut m = v.to_vec();
    match r.below(5) {
        0 => m.truncate(r.below(v.len() as u64 + 1) as usize),
        1 | 2 => {
            for _ in 0..1 + r.below(3) {
                if !m.is_empty() {
                    let i = r.below(m.len() as u64) as usize;
                    m[i] = match r.below(4) {
                        0 => r.next() as u8,
                        1 => m[i] ^ (1 << r.below(8)),
                        2 => 0xff,
                        _ => m[i].wrapping_add(1),
                    };
                }
            }
        }
        3 => {
            let i = r.below(m.len() as u64 + 1) as usize;
            let junk: Vec<u8> = (0..1 + r.below(4)).map(|_| r.next() as u8).collect();
            m.splice(i..i, junk);
        }
        _ => {
            let i = r.below(m.len() as u64 + 1) as usize;
            m.splice(i..i, [0x80u8; 11].iter().copied().take(1 + r.below(11) as usize));
        }
    }
    m
}

pub fn schema(path: &str, includes: &[&str], layout: LayoutOptions) -> Option<CompiledSchema> {
    let r = root();
    let inc: Vec<PathBuf> = includes.iter().map(|i| r.join(i)).collect();
    match heapwire_schema::compile_files(&[r.join(path)], &inc, layout) {
        Ok(s) => Some(s),
        Err(e) => {
            eprintln!("skipping {path}: {e}");
            None
        }
    }
}

/// The first `max` messages of a delimited stream.
pub fn read_delimited(data: &[u8], max: usize) -> Vec<Vec<u8>> {
    let mut stream = Delimited::new(data);
    let mut out = Vec::new();
    while out.len() < max {
        match stream.next_frame().expect("a well-formed delimited stream") {
            Some(m) => out.push(m.bytes.to_vec()),
            None => break,
        }
    }
    out
}

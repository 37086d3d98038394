//! Object graphs as JSON, readable and round-trippable:
//!
//! ```text
//! {"objects": [
//!   {"@id": 0, "@type": "expr.Operation", "left": {"@ref": 1}, "right": {"@ref": 2}, "type": "ADDITION"},
//!   {"@id": 1, "@type": "expr.Literal", "left": null, "right": null, "value": 3},
//!   ...
//! ]}
//! ```
//!
//! Objects in wire order (object 0 is the root); members by their proto3 JSON names,
//! values as the proto3 JSON mapping prints them (64-bit integers as strings, enums by
//! name, "NaN"/"Infinity"); references as `{"@ref": id}` or `null`. Both directions
//! are flat loops (no recursion): a graph is a list. The text is read by the crate's one
//! lexer (`lexer.rs`) in its object-graph dialect, which keeps this parser's own
//! leniencies (numbers checked only when converted) and error offsets.

use heapwire_schema::{CompiledSchema, Kind, NONE};

use std::ops::Deref;

use heapwire_cpu::objgraph::{fits, Conv, ObjDecoder, Tables, NULL_REF};

use crate::lexer::{Dialect, LexError, Lexer, Tok};
use crate::write;

fn read_le(b: &[u8], at: usize, size: usize) -> u64 {
    let mut x = [0u8; 8];
    x[..size].copy_from_slice(&b[at..at + size]);
    u64::from_le_bytes(x)
}

fn push_f64(out: &mut Vec<u8>, v: f64) {
    match write::non_finite(v) {
        Some(t) => out.extend_from_slice(t),
        None => out.extend_from_slice(format!("{v}").as_bytes()),
    }
}

fn push_str(out: &mut Vec<u8>, s: &str) {
    write::string(out, s.as_bytes(), false);
}

/// Prints the graph the decoder last decoded into `image` (placed at `base`).
pub fn print_json<S: Deref<Target = CompiledSchema>>(dec: &ObjDecoder<S>, image: &[u8], base: u64, out: &mut Vec<u8>) {
    let s = dec.schema();
    let t = dec.tables();
    let pw = t.ptr as usize;
    // Object offsets are ascending (contiguous allocation): pointer → id by binary search.
    let offs: Vec<u64> = dec.objects().map(|(_, o)| o as u64).collect();
    out.extend_from_slice(b"{\"objects\": [");
    for (id, (c, o)) in dec.objects().enumerate() {
        out.extend_from_slice(if id == 0 { b"\n  {\"@id\": " } else { b",\n  {\"@id\": " });
        out.extend_from_slice(id.to_string().as_bytes());
        out.extend_from_slice(b", \"@type\": ");
        let cls = &s.classes[c];
        push_str(out, &s.messages[cls.message as usize].full_name);
        for (m, op) in cls.members.iter().zip(&t.classes[c].ops) {
            let f = s.member_field(m);
            out.extend_from_slice(b", ");
            push_str(out, &f.json_name);
            out.extend_from_slice(b": ");
            let v = read_le(image, o + op.offset as usize, op.size as usize);
            match (op.conv, f.kind) {
                (Conv::Ref(_), _) => {
                    let v = read_le(image, o + op.offset as usize, pw);
                    match v.checked_sub(base).and_then(|x| offs.binary_search(&x).ok()) {
                        Some(id) if v != 0 => {
                            out.extend_from_slice(b"{\"@ref\": ");
                            out.extend_from_slice(id.to_string().as_bytes());
                            out.push(b'}');
                        }
                        _ => out.extend_from_slice(b"null"),
                    }
                }
                (_, Kind::Bool) => out.extend_from_slice(if v != 0 { b"true" } else { b"false" }),
                (_, Kind::Float) => push_f64(out, f32::from_bits(v as u32) as f64),
                (_, Kind::Double) => push_f64(out, f64::from_bits(v)),
                (_, Kind::Enum) => {
                    let n = v as u32 as i32;
                    match s.enums.get(f.sub as usize).and_then(|e| e.name_of(n)) {
                        Some(name) => push_str(out, name),
                        None => out.extend_from_slice(n.to_string().as_bytes()),
                    }
                }
                (_, Kind::Int64 | Kind::SInt64 | Kind::SFixed64) => push_str(out, &(v as i64).to_string()),
                (_, Kind::UInt64 | Kind::Fixed64) => push_str(out, &v.to_string()),
                (Conv::Signed, _) => out.extend_from_slice((v as u32 as i32).to_string().as_bytes()),
                _ => out.extend_from_slice((v as u32).to_string().as_bytes()),
            }
        }
        out.push(b'}');
    }
    out.extend_from_slice(if dec.objects().len() == 0 { b"]}\n" } else { b"\n]}\n" });
}

/// A JSON input rejected: a kind (`invalid_json`, `unknown_type`, `unknown_field`,
/// `bad_value`, `value_out_of_range`, `bad_reference`, `reference_type`, `root_type`)
/// and the byte offset in the text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JsonError {
    pub kind: &'static str,
    pub offset: usize,
}

impl std::fmt::Display for JsonError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} at byte {}", self.kind, self.offset)
    }
}

fn jerr<T>(kind: &'static str, offset: usize) -> Result<T, JsonError> {
    Err(JsonError { kind, offset })
}

/// Every lexer error is `invalid_json`, at the lexer's offset.
impl From<LexError> for JsonError {
    fn from(e: LexError) -> Self {
        JsonError { kind: "invalid_json", offset: e.offset }
    }
}

/// The next token, which must be `want`; its offset.
fn expect(lx: &mut Lexer<'_>, want: Tok) -> Result<usize, JsonError> {
    let (t, at) = lx.next()?;
    if t != want {
        return jerr("invalid_json", at);
    }
    Ok(at)
}

/// One parsed member value, before references are checked.
enum Val {
    Null,
    Ref(u64, usize),
    Bits(u64),
}

fn parse_int(s: &str, signed: bool, at: usize) -> Result<u64, JsonError> {
    let r = if signed { s.parse::<i64>().map(|v| v as u64).ok() } else { s.parse::<u64>().ok() };
    match r {
        Some(v) => Ok(v),
        None => {
            // Integral floats ("1e3", "5.0") as the proto3 JSON mapping accepts them.
            match s.parse::<f64>() {
                Ok(f) if f.fract() == 0.0 && f.abs() < 9.007_199_254_740_992e15 && (signed || f >= 0.0) => Ok(f as i64 as u64),
                _ => jerr("bad_value", at),
            }
        }
    }
}

/// A member of an object as read before its class is known: key, value offset, value
/// token, and for a reference object `{"@ref": n}` its number token and offset.
type RawMember = (String, usize, Tok, Option<(Tok, usize)>);

/// Parses a JSON graph and writes its objgraph wire bytes into `out`. Object 0 must
/// be of message `root_msg` (a class) or a subclass; ids are the list positions.
pub fn parse_json(schema: &CompiledSchema, t: &Tables, root_msg: usize, text: &str, out: &mut Vec<u8>) -> Result<(), JsonError> {
    out.clear();
    let root_class = schema.class_of(root_msg).map(|c| c as u32).unwrap_or(NONE);
    let mut lx = Lexer::new(text.as_bytes(), Dialect::Objgraph);
    // (class, values in member order, start offset)
    let mut objects: Vec<(u32, Vec<Val>, usize)> = Vec::new();
    expect(&mut lx, Tok::LBrace)?;
    match lx.next()? {
        (Tok::Str(k), _) if k == "objects" => {}
        (_, at) => return jerr("invalid_json", at),
    }
    expect(&mut lx, Tok::Colon)?;
    expect(&mut lx, Tok::LBrack)?;
    let mut first = true;
    loop {
        let (tok, at) = lx.next()?;
        match tok {
            Tok::RBrack => break,
            Tok::Comma if !first => {
                expect(&mut lx, Tok::LBrace)?;
            }
            Tok::LBrace if first => {}
            _ => return jerr("invalid_json", at),
        }
        first = false;
        let obj_at = at;
        // Keys in any order; "@type" must be known before members can be converted,
        // so members are kept as raw tokens until the object ends.
        let mut class: Option<u32> = None;
        let mut id_seen: Option<(u64, usize)> = None;
        let mut raw: Vec<RawMember> = Vec::new();
        let mut first_key = true;
        loop {
            let (tok, at) = lx.next()?;
            let key = match tok {
                Tok::RBrace if first_key => break,
                Tok::Str(k) if first_key => k,
                Tok::Comma if !first_key => match lx.next()? {
                    (Tok::Str(k), _) => k,
                    (_, at) => return jerr("invalid_json", at),
                },
                Tok::RBrace => break,
                _ => return jerr("invalid_json", at),
            };
            first_key = false;
            expect(&mut lx, Tok::Colon)?;
            let (v, vat) = lx.next()?;
            match key.as_str() {
                "@type" => {
                    let Tok::Str(name) = v else { return jerr("bad_value", vat) };
                    let ci = schema.message_index(&name).and_then(|m| schema.class_of(m)).map(|c| c as u32);
                    match ci {
                        Some(c) if t.classes[c as usize].type_id != NONE => class = Some(c),
                        _ => return jerr("unknown_type", vat),
                    }
                }
                "@id" => {
                    let Tok::Num(n) = v else { return jerr("bad_value", vat) };
                    id_seen = Some((parse_int(&n, false, vat)?, vat));
                }
                _ => {
                    // A reference object {"@ref": n}: read it whole now.
                    let inner = if v == Tok::LBrace {
                        match lx.next()? {
                            (Tok::Str(k), _) if k == "@ref" => {}
                            (_, at) => return jerr("invalid_json", at),
                        }
                        expect(&mut lx, Tok::Colon)?;
                        let (n, nat) = lx.next()?;
                        expect(&mut lx, Tok::RBrace)?;
                        Some((n, nat))
                    } else if matches!(v, Tok::LBrack | Tok::RBrace | Tok::RBrack | Tok::Colon | Tok::Comma | Tok::End) {
                        return jerr("invalid_json", vat);
                    } else {
                        None
                    };
                    raw.push((key, vat, v, inner));
                }
            }
        }
        let Some(c) = class else { return jerr("unknown_type", obj_at) };
        if let Some((id, at)) = id_seen {
            if id != objects.len() as u64 {
                return jerr("bad_value", at);
            }
        }
        let cls = &schema.classes[c as usize];
        let ct = &t.classes[c as usize];
        let mut vals: Vec<Val> = (0..ct.ops.len()).map(|_| Val::Null).collect();
        for (key, vat, v, inner) in raw {
            let Some(mi) = cls.members.iter().position(|m| {
                let f = schema.member_field(m);
                f.json_name == key || f.name == key
            }) else {
                return jerr("unknown_field", vat);
            };
            let f = schema.member_field(&cls.members[mi]);
            let op = ct.ops[mi];
            let val = match (op.conv, v, inner) {
                (_, Tok::Null, None) => Val::Null,
                (Conv::Ref(_), Tok::LBrace, Some((Tok::Num(n), nat))) => Val::Ref(parse_int(&n, false, nat)?, nat),
                (Conv::Ref(_), _, _) => return jerr("bad_value", vat),
                (_, _, Some(_)) => return jerr("bad_value", vat),
                (Conv::Bool, Tok::True, _) => Val::Bits(1),
                (Conv::Bool, Tok::False, _) => Val::Bits(0),
                (Conv::Bits, Tok::Num(n), _) | (Conv::Bits, Tok::Str(n), _) => {
                    let x: f64 = match n.as_str() {
                        "NaN" => f64::NAN,
                        "Infinity" => f64::INFINITY,
                        "-Infinity" => f64::NEG_INFINITY,
                        s => s.parse().map_err(|_| JsonError { kind: "bad_value", offset: vat })?,
                    };
                    Val::Bits(if f.kind == Kind::Float { (x as f32).to_bits() as u64 } else { x.to_bits() })
                }
                (Conv::Signed, Tok::Str(name), _) if f.kind == Kind::Enum => {
                    match schema.enums.get(f.sub as usize).and_then(|e| e.number_of(&name)) {
                        Some(n) => Val::Bits(n as i64 as u64),
                        None => return jerr("bad_value", vat),
                    }
                }
                (conv @ (Conv::Signed | Conv::Unsigned), Tok::Num(n) | Tok::Str(n), _) => {
                    let v = parse_int(&n, conv == Conv::Signed, vat)?;
                    // Must fit the member's size in memory.
                    let bits = 8 * op.size as u32;
                    let ok = bits == 64
                        || if conv == Conv::Signed {
                            let sv = v as i64;
                            sv >= -(1i64 << (bits - 1)) && sv < (1i64 << (bits - 1))
                        } else {
                            v >> bits == 0
                        };
                    if !ok {
                        return jerr("value_out_of_range", vat);
                    }
                    Val::Bits(v)
                }
                _ => return jerr("bad_value", vat),
            };
            // Members not on the wire may only hold their zero value.
            if op.wire == 0 && !matches!(val, Val::Null | Val::Bits(0)) {
                return jerr("bad_value", vat);
            }
            if let (Val::Bits(b), false) = (&val, matches!(op.conv, Conv::Ref(_))) {
                let mem_bits = 8 * op.size as u32;
                let b = if mem_bits < 64 { b & ((1u64 << mem_bits) - 1) } else { *b };
                if op.wire != 0 && !fits(b, op.size, op.wire, op.conv) {
                    return jerr("value_out_of_range", vat);
                }
            }
            vals[mi] = val;
        }
        if objects.is_empty() && !t.is_sub(c, root_class) {
            return jerr("root_type", obj_at);
        }
        objects.push((c, vals, obj_at));
    }
    expect(&mut lx, Tok::RBrace)?;
    let (end, at) = lx.next()?;
    if end != Tok::End {
        return jerr("invalid_json", at);
    }
    if objects.len() >= NULL_REF as usize {
        return jerr("value_out_of_range", 0);
    }
    out.extend_from_slice(&(objects.len() as u32).to_le_bytes());
    for (c, _, _) in &objects {
        out.extend_from_slice(&t.classes[*c as usize].type_id.to_le_bytes());
    }
    for (c, vals, _) in &objects {
        let ct = &t.classes[*c as usize];
        for (op, v) in ct.ops.iter().zip(vals) {
            if op.wire == 0 {
                continue;
            }
            match (op.conv, v) {
                (Conv::Ref(target), Val::Ref(r, at)) => {
                    if *r >= objects.len() as u64 {
                        return jerr("bad_reference", *at);
                    }
                    if !t.is_sub(objects[*r as usize].0, target) {
                        return jerr("reference_type", *at);
                    }
                    out.extend_from_slice(&(*r as u32).to_le_bytes());
                }
                (Conv::Ref(_), _) => out.extend_from_slice(&NULL_REF.to_le_bytes()),
                (_, Val::Bits(b)) => out.extend_from_slice(&b.to_le_bytes()[..op.wire as usize]),
                _ => out.extend_from_slice(&[0u8; 8][..op.wire as usize]),
            }
        }
    }
    Ok(())
}

//! Heap image → proto3 JSON, as the official libraries print by default (Python's
//! `json_format.MessageToJson` without options), in compact single-line form.
//!
//! * field names: `json_name` (lowerCamelCase); fields in field-number order;
//! * 64-bit integers as strings, 32-bit ones as numbers;
//! * `float`/`double`: `"NaN"`, `"Infinity"`, `"-Infinity"`, otherwise Python's
//!   `repr` of the value (shortest round-trip digits; `3.0`, `1e+20`, `1.5e-07`), with
//!   `float` fields first reduced to the shortest `%g` (≥ 6 digits) that round-trips
//!   through `f32`, as `json_format` does;
//! * bytes as standard base64 with padding; enums by name, unknown numbers as numbers;
//! * implicit-presence fields omitted when zero/empty (`-0.0` is not zero), explicit
//!   presence fields printed when set; empty repeated fields omitted;
//! * maps as objects (keys as strings; the last entry for a key wins);
//! * unknown fields are not printed.
//!
//! The walk uses an explicit stack with a depth limit, and a byte [`Budget`] so that
//! shared or cyclic pointers in an untrusted image give an error, not a blow-up.

use super::wkt::{duration_text, snake_to_camel, timestamp_text};
use super::{wkt, JsonError, Wkt};
use crate::write;
use base64::Engine;
use heapwire_image::{ArrayRef, Budget, ImageView};
use heapwire_schema::{CompiledSchema, Field, Kind};
use heapwire_cpu::protobuf::{DecodeOptions, Decoder};
use std::cell::RefCell;
use std::collections::HashMap;

#[derive(Clone, Debug)]
pub struct PrintOptions {
    /// Deepest nesting of messages (the root is depth 1) before `TooDeep`.
    pub max_depth: usize,
    /// Escape non-ASCII characters as `\uXXXX` (Python's `ensure_ascii`); off by
    /// default: UTF-8 is written as is.
    pub ensure_ascii: bool,
    /// Limit the traversal to the image's length in referenced bytes.
    pub budget: bool,
}

impl Default for PrintOptions {
    fn default() -> Self {
        PrintOptions { max_depth: 200, ensure_ascii: false, budget: true }
    }
}

/// Prints the message of type `msg_index` whose struct is at `root_offset` as JSON.
pub fn to_json(
    schema: &CompiledSchema,
    msg_index: usize,
    view: &ImageView<'_>,
    root_offset: usize,
) -> Result<String, JsonError> {
    let mut out = Vec::new();
    to_json_with(schema, msg_index, view, root_offset, &mut out, &PrintOptions::default())?;
    // Everything written is valid UTF-8: names come from the schema, proto2 strings that
    // are not UTF-8 are written as Python's bytes repr, such map keys are refused.
    Ok(String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()))
}

/// Appends the JSON to `out` (default options).
pub fn to_json_into(
    schema: &CompiledSchema,
    msg_index: usize,
    view: &ImageView<'_>,
    root_offset: usize,
    out: &mut Vec<u8>,
) -> Result<(), JsonError> {
    to_json_with(schema, msg_index, view, root_offset, out, &PrintOptions::default())
}

enum Frame {
    /// A message's object: next field index, whether a member was written.
    Msg { msg: usize, off: usize, fi: usize, first: bool },
    /// A repeated message field's array: next element. `counted`: opened as a
    /// `ListValue`, so it counts as a level of nesting.
    MsgArray { arr: ArrayRef, msg: usize, i: usize, counted: bool },
    /// A map field's object: the entries to print (last for each key), next one.
    /// `counted`: opened as a `Struct`.
    Map { msg: usize, arr: ArrayRef, entries: Vec<usize>, i: usize, counted: bool },
}

pub fn to_json_with(
    schema: &CompiledSchema,
    msg_index: usize,
    view: &ImageView<'_>,
    root_offset: usize,
    out: &mut Vec<u8>,
    opts: &PrintOptions,
) -> Result<(), JsonError> {
    let dec = RefCell::new(None);
    print_message(schema, msg_index, view, root_offset, out, opts, &dec)
}

/// [`to_json_with`] with the decoder for `Any` payloads (made on first use, shared by
/// the payloads of nested `Any`s).
fn print_message<'s>(
    schema: &'s CompiledSchema,
    msg_index: usize,
    view: &ImageView<'_>,
    root_offset: usize,
    out: &mut Vec<u8>,
    opts: &PrintOptions,
    dec: &RefCell<Option<Decoder<&'s CompiledSchema>>>,
) -> Result<(), JsonError> {
    let root = schema.messages.get(msg_index).ok_or(JsonError::BadType(msg_index))?;
    view.check_struct(root, root_offset)?;
    let mut budget = if opts.budget { Budget::for_view(view) } else { Budget::unlimited() };
    budget.charge(root.size as u64, root_offset)?;
    let p = Printer { schema, view, opts, dec };
    let mut stack = Vec::new();
    let mut depth = 0usize; // nesting levels on the stack
    p.open(msg_index, Some(root_offset), &mut stack, &mut depth, out, &mut budget)?;

    'frames: while let Some(top) = stack.last_mut() {
        match top {
            Frame::Msg { msg, off, fi, first } => {
                let m = &schema.messages[*msg];
                while *fi < m.fields.len() {
                    let f = &m.fields[*fi];
                    *fi += 1;
                    if !view.has(m, f, *off)? {
                        continue;
                    }
                    let sep = !*first;
                    let off = *off;
                    if f.is_repeated() {
                        let arr = view.repeated(schema, f, off)?;
                        budget.charge(arr.byte_len() as u64, arr.offset)?;
                        if arr.is_empty() {
                            continue;
                        }
                        *first = false;
                        p.key(out, sep, &f.json_name);
                        if f.is_map() {
                            let entries = p.map_entries(f, arr, &mut budget)?;
                            out.push(b'{');
                            stack.push(Frame::Map { msg: f.sub as usize, arr, entries, i: 0, counted: false });
                            continue 'frames;
                        }
                        out.push(b'[');
                        if f.kind.is_message() {
                            stack.push(Frame::MsgArray { arr, msg: f.sub as usize, i: 0, counted: false });
                            continue 'frames;
                        }
                        for i in 0..arr.count {
                            if i > 0 {
                                out.push(b',');
                            }
                            p.value(out, f, arr.element(i), &mut budget)?;
                        }
                        out.push(b']');
                        continue;
                    }
                    *first = false;
                    p.key(out, sep, &f.json_name);
                    if f.kind.is_message() {
                        let sub = view.sub_message(schema, f, off)?;
                        if let Some(sub) = sub {
                            budget.charge(schema.messages[f.sub as usize].size as u64, sub)?;
                        }
                        p.open(f.sub as usize, sub, &mut stack, &mut depth, out, &mut budget)?;
                        continue 'frames;
                    }
                    let slot = view.slot(f, off)?;
                    p.value(out, f, slot, &mut budget)?;
                }
                out.push(b'}');
                depth -= 1;
                stack.pop();
            }
            Frame::MsgArray { arr, msg, i, counted } => {
                if *i < arr.count {
                    if *i > 0 {
                        out.push(b',');
                    }
                    let elem = arr.element(*i);
                    *i += 1;
                    let msg = *msg;
                    p.open(msg, Some(elem), &mut stack, &mut depth, out, &mut budget)?;
                    continue 'frames;
                }
                out.push(b']');
                if *counted {
                    depth -= 1;
                }
                stack.pop();
            }
            Frame::Map { msg, arr, entries, i, counted } => {
                if *i < entries.len() {
                    let entry = arr.element(entries[*i]);
                    if *i > 0 {
                        out.push(b',');
                    }
                    *i += 1;
                    let em = &schema.messages[*msg];
                    let (kf, vf) = map_fields(em, entry)?;
                    let key = p.map_key(kf, entry)?;
                    write::string(out, key.as_bytes(), opts.ensure_ascii);
                    out.push(b':');
                    if vf.kind.is_message() {
                        let sub = view.sub_message(schema, vf, entry)?;
                        if let Some(sub) = sub {
                            budget.charge(schema.messages[vf.sub as usize].size as u64, sub)?;
                        }
                        p.open(vf.sub as usize, sub, &mut stack, &mut depth, out, &mut budget)?;
                    } else {
                        let slot = view.slot(vf, entry)?;
                        p.value(out, vf, slot, &mut budget)?;
                    }
                    continue 'frames;
                }
                out.push(b'}');
                if *counted {
                    depth -= 1;
                }
                stack.pop();
            }
        }
    }
    Ok(())
}

fn enter(depth: usize, opts: &PrintOptions, off: usize) -> Result<usize, JsonError> {
    if depth >= opts.max_depth {
        return Err(JsonError::TooDeep { limit: opts.max_depth, at: "image offset", offset: off as u64 });
    }
    Ok(depth + 1)
}

/// A map entry type's key (field 1) and value (field 2).
fn map_fields(em: &heapwire_schema::Message, at: usize) -> Result<(&Field, &Field), JsonError> {
    match (em.fields.first(), em.fields.get(1)) {
        (Some(k), Some(v)) if k.number == 1 && v.number == 2 => Ok((k, v)),
        _ => Err(JsonError::Image(heapwire_image::ViewError {
            kind: heapwire_image::ViewErrorKind::OutOfBounds { what: "map entry type", len: 0 },
            offset: at as u64,
        })),
    }
}

struct Printer<'a, 'b, 's> {
    schema: &'s CompiledSchema,
    view: &'a ImageView<'b>,
    opts: &'a PrintOptions,
    dec: &'a RefCell<Option<Decoder<&'s CompiledSchema>>>,
}

impl Printer<'_, '_, '_> {
    /// Starts printing a message value of type `msg` whose struct is at `off` (`None`:
    /// a null pointer for a value that is set, printed as the default instance): writes
    /// it whole (well-known scalar-like types) or its opening and pushes its frame.
    fn open(
        &self,
        msg: usize,
        off: Option<usize>,
        stack: &mut Vec<Frame>,
        depth: &mut usize,
        out: &mut Vec<u8>,
        budget: &mut Budget,
    ) -> Result<(), JsonError> {
        let (s, v) = (self.schema, self.view);
        let m = &s.messages[msg];
        let at = off.unwrap_or(0) as u64;
        let kind = if m.is_map_entry() { None } else { wkt(&m.full_name) };
        let field = |n: u32| m.field_index(n).map(|i| &m.fields[i]);
        let bad = |what: String| JsonError::Value { path: m.full_name.clone(), offset: at as usize, msg: what };
        // An int field of this message, 0 when absent.
        let int = |n: u32| -> Result<i64, JsonError> {
            match (field(n), off) {
                (Some(f), Some(o)) => {
                    let slot = v.slot(f, o)?;
                    Ok(match f.kind.scalar_size() {
                        Some(8) => v.i64_at(slot)?,
                        _ => v.i32_at(slot)? as i64,
                    })
                }
                _ => Ok(0),
            }
        };
        match kind {
            None => match off {
                None => out.extend_from_slice(b"{}"),
                Some(o) => {
                    *depth = enter(*depth, self.opts, o)?;
                    out.push(b'{');
                    stack.push(Frame::Msg { msg, off: o, fi: 0, first: true });
                }
            },
            Some(Wkt::Wrapper) => match (field(1), off) {
                (Some(f), Some(o)) => {
                    let slot = v.slot(f, o)?;
                    self.value(out, f, slot, budget)?;
                }
                (Some(f), None) => out.extend_from_slice(match f.kind {
                    Kind::Int64 | Kind::UInt64 => b"\"0\"" as &[u8],
                    Kind::Float | Kind::Double => b"0.0",
                    Kind::Bool => b"false",
                    Kind::String | Kind::Bytes => b"\"\"",
                    _ => b"0",
                }),
                _ => return Err(bad("bad wrapper type".into())),
            },
            Some(Wkt::Timestamp) => {
                let t = timestamp_text(int(1)?, int(2)?).map_err(bad)?;
                write::string(out, t.as_bytes(), false);
            }
            Some(Wkt::Duration) => {
                let t = duration_text(int(1)?, int(2)?).map_err(bad)?;
                write::string(out, t.as_bytes(), false);
            }
            Some(Wkt::FieldMask) => {
                let mut text = String::new();
                if let (Some(f), Some(o)) = (field(1), off) {
                    let arr = v.repeated(s, f, o)?;
                    budget.charge(arr.byte_len() as u64, arr.offset)?;
                    for i in 0..arr.count {
                        let path = v.slice_at(arr.element(i), "field mask path")?;
                        budget.charge(path.len() as u64, arr.element(i))?;
                        if i > 0 {
                            text.push(',');
                        }
                        snake_to_camel(&String::from_utf8_lossy(path), &mut text).map_err(bad)?;
                    }
                }
                write::string(out, text.as_bytes(), self.opts.ensure_ascii);
            }
            Some(Wkt::Struct) | Some(Wkt::ListValue) => {
                let f = field(1).ok_or_else(|| bad("bad Struct/ListValue type".into()))?;
                let arr = match off {
                    Some(o) => v.repeated(s, f, o)?,
                    None => ArrayRef::EMPTY,
                };
                budget.charge(arr.byte_len() as u64, arr.offset)?;
                *depth = enter(*depth, self.opts, at as usize)?;
                if kind == Some(Wkt::Struct) {
                    let entries = if f.is_map() { self.map_entries(f, arr, budget)? } else { Vec::new() };
                    out.push(b'{');
                    stack.push(Frame::Map { msg: f.sub as usize, arr, entries, i: 0, counted: true });
                } else {
                    out.push(b'[');
                    stack.push(Frame::MsgArray { arr, msg: f.sub as usize, i: 0, counted: true });
                }
            }
            Some(Wkt::Any) => {
                let (Some(tf), Some(vf)) = (field(1), field(2)) else {
                    return Err(bad("bad Any type".into()));
                };
                let Some(o) = off else {
                    out.extend_from_slice(b"{}");
                    return Ok(());
                };
                let (url, payload) = (v.string(tf, o)?, v.string(vf, o)?);
                budget.charge((url.len() + payload.len()) as u64, o)?;
                if url.is_empty() && payload.is_empty() {
                    // No field set: the official printer writes `{}`.
                    out.extend_from_slice(b"{}");
                    return Ok(());
                }
                let d = enter(*depth, self.opts, o)?;
                self.any(&String::from_utf8_lossy(url), payload, d, out)?;
            }
            Some(Wkt::Value) => {
                let case = match (m.oneofs.is_empty(), off) {
                    (false, Some(o)) => v.oneof_case(m, o, 0)?,
                    _ => 0,
                };
                let Some(o) = off.filter(|_| case != 0 && case != 1) else {
                    out.extend_from_slice(b"null");
                    return Ok(());
                };
                let f = field(case).ok_or_else(|| bad(format!("Value with unknown case {case}")))?;
                match case {
                    2 => {
                        let n = v.f64_at(v.slot(f, o)?)?;
                        if !n.is_finite() {
                            return Err(bad("fail to serialize NaN or Infinity for Value.number_value".into()));
                        }
                        out.extend_from_slice(fmt_f64(n).as_bytes());
                    }
                    3 | 4 => {
                        let slot = v.slot(f, o)?;
                        self.value(out, f, slot, budget)?;
                    }
                    _ => {
                        let sub = v.sub_message(s, f, o)?;
                        if let Some(sub) = sub {
                            budget.charge(s.messages[f.sub as usize].size as u64, sub)?;
                        }
                        return self.open(f.sub as usize, sub, stack, depth, out, budget);
                    }
                }
            }
        }
        Ok(())
    }

    /// An `Any` with type URL `url` and payload `payload`, at nesting `depth`, as the
    /// official printer writes it: the URL's last path segment names a message of the
    /// schema; the payload is decoded as that type (an error if it does not parse), then
    /// printed as `{"@type": url, ...its fields}`, or `{"@type": url, "value": ...}` for
    /// a well-known type with a special form (the wrappers, Timestamp, Any, ...).
    fn any(&self, url: &str, payload: &[u8], depth: usize, out: &mut Vec<u8>) -> Result<(), JsonError> {
        let s = self.schema;
        let name = url.rsplit('/').next().unwrap_or(url);
        let fail = |msg: String| JsonError::Value { path: format!("Any({url})"), offset: 0, msg };
        let mi = s
            .messages
            .iter()
            .position(|m| m.full_name == name)
            .ok_or_else(|| fail(format!("Can not find message descriptor by type_url: {url}")))?;
        let mut image = Vec::new();
        {
            let mut cell = self.dec.borrow_mut();
            let dec = cell.get_or_insert_with(|| Decoder::new(s));
            dec.decode(mi, payload, &DecodeOptions::default(), &mut image).map_err(|e| {
                fail(format!("the Any value does not parse as {name}: {} at byte {} of the value", e.kind.name(), e.offset))
            })?;
        }
        let view = ImageView::for_schema(s, &image, 0);
        let opts = PrintOptions { max_depth: self.opts.max_depth.saturating_sub(depth), ..self.opts.clone() };
        let mut body = Vec::new();
        print_message(s, mi, &view, 0, &mut body, &opts, self.dec)?;
        out.extend_from_slice(b"{\"@type\":");
        write::string(out, url.as_bytes(), self.opts.ensure_ascii);
        if wkt(name).is_some() && !s.messages[mi].is_map_entry() {
            out.extend_from_slice(b",\"value\":");
            out.extend_from_slice(&body);
            out.push(b'}');
        } else if body.len() > 2 {
            out.push(b',');
            out.extend_from_slice(&body[1..]);
        } else {
            out.push(b'}');
        }
        Ok(())
    }

    fn key(&self, out: &mut Vec<u8>, sep: bool, name: &str) {
        if sep {
            out.push(b',');
        }
        write::string(out, name.as_bytes(), self.opts.ensure_ascii);
        out.push(b':');
    }

    /// Indices of the entries to print: the last one for each key, in the order of
    /// those last entries.
    fn map_entries(&self, f: &Field, arr: ArrayRef, budget: &mut Budget) -> Result<Vec<usize>, JsonError> {
        let em = &self.schema.messages[f.sub as usize];
        let mut last: HashMap<String, usize> = HashMap::with_capacity(arr.count);
        let mut keys = Vec::with_capacity(arr.count);
        for i in 0..arr.count {
            let entry = arr.element(i);
            let (kf, _) = map_fields(em, entry)?;
            if kf.kind.is_string_like() {
                let s = self.view.string(kf, entry)?;
                budget.charge(s.len() as u64, entry)?;
                if kf.kind == Kind::String && std::str::from_utf8(s).is_err() {
                    // The field's full name: the entry type's scope is the map's message.
                    let scope = em.full_name.rsplit_once('.').map_or("", |(p, _)| p);
                    let field = format!("{scope}.{}", f.name);
                    return Err(JsonError::InvalidUtf8 { field, offset: self.view.slot(kf, entry)? as u64 });
                }
            }
            let k = self.map_key(kf, entry)?;
            last.insert(k.clone(), i);
            keys.push(k);
        }
        Ok(keys.iter().enumerate().filter(|(i, k)| last[*k] == *i).map(|(i, _)| i).collect())
    }

    /// A map key as its JSON object key text (unescaped); string keys were checked for
    /// UTF-8 by [`Printer::map_entries`].
    fn map_key(&self, kf: &Field, entry: usize) -> Result<String, JsonError> {
        let v = self.view;
        let slot = v.slot(kf, entry)?;
        Ok(match kf.kind {
            Kind::String | Kind::Bytes => String::from_utf8_lossy(v.slice_at(slot, "map key")?).into_owned(),
            Kind::Bool => if v.u8_at(slot)? != 0 { "true" } else { "false" }.to_string(),
            Kind::Int32 | Kind::SInt32 | Kind::SFixed32 | Kind::Enum => v.i32_at(slot)?.to_string(),
            Kind::UInt32 | Kind::Fixed32 => v.u32_at(slot)?.to_string(),
            Kind::Int64 | Kind::SInt64 | Kind::SFixed64 => v.i64_at(slot)?.to_string(),
            Kind::UInt64 | Kind::Fixed64 => v.u64_at(slot)?.to_string(),
            Kind::Float => fmt_f32(v.f32_at(slot)?),
            Kind::Double => fmt_f64(v.f64_at(slot)?),
            Kind::Message | Kind::Group => String::new(),
        })
    }

    /// Writes one non-message value of field `f` stored at image offset `at`.
    fn value(&self, out: &mut Vec<u8>, f: &Field, at: usize, budget: &mut Budget) -> Result<(), JsonError> {
        let v = self.view;
        match f.kind {
            Kind::Int32 | Kind::SInt32 | Kind::SFixed32 => push_display(out, v.i32_at(at)?),
            Kind::UInt32 | Kind::Fixed32 => push_display(out, v.u32_at(at)?),
            Kind::Int64 | Kind::SInt64 | Kind::SFixed64 => {
                out.push(b'"');
                push_display(out, v.i64_at(at)?);
                out.push(b'"');
            }
            Kind::UInt64 | Kind::Fixed64 => {
                out.push(b'"');
                push_display(out, v.u64_at(at)?);
                out.push(b'"');
            }
            Kind::Bool => out.extend_from_slice(if v.u8_at(at)? != 0 { b"true" } else { b"false" }),
            Kind::Float => float_json(out, v.f32_at(at)? as f64, Some(v.f32_at(at)?)),
            Kind::Double => float_json(out, v.f64_at(at)?, None),
            Kind::String => {
                let s = v.slice_at(at, "string")?;
                budget.charge(s.len() as u64, at)?;
                if std::str::from_utf8(s).is_ok() {
                    write::string(out, s, self.opts.ensure_ascii);
                } else {
                    // Only proto2 strings can hold invalid UTF-8; the official Python
                    // library prints them as the `repr` of the bytes (`"b'a\\xffb'"`).
                    write::string(out, python_bytes_repr(s).as_bytes(), self.opts.ensure_ascii);
                }
            }
            Kind::Bytes => {
                let s = v.slice_at(at, "bytes")?;
                budget.charge(s.len() as u64, at)?;
                out.push(b'"');
                let start = out.len();
                out.resize(start + s.len().div_ceil(3) * 4, 0);
                let n = base64::engine::general_purpose::STANDARD.encode_slice(s, &mut out[start..]).unwrap_or(0);
                out.truncate(start + n);
                out.push(b'"');
            }
            Kind::Enum => {
                let n = v.i32_at(at)?;
                let en = self.schema.enums.get(f.sub as usize);
                if en.is_some_and(|e| e.full_name == "google.protobuf.NullValue") {
                    out.extend_from_slice(b"null");
                    return Ok(());
                }
                match self.schema.enums.get(f.sub as usize).and_then(|e| e.name_of(n)) {
                    Some(name) => write::string(out, name.as_bytes(), false),
                    None => push_display(out, n),
                }
            }
            Kind::Message | Kind::Group => out.extend_from_slice(b"{}"),
        }
        Ok(())
    }
}

fn push_display(out: &mut Vec<u8>, v: impl std::fmt::Display) {
    use std::io::Write;
    let _ = write!(out, "{v}");
}

fn float_json(out: &mut Vec<u8>, v: f64, as_f32: Option<f32>) {
    if let Some(t) = write::non_finite(v) {
        out.extend_from_slice(t);
        return;
    }
    let s = match as_f32 {
        Some(f) => fmt_f32(f),
        None => fmt_f64(v),
    };
    out.extend_from_slice(s.as_bytes());
}

/// Python's `repr(float)`: shortest round-trip digits; positional notation for
/// decimal exponents -5 < e < 16 (with `.0` when integral), else `d.ddde±XX`.
pub fn fmt_f64(v: f64) -> String {
    if v.is_nan() {
        return "nan".into();
    }
    if v.is_infinite() {
        return if v > 0.0 { "inf".into() } else { "-inf".into() };
    }
    let sci = format!("{v:e}"); // e.g. "-1.2345e-7", "0e0"
    let (mant, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let (neg, mant) = match mant.strip_prefix('-') {
        Some(m) => (true, m),
        None => (false, mant),
    };
    let digits: String = mant.chars().filter(|c| *c != '.').collect();
    let mut s = String::with_capacity(digits.len() + 8);
    if neg {
        s.push('-');
    }
    if !(-5 < exp && exp < 16) {
        s.push_str(&digits[..1]);
        if digits.len() > 1 {
            s.push('.');
            s.push_str(&digits[1..]);
        }
        s.push('e');
        s.push(if exp < 0 { '-' } else { '+' });
        let a = exp.unsigned_abs();
        if a < 10 {
            s.push('0');
        }
        s.push_str(&a.to_string());
    } else if exp >= 0 {
        let int_len = exp as usize + 1;
        if digits.len() <= int_len {
            s.push_str(&digits);
            s.extend(std::iter::repeat_n('0', int_len - digits.len()));
            s.push_str(".0");
        } else {
            s.push_str(&digits[..int_len]);
            s.push('.');
            s.push_str(&digits[int_len..]);
        }
    } else {
        s.push_str("0.");
        s.extend(std::iter::repeat_n('0', (-exp - 1) as usize));
        s.push_str(&digits);
    }
    s
}

/// A `float` value as `json_format` prints it: the shortest `%.{p}g` (p ≥ 6) that
/// round-trips through `f32`, then `repr` of that double.
pub fn fmt_f32(v: f32) -> String {
    if !v.is_finite() {
        return fmt_f64(v as f64);
    }
    for p in 6..=9usize {
        let s = format!("{:.*e}", p - 1, v as f64);
        if let Ok(d) = s.parse::<f64>() {
            if (d as f32).to_bits() == v.to_bits() {
                return fmt_f64(d);
            }
        }
    }
    fmt_f64(v as f64)
}

/// Python's `repr(bytes)`: `b'...'` (or `b"..."` when only `'` occurs), `\\t \\n \\r`,
/// `\\xhh` for other control and non-ASCII bytes.
pub fn python_bytes_repr(b: &[u8]) -> String {
    let quote = if b.contains(&b'\'') && !b.contains(&b'"') { b'"' } else { b'\'' };
    let mut s = String::with_capacity(b.len() + 3);
    s.push('b');
    s.push(quote as char);
    for &c in b {
        match c {
            b'\\' => s.push_str("\\\\"),
            b'\t' => s.push_str("\\t"),
            b'\n' => s.push_str("\\n"),
            b'\r' => s.push_str("\\r"),
            c if c == quote => {
                s.push('\\');
                s.push(c as char);
            }
            0x20..=0x7e => s.push(c as char),
            c => s.push_str(&format!("\\x{c:02x}")),
        }
    }
    s.push(quote as char);
    s
}

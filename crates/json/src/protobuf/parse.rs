//! proto3 JSON → protobuf wire bytes, driven by the compiled schema
//! (`encode --from-json`).
//!
//! Accepts what the official Python parser (`json_format.Parse`, protobuf 7.x) accepts
//! by default: `json_name` or the original field name; integers as numbers (integral
//! floats such as `1.0` or `1e2` too) or as strings; `"NaN"`, `"Infinity"`,
//! `"-Infinity"` and numeric strings for floats; enum names or numbers; base64 in the
//! standard or URL-safe alphabet, padded or not; `null` for "absent"; maps as objects.
//! Well-known types in their special forms: Timestamp, Duration and FieldMask strings
//! (`wkt.rs`, with the Python parser's leniencies), wrappers as bare values, Struct /
//! ListValue / Value from any JSON (`null` is a Value, also inside arrays and as a map
//! value), `null` for NullValue, Any as `{"@type": url, ...fields}` or, for a type with
//! a special form, `{"@type": url, "value": ...}` (the URL's last segment must name a
//! message of the schema). An empty array or string is an empty (regular) message, as
//! the official parser iterates over the keys of whatever it is given.
//! Rejects: unknown field names (skipped with [`ParseOptions::ignore_unknown_fields`], as
//! are unknown enum names), duplicate keys in an object, two members of one oneof,
//! out-of-range numbers (a `float` above FLT_MAX, though a JSON integer for a `float`
//! only rounds), non-integral numbers for integers, `null` inside arrays and as a map
//! value (except for Value), closed-enum values the enum does not have, wrong JSON types.
//!
//! Output: fields in field-number order; repeated scalars packed when the schema says
//! packed; implicit-presence fields left out when they hold the default; map entries as
//! messages with both key (1) and value (2), as the official encoders write them.
//!
//! The JSON text is read by the crate's one lexer (`lexer.rs`, in its proto3 dialect)
//! into a tree without recursion (nesting limited to
//! [`ParseOptions::max_json_nesting`]); the conversion recurses once per message level,
//! limited to [`ParseOptions::max_depth`] (100, as the official parser).

use super::wkt::{camel_to_snake, parse_duration, parse_timestamp, py_float, py_int};
use super::{wkt, JsonError, Wkt};
use crate::lexer::{Dialect, LexError, LexErrorKind, Lexer, Tok};
use heapwire_cpu::protobuf::wire::{enc_zigzag32, enc_zigzag64, put_varint};
use heapwire_schema::{wire_type, CompiledSchema, Field, Kind, Message, Presence};

#[derive(Clone, Debug)]
pub struct ParseOptions {
    /// Deepest nesting of messages (the root is depth 1), as the official parser's
    /// `max_recursion_depth`.
    pub max_depth: usize,
    /// Deepest nesting of JSON arrays and objects.
    pub max_json_nesting: usize,
    /// Skip members that name no field and enum names the enum does not have, as the
    /// official parser's `ignore_unknown_fields` (a bracketed name in a message without
    /// extension ranges is still an error, as there).
    pub ignore_unknown_fields: bool,
}

impl Default for ParseOptions {
    fn default() -> Self {
        ParseOptions { max_depth: 100, max_json_nesting: 1000, ignore_unknown_fields: false }
    }
}

/// Parses the JSON `text` as a message of type `msg_index` and appends its wire bytes
/// to `out`.
pub fn from_json(schema: &CompiledSchema, msg_index: usize, text: &[u8], out: &mut Vec<u8>) -> Result<(), JsonError> {
    from_json_with(schema, msg_index, text, out, &ParseOptions::default())
}

pub fn from_json_with(
    schema: &CompiledSchema,
    msg_index: usize,
    text: &[u8],
    out: &mut Vec<u8>,
    opts: &ParseOptions,
) -> Result<(), JsonError> {
    let m = schema.messages.get(msg_index).ok_or(JsonError::BadType(msg_index))?;
    let tree = parse_tree(text, opts.max_json_nesting)?;
    let conv = Conv { schema, opts };
    let short = m.full_name.rsplit('.').next().unwrap_or(&m.full_name).to_string();
    let mut path = short;
    conv.message(msg_index, &tree, &mut path, 1, out)
}

// ---------------------------------------------------------------------------------
// JSON tree

#[derive(Debug)]
enum JVal {
    Null,
    Bool(bool),
    /// The number's text, validated against the JSON grammar.
    Num(String),
    Str(String),
    Arr(Vec<Node>),
    Obj(Vec<(String, Node)>),
}

#[derive(Debug)]
struct Node {
    /// Byte offset of the value in the text.
    off: usize,
    v: JVal,
}

enum Building {
    Arr(usize, Vec<Node>),
    Obj(usize, Vec<(String, Node)>, std::collections::HashSet<String>, String),
}

fn syn(offset: usize, msg: impl Into<String>) -> JsonError {
    JsonError::Syntax { offset, msg: msg.into() }
}

/// `found` (the byte at `at`, `None` at the end of the text) where `what` should be.
fn unexpected((found, at): (Option<u8>, usize), what: &str) -> JsonError {
    match found {
        None => syn(at, format!("unexpected end of input, expected {what}")),
        Some(c) => syn(at, format!("unexpected {:?}, expected {what}", c as char)),
    }
}

/// A lexer error where a value (or a key, after its quote was seen) is read.
fn lex_error(text: &[u8], e: LexError) -> JsonError {
    match e.kind {
        LexErrorKind::Unexpected => unexpected((text.get(e.offset).copied(), e.offset), "a value"),
        k => syn(e.offset, k.message()),
    }
}

/// Tokenizes `text` into a tree, iteratively; duplicate object keys are errors (as
/// `json_format` rejects them). Where only some bytes may come next (a key, `:`, `,`
/// or a closing bracket), the byte is looked at before a token is read, so that the
/// error names what was expected there.
fn parse_tree(text: &[u8], max_nesting: usize) -> Result<Node, JsonError> {
    let mut lx = Lexer::new(text, Dialect::Proto3);
    let mut stack: Vec<Building> = Vec::new();
    'value: loop {
        let (tok, off) = lx.next().map_err(|e| lex_error(text, e))?;
        let mut node = match tok {
            Tok::LBrace | Tok::LBrack => {
                if stack.len() >= max_nesting {
                    return Err(syn(off, format!("JSON nested deeper than {max_nesting}")));
                }
                if tok == Tok::LBrace {
                    if lx.eat(b'}') {
                        Node { off, v: JVal::Obj(Vec::new()) }
                    } else {
                        let key = object_key(&mut lx, text)?;
                        stack.push(Building::Obj(off, Vec::new(), Default::default(), key));
                        continue 'value;
                    }
                } else if lx.eat(b']') {
                    Node { off, v: JVal::Arr(Vec::new()) }
                } else {
                    stack.push(Building::Arr(off, Vec::new()));
                    continue 'value;
                }
            }
            Tok::Str(s) => Node { off, v: JVal::Str(s) },
            Tok::Num(t) => Node { off, v: JVal::Num(t) },
            Tok::True => Node { off, v: JVal::Bool(true) },
            Tok::False => Node { off, v: JVal::Bool(false) },
            Tok::Null => Node { off, v: JVal::Null },
            Tok::RBrace | Tok::RBrack | Tok::Colon | Tok::Comma | Tok::End => {
                return Err(unexpected((text.get(off).copied(), off), "a value"));
            }
        };
        // A complete value: attach it, closing finished containers.
        loop {
            match stack.last_mut() {
                None => {
                    let (rest, at) = lx.peek();
                    if rest.is_some() {
                        return Err(syn(at, "trailing data after the JSON value"));
                    }
                    return Ok(node);
                }
                Some(Building::Arr(_, items)) => {
                    items.push(node);
                    if lx.eat(b',') {
                        continue 'value;
                    }
                    if !lx.eat(b']') {
                        return Err(unexpected(lx.peek(), "',' or ']'"));
                    }
                    let Some(Building::Arr(o, items)) = stack.pop() else { unreachable!() };
                    node = Node { off: o, v: JVal::Arr(items) };
                }
                Some(Building::Obj(_, members, seen, key)) => {
                    let k = std::mem::take(key);
                    if !seen.insert(k.clone()) {
                        return Err(syn(node.off, format!("duplicate key {k:?}")));
                    }
                    members.push((k, node));
                    if lx.eat(b',') {
                        *key = object_key(&mut lx, text)?;
                        continue 'value;
                    }
                    if !lx.eat(b'}') {
                        return Err(unexpected(lx.peek(), "',' or '}'"));
                    }
                    let Some(Building::Obj(o, members, _, _)) = stack.pop() else { unreachable!() };
                    node = Node { off: o, v: JVal::Obj(members) };
                }
            }
        }
    }
}

/// An object's key and the `:` after it.
fn object_key(lx: &mut Lexer<'_>, text: &[u8]) -> Result<String, JsonError> {
    let next = lx.peek();
    if next.0 != Some(b'"') {
        return Err(unexpected(next, "a string key"));
    }
    let (Tok::Str(k), _) = lx.next().map_err(|e| lex_error(text, e))? else { unreachable!("a quote starts a string") };
    if !lx.eat(b':') {
        return Err(unexpected(lx.peek(), "':'"));
    }
    Ok(k)
}

// ---------------------------------------------------------------------------------
// Schema-driven conversion

struct Conv<'a> {
    schema: &'a CompiledSchema,
    opts: &'a ParseOptions,
}

/// What became of one JSON member.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Outcome {
    Present,
    /// Absent (`null`, or a default value without presence): clears an earlier member
    /// for the same field.
    Absent,
    /// Skipped as unknown (`ignore_unknown_fields`): changes nothing.
    Ignored,
}

impl Outcome {
    fn present(p: bool) -> Self {
        if p {
            Outcome::Present
        } else {
            Outcome::Absent
        }
    }
}

/// `[pkg.ext]`: how JSON names an extension (the official parser's pattern).
fn is_extension_name(name: &str) -> bool {
    name.strip_prefix('[')
        .and_then(|n| n.strip_suffix(']'))
        .is_some_and(|n| n.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'.' || c == b'_'))
}

/// One converted scalar.
#[derive(Clone, Debug)]
enum SVal {
    /// Integers, enums and bools (range-checked for the field's kind).
    Int(i128),
    F64(f64),
    F32(f32),
    Bytes(Vec<u8>),
}

impl SVal {
    fn is_default(&self) -> bool {
        match self {
            SVal::Int(v) => *v == 0,
            SVal::F64(v) => v.to_bits() == 0,
            SVal::F32(v) => v.to_bits() == 0,
            SVal::Bytes(b) => b.is_empty(),
        }
    }
}

fn verr(path: &str, off: usize, msg: impl Into<String>) -> JsonError {
    JsonError::Value { path: path.to_string(), offset: off, msg: msg.into() }
}

fn put_tag(out: &mut Vec<u8>, number: u32, wt: u8) {
    put_varint(out, ((number as u64) << 3) | wt as u64);
}

/// Writes `v` as a value of `kind` (no tag).
fn put_value(out: &mut Vec<u8>, kind: Kind, v: &SVal) {
    match (kind, v) {
        (Kind::Double, SVal::F64(f)) => out.extend_from_slice(&f.to_le_bytes()),
        (Kind::Float, SVal::F32(f)) => out.extend_from_slice(&f.to_le_bytes()),
        (Kind::Fixed64 | Kind::SFixed64, SVal::Int(i)) => out.extend_from_slice(&(*i as u64).to_le_bytes()),
        (Kind::Fixed32 | Kind::SFixed32, SVal::Int(i)) => out.extend_from_slice(&(*i as u32).to_le_bytes()),
        (Kind::SInt32, SVal::Int(i)) => put_varint(out, enc_zigzag32(*i as i32) as u64),
        (Kind::SInt64, SVal::Int(i)) => put_varint(out, enc_zigzag64(*i as i64)),
        (Kind::Int32 | Kind::Enum, SVal::Int(i)) => put_varint(out, *i as i32 as i64 as u64),
        (Kind::Int64 | Kind::UInt64 | Kind::UInt32 | Kind::Bool, SVal::Int(i)) => put_varint(out, *i as u64),
        (_, SVal::Bytes(b)) => {
            put_varint(out, b.len() as u64);
            out.extend_from_slice(b);
        }
        _ => {}
    }
}

/// A field's converted bytes, kept until the object ends so that fields go out in
/// field-number order and a later key for the same field replaces an earlier one.
struct Chunk {
    number: u32,
    bytes: Vec<u8>,
}

impl Conv<'_> {
    fn message(&self, mi: usize, node: &Node, path: &mut String, depth: usize, out: &mut Vec<u8>) -> Result<(), JsonError> {
        if depth > self.opts.max_depth {
            return Err(JsonError::TooDeep { limit: self.opts.max_depth, at: "JSON byte", offset: node.off as u64 });
        }
        let m = &self.schema.messages[mi];
        if let Some(k) = wkt(&m.full_name).filter(|_| !m.is_map_entry()) {
            return self.well_known(k, mi, node, path, depth, out);
        }
        let members: &[(String, Node)] = match &node.v {
            JVal::Obj(members) => members,
            // The official parser iterates over the value's keys: an empty array or
            // string has none and gives the empty message; anything else fails.
            JVal::Arr(v) if v.is_empty() => &[],
            JVal::Str(v) if v.is_empty() => &[],
            _ => return Err(verr(path, node.off, format!("expected an object for message {}", m.full_name))),
        };
        self.fields(mi, members.iter(), path, depth, out)
    }

    /// The members of a JSON object as the fields of a message of type `mi` (a regular
    /// message, or the payload of an `Any`).
    fn fields<'n>(
        &self,
        mi: usize,
        members: impl Iterator<Item = &'n (String, Node)>,
        path: &mut String,
        depth: usize,
        out: &mut Vec<u8>,
    ) -> Result<(), JsonError> {
        let m = &self.schema.messages[mi];
        // Per field index: its chunk (None = absent/cleared).
        let mut chunks: Vec<Option<Chunk>> = Vec::new();
        chunks.resize_with(m.fields.len(), || None);
        let mut oneof_seen = vec![false; m.oneofs.len()];
        for (name, val) in members {
            let found = m.fields.iter().position(|f| f.json_name == *name).or_else(|| m.fields.iter().position(|f| f.name == *name));
            let Some(fi) = found else {
                if is_extension_name(name) && !m.is_extendable() {
                    return Err(verr(path, val.off, format!("message type {} does not have extensions: {name:?}", m.full_name)));
                }
                if self.opts.ignore_unknown_fields {
                    continue;
                }
                return Err(verr(path, val.off, format!("message type {} has no field named {name:?}", m.full_name)));
            };
            let f = &m.fields[fi];
            let plen = path.len();
            path.push('.');
            path.push_str(name);
            if let (Presence::Oneof(o), false) = (f.presence, matches!(val.v, JVal::Null)) {
                if std::mem::replace(&mut oneof_seen[o as usize], true) {
                    return Err(verr(path, val.off, format!("more than one member of oneof {:?}", m.oneofs[o as usize].name)));
                }
            }
            let mut bytes = Vec::new();
            let merge_into = if f.kind.is_message() && !f.is_repeated() { chunks[fi].take() } else { None };
            let outcome = self.field(m, f, val, path, depth, &mut bytes)?;
            path.truncate(plen);
            if outcome == Outcome::Ignored {
                continue;
            }
            chunks[fi] = if outcome == Outcome::Present {
                // A second key for the same message field merges into the first, as
                // the official parser does: two occurrences on the wire merge too.
                let mut b = merge_into.map(|c| c.bytes).unwrap_or_default();
                b.extend_from_slice(&bytes);
                Some(Chunk { number: f.number, bytes: b })
            } else {
                None
            };
        }
        // Fields are sorted by number already.
        for c in chunks.into_iter().flatten() {
            debug_assert!(c.number > 0);
            out.extend_from_slice(&c.bytes);
        }
        Ok(())
    }

    /// Converts the value of field `f` into its wire bytes (tag included) in `out`, and
    /// says whether the field ends up present.
    fn field(&self, m: &Message, f: &Field, val: &Node, path: &mut String, depth: usize, out: &mut Vec<u8>) -> Result<Outcome, JsonError> {
        if let JVal::Null = val.v {
            // null = absent, except for google.protobuf.NullValue (its 0).
            if f.kind == Kind::Enum && !f.is_repeated() && self.enum_name(f) == Some("google.protobuf.NullValue") {
                put_tag(out, f.number, wire_type::VARINT);
                out.push(0);
                return Ok(Outcome::present(!matches!(f.presence, Presence::Implicit)));
            }
            if !f.is_repeated() && self.is_value(f) {
                put_tag(out, f.number, wire_type::LEN);
                out.extend_from_slice(&[2, 0x08, 0x00]);
                return Ok(Outcome::Present);
            }
            return Ok(Outcome::Absent);
        }
        if f.is_map() {
            let JVal::Obj(entries) = &val.v else {
                return Err(verr(path, val.off, "a map field must be a JSON object"));
            };
            let em = &self.schema.messages[f.sub as usize];
            let (kf, vf) = match (em.fields.first(), em.fields.get(1)) {
                (Some(k), Some(v)) => (k, v),
                _ => return Err(verr(path, val.off, "bad map entry type")),
            };
            let mut entry = Vec::new();
            for (k, v) in entries {
                entry.clear();
                let kval = self.map_key(kf, k, v.off, path)?;
                put_tag(&mut entry, 1, kf.kind.wire_type());
                put_value(&mut entry, kf.kind, &kval);
                let plen = path.len();
                path.push('[');
                path.push_str(k);
                path.push(']');
                if let (JVal::Null, false) = (&v.v, self.is_value(vf)) {
                    return Err(verr(path, v.off, "null is not allowed as a map value"));
                }
                if vf.kind.is_message() {
                    let mut body = Vec::new();
                    self.message(vf.sub as usize, v, path, depth + 1, &mut body)?;
                    put_tag(&mut entry, 2, wire_type::LEN);
                    put_varint(&mut entry, body.len() as u64);
                    entry.extend_from_slice(&body);
                } else {
                    let Some(sv) = self.scalar_unless_ignored(vf, v, path)? else {
                        path.truncate(plen);
                        continue;
                    };
                    put_tag(&mut entry, 2, vf.kind.wire_type());
                    put_value(&mut entry, vf.kind, &sv);
                }
                path.truncate(plen);
                put_tag(out, f.number, wire_type::LEN);
                put_varint(out, entry.len() as u64);
                out.extend_from_slice(&entry);
            }
            return Ok(Outcome::present(!out.is_empty()));
        }
        if f.is_repeated() {
            let JVal::Arr(items) = &val.v else {
                return Err(verr(path, val.off, "a repeated field must be a JSON array"));
            };
            let mut packed = Vec::new();
            for (i, item) in items.iter().enumerate() {
                let plen = path.len();
                path.push_str(&format!("[{i}]"));
                if let (JVal::Null, false) = (&item.v, self.is_value(f)) {
                    return Err(verr(path, item.off, "null is not allowed as an element of a repeated field"));
                }
                if f.kind.is_message() {
                    self.sub_message(f, item, path, depth, out)?;
                } else {
                    let Some(sv) = self.scalar_unless_ignored(f, item, path)? else {
                        path.truncate(plen);
                        continue;
                    };
                    if f.is_packed() {
                        put_value(&mut packed, f.kind, &sv);
                    } else {
                        put_tag(out, f.number, f.kind.wire_type());
                        put_value(out, f.kind, &sv);
                    }
                }
                path.truncate(plen);
            }
            if f.is_packed() && !packed.is_empty() {
                put_tag(out, f.number, wire_type::LEN);
                put_varint(out, packed.len() as u64);
                out.extend_from_slice(&packed);
            }
            return Ok(Outcome::present(!out.is_empty()));
        }
        if f.kind.is_message() {
            self.sub_message(f, val, path, depth, out)?;
            return Ok(Outcome::Present);
        }
        let Some(sv) = self.scalar_unless_ignored(f, val, path)? else {
            return Ok(Outcome::Ignored);
        };
        if matches!(f.presence, Presence::Implicit) && !m.is_map_entry() && sv.is_default() {
            return Ok(Outcome::Absent);
        }
        put_tag(out, f.number, f.kind.wire_type());
        put_value(out, f.kind, &sv);
        Ok(Outcome::Present)
    }

    /// [`Conv::scalar`], or `None` for an enum name the enum does not have when unknown
    /// fields are ignored (the official parser then leaves the field, element or map
    /// entry out).
    fn scalar_unless_ignored(&self, f: &Field, node: &Node, path: &str) -> Result<Option<SVal>, JsonError> {
        if self.opts.ignore_unknown_fields && f.kind == Kind::Enum {
            if let (JVal::Str(s), Some(en)) = (&node.v, self.schema.enums.get(f.sub as usize)) {
                if en.number_of(s).is_none() && py_int(s).is_none() {
                    return Ok(None);
                }
            }
        }
        self.scalar(f, node, path).map(Some)
    }

    fn sub_message(&self, f: &Field, val: &Node, path: &mut String, depth: usize, out: &mut Vec<u8>) -> Result<(), JsonError> {
        let mut body = Vec::new();
        self.message(f.sub as usize, val, path, depth + 1, &mut body)?;
        if f.kind == Kind::Group {
            put_tag(out, f.number, wire_type::START_GROUP);
            out.extend_from_slice(&body);
            put_tag(out, f.number, wire_type::END_GROUP);
        } else {
            put_tag(out, f.number, wire_type::LEN);
            put_varint(out, body.len() as u64);
            out.extend_from_slice(&body);
        }
        Ok(())
    }

    /// True if `f` holds `google.protobuf.Value` messages (where JSON null is a value).
    fn is_value(&self, f: &Field) -> bool {
        f.kind.is_message() && self.schema.messages[f.sub as usize].full_name == "google.protobuf.Value"
    }

    /// A JSON value as a well-known type `mi` with a special JSON form.
    fn well_known(&self, k: Wkt, mi: usize, node: &Node, path: &mut String, depth: usize, out: &mut Vec<u8>) -> Result<(), JsonError> {
        let m = &self.schema.messages[mi];
        let e = |msg: String| verr(path, node.off, msg);
        let field = |n: u32| m.field_index(n).map(|i| &m.fields[i]).ok_or_else(|| e(format!("bad {} type", m.full_name)));
        let text = || match &node.v {
            JVal::Str(s) => Ok(s.as_str()),
            _ => Err(e(format!("{} JSON value not a string", m.full_name.rsplit('.').next().unwrap_or_default()))),
        };
        match k {
            Wkt::Timestamp | Wkt::Duration => {
                let (secs, nanos) = if k == Wkt::Timestamp { parse_timestamp(text()?) } else { parse_duration(text()?) }.map_err(e)?;
                if secs != 0 {
                    put_tag(out, 1, wire_type::VARINT);
                    put_varint(out, secs as u64);
                }
                if nanos != 0 {
                    put_tag(out, 2, wire_type::VARINT);
                    put_varint(out, nanos as i64 as u64);
                }
            }
            Wkt::FieldMask => {
                let t = text()?;
                if !t.is_empty() {
                    for p in t.split(',') {
                        let snake = camel_to_snake(p).map_err(e)?;
                        put_tag(out, 1, wire_type::LEN);
                        put_varint(out, snake.len() as u64);
                        out.extend_from_slice(snake.as_bytes());
                    }
                }
            }
            Wkt::Wrapper => {
                let vf = field(1)?;
                let plen = path.len();
                path.push_str(".value");
                let sv = self.scalar(vf, node, path)?;
                path.truncate(plen);
                if !sv.is_default() {
                    put_tag(out, 1, vf.kind.wire_type());
                    put_value(out, vf.kind, &sv);
                }
            }
            Wkt::Struct => self.struct_fields(field(1)?, node, path, out)?,
            Wkt::ListValue => self.list_values(field(1)?, node, path, out)?,
            Wkt::Value => self.value(mi, node, path, out)?,
            Wkt::Any => self.any(m, node, path, depth, out)?,
        }
        Ok(())
    }

    /// A JSON object as a Struct's `fields` map (field `f`).
    fn struct_fields(&self, f: &Field, node: &Node, path: &mut String, out: &mut Vec<u8>) -> Result<(), JsonError> {
        let JVal::Obj(members) = &node.v else {
            return Err(verr(path, node.off, "Struct must be in a JSON object"));
        };
        let em = &self.schema.messages[f.sub as usize];
        let vf = em.fields.get(1).ok_or_else(|| verr(path, node.off, "bad Struct type"))?;
        let mut entry = Vec::new();
        let mut body = Vec::new();
        for (k, v) in members {
            let plen = path.len();
            path.push('.');
            path.push_str(k);
            body.clear();
            self.value(vf.sub as usize, v, path, &mut body)?;
            path.truncate(plen);
            entry.clear();
            put_tag(&mut entry, 1, wire_type::LEN);
            put_varint(&mut entry, k.len() as u64);
            entry.extend_from_slice(k.as_bytes());
            put_tag(&mut entry, 2, wire_type::LEN);
            put_varint(&mut entry, body.len() as u64);
            entry.extend_from_slice(&body);
            put_tag(out, f.number, wire_type::LEN);
            put_varint(out, entry.len() as u64);
            out.extend_from_slice(&entry);
        }
        Ok(())
    }

    /// A JSON array as a ListValue's `values` (field `f`).
    fn list_values(&self, f: &Field, node: &Node, path: &mut String, out: &mut Vec<u8>) -> Result<(), JsonError> {
        let JVal::Arr(items) = &node.v else {
            return Err(verr(path, node.off, "ListValue must be in a JSON array"));
        };
        let mut body = Vec::new();
        for (i, item) in items.iter().enumerate() {
            let plen = path.len();
            path.push_str(&format!("[{i}]"));
            body.clear();
            self.value(f.sub as usize, item, path, &mut body)?;
            path.truncate(plen);
            put_tag(out, f.number, wire_type::LEN);
            put_varint(out, body.len() as u64);
            out.extend_from_slice(&body);
        }
        Ok(())
    }

    /// Any JSON value as a `google.protobuf.Value` (message `mi`). Struct and ListValue
    /// levels do not count against `max_depth` (the official parser does not count them
    /// either); the JSON text's own nesting limit bounds this recursion.
    fn value(&self, mi: usize, node: &Node, path: &mut String, out: &mut Vec<u8>) -> Result<(), JsonError> {
        let m = &self.schema.messages[mi];
        let field = |n: u32| {
            m.field_index(n).map(|i| &m.fields[i]).ok_or_else(|| verr(path, node.off, "bad google.protobuf.Value type"))
        };
        match &node.v {
            JVal::Null => {
                put_tag(out, 1, wire_type::VARINT);
                out.push(0);
            }
            JVal::Num(t) => {
                // JSON integers are Python ints, converted to double (an error past the
                // double range, and -0 is 0); other numbers are doubles (1e400 is inf).
                let integral = !t.contains(['.', 'e', 'E']);
                let mut v: f64 = t.parse().map_err(|_| verr(path, node.off, format!("bad number {t}")))?;
                if integral && v.is_infinite() {
                    return Err(verr(path, node.off, "int too large to convert to float"));
                }
                if integral && v == 0.0 {
                    v = 0.0;
                }
                put_tag(out, 2, wire_type::FIXED64);
                out.extend_from_slice(&v.to_le_bytes());
            }
            JVal::Str(s) => {
                put_tag(out, 3, wire_type::LEN);
                put_varint(out, s.len() as u64);
                out.extend_from_slice(s.as_bytes());
            }
            JVal::Bool(b) => {
                put_tag(out, 4, wire_type::VARINT);
                out.push(*b as u8);
            }
            JVal::Obj(_) | JVal::Arr(_) => {
                let is_obj = matches!(node.v, JVal::Obj(_));
                let f = field(if is_obj { 5 } else { 6 })?;
                let sm = &self.schema.messages[f.sub as usize];
                let inner = sm.field_index(1).map(|i| &sm.fields[i]).ok_or_else(|| verr(path, node.off, "bad Struct/ListValue type"))?;
                let mut body = Vec::new();
                if is_obj {
                    self.struct_fields(inner, node, path, &mut body)?;
                } else {
                    self.list_values(inner, node, path, &mut body)?;
                }
                put_tag(out, f.number, wire_type::LEN);
                put_varint(out, body.len() as u64);
                out.extend_from_slice(&body);
            }
        }
        Ok(())
    }

    /// `{"@type": url, ...}` as a `google.protobuf.Any` (message `m`): the URL's last
    /// path segment names a message of the schema; a well-known type with a special form
    /// takes its JSON from the member "value" (other members are ignored, as the
    /// official parser does), any other type from the members besides "@type". `{}` is
    /// the empty Any.
    fn any(&self, m: &Message, node: &Node, path: &mut String, depth: usize, out: &mut Vec<u8>) -> Result<(), JsonError> {
        let JVal::Obj(members) = &node.v else {
            return Err(verr(path, node.off, "expected a JSON object for google.protobuf.Any"));
        };
        if members.is_empty() {
            return Ok(());
        }
        let member = |k: &str| members.iter().find(|(n, _)| n == k).map(|(_, v)| v);
        let url = match member("@type") {
            None => return Err(verr(path, node.off, format!("@type is missing when parsing any message at {path}"))),
            Some(Node { v: JVal::Str(s), .. }) => s,
            Some(n) => return Err(verr(path, n.off, "@type must be a string")),
        };
        let name = url.rsplit('/').next().unwrap_or(url);
        let pi = self
            .schema
            .messages
            .iter()
            .position(|t| t.full_name == name)
            .ok_or_else(|| verr(path, node.off, format!("Can not find message descriptor by type_url: {url}")))?;
        let pm = &self.schema.messages[pi];
        let mut payload = Vec::new();
        match wkt(&pm.full_name).filter(|_| !pm.is_map_entry()) {
            Some(k) => {
                let v = member("value").ok_or_else(|| verr(path, node.off, format!("Any of type {name} has no \"value\" member")))?;
                let plen = path.len();
                path.push_str(".value");
                // Wrappers are converted in place, other types as a message one level down.
                let d = if k == Wkt::Wrapper { depth } else { depth + 1 };
                self.message(pi, v, path, d, &mut payload)?;
                path.truncate(plen);
            }
            None => self.fields(pi, members.iter().filter(|(n, _)| n != "@type"), path, depth, &mut payload)?,
        }
        let tf = m.field_index(1).map(|i| &m.fields[i]);
        let vf = m.field_index(2).map(|i| &m.fields[i]);
        let (Some(tf), Some(vf)) = (tf, vf) else {
            return Err(verr(path, node.off, "bad google.protobuf.Any type"));
        };
        put_tag(out, tf.number, wire_type::LEN);
        put_varint(out, url.len() as u64);
        out.extend_from_slice(url.as_bytes());
        if !payload.is_empty() {
            put_tag(out, vf.number, wire_type::LEN);
            put_varint(out, payload.len() as u64);
            out.extend_from_slice(&payload);
        }
        Ok(())
    }

    fn enum_name(&self, f: &Field) -> Option<&str> {
        self.schema.enums.get(f.sub as usize).map(|e| e.full_name.as_str())
    }

    fn map_key(&self, kf: &Field, key: &str, off: usize, path: &str) -> Result<SVal, JsonError> {
        let p = format!("{path}.key");
        match kf.kind {
            Kind::String => Ok(SVal::Bytes(key.as_bytes().to_vec())),
            Kind::Bool => match key {
                "true" => Ok(SVal::Int(1)),
                "false" => Ok(SVal::Int(0)),
                _ => Err(verr(&p, off, format!("expected \"true\" or \"false\", not {key:?}"))),
            },
            k => {
                if key.contains(' ') {
                    return Err(verr(&p, off, format!("couldn't parse integer: {key:?}")));
                }
                let v = int_from_py_str(key).map_err(|m| verr(&p, off, m))?;
                check_range(k, v).map_err(|m| verr(&p, off, m))
            }
        }
    }

    fn scalar(&self, f: &Field, node: &Node, path: &str) -> Result<SVal, JsonError> {
        let e = |msg: String| verr(path, node.off, msg);
        match f.kind {
            Kind::Bool => match node.v {
                JVal::Bool(b) => Ok(SVal::Int(b as i128)),
                _ => Err(e("expected true or false without quotes".into())),
            },
            Kind::String => match &node.v {
                JVal::Str(s) => Ok(SVal::Bytes(s.as_bytes().to_vec())),
                _ => Err(e("expected a string".into())),
            },
            Kind::Bytes => match &node.v {
                JVal::Str(s) => base64_decode(s).map(SVal::Bytes).map_err(e),
                _ => Err(e("expected a base64 string".into())),
            },
            Kind::Float | Kind::Double => {
                let v = match &node.v {
                    JVal::Num(t) => {
                        // A JSON integer is a Python int: float() of it has no range
                        // check for `float` fields (it may round to infinity), and -0
                        // is 0. Other numbers are doubles, range-checked for `float`.
                        let integral = !t.contains(['.', 'e', 'E']);
                        let v: f64 = t.parse().map_err(|_| e(format!("couldn't parse float: {t}")))?;
                        if v.is_infinite() {
                            return Err(e("couldn't parse Infinity or value too large, use quoted \"Infinity\" instead".into()));
                        }
                        if !integral && f.kind == Kind::Float && v.abs() > f32::MAX as f64 {
                            return Err(e(format!("float value {t} out of range")));
                        }
                        if integral && v == 0.0 {
                            0.0
                        } else {
                            v
                        }
                    }
                    JVal::Str(s) => match s.as_str() {
                        "nan" => return Err(e("couldn't parse float \"nan\", use \"NaN\" instead".into())),
                        t => py_float(t).ok_or_else(|| e(format!("couldn't parse float: {t:?}")))?,
                    },
                    // Python's float(True) quirk, accepted by the official parser.
                    JVal::Bool(b) => *b as u8 as f64,
                    _ => return Err(e("expected a number".into())),
                };
                Ok(if f.kind == Kind::Float { SVal::F32(v as f32) } else { SVal::F64(v) })
            }
            Kind::Enum => {
                let en = self.schema.enums.get(f.sub as usize).ok_or_else(|| e("bad enum type".into()))?;
                let n: i128 = match &node.v {
                    JVal::Str(s) => match en.number_of(s) {
                        Some(n) => return Ok(SVal::Int(n as i128)),
                        None => py_int(s)
                            .ok_or_else(|| e(format!("invalid enum value {s:?} for enum type {}", en.full_name)))?,
                    },
                    JVal::Num(t) => {
                        // Python's int() of the number: floats truncate.
                        match t.parse::<i128>() {
                            Ok(v) => v,
                            Err(_) => {
                                let v: f64 = t.parse().map_err(|_| e(format!("invalid enum value {t}")))?;
                                if !v.is_finite() || v.abs() >= 1e38 {
                                    return Err(e(format!("invalid enum value {t}")));
                                }
                                v.trunc() as i128
                            }
                        }
                    }
                    JVal::Bool(b) => *b as i128,
                    _ => return Err(e(format!("invalid enum value for enum type {}", en.full_name))),
                };
                if n < i32::MIN as i128 || n > i32::MAX as i128 {
                    return Err(e(format!("enum value {n} out of range")));
                }
                if !en.contains(n as i32) && en.closed {
                    return Err(e(format!("invalid enum value {n} for enum type {}", en.full_name)));
                }
                Ok(SVal::Int(n))
            }
            k => {
                let v = match &node.v {
                    JVal::Num(t) => int_from_number(t).map_err(|m| e(m.to_string()))?,
                    JVal::Str(s) => {
                        if s.contains(' ') {
                            return Err(e(format!("couldn't parse integer: {s:?}")));
                        }
                        int_from_py_str(s).map_err(e)?
                    }
                    JVal::Bool(_) => return Err(e("bool value is not acceptable for integer field".into())),
                    _ => return Err(e("expected an integer".into())),
                };
                check_range(k, v).map_err(e)
            }
        }
    }
}

/// An integer JSON number: exact when written as an integer; otherwise (fraction or
/// exponent) through `f64` and required integral, as Python's parser does.
fn int_from_number(t: &str) -> Result<i128, &'static str> {
    if !t.contains(['.', 'e', 'E']) {
        return t.parse::<i128>().map_err(|_| "integer out of range");
    }
    let v: f64 = t.parse().map_err(|_| "couldn't parse integer")?;
    if !v.is_finite() || v.fract() != 0.0 {
        return Err("couldn't parse integer");
    }
    if v.abs() >= 1.6e38 {
        return Err("integer out of range");
    }
    Ok(v as i128)
}

/// `_ConvertInteger` of a string: Python's `int()`, else an integral `float()`.
fn int_from_py_str(s: &str) -> Result<i128, String> {
    if let Some(v) = py_int(s) {
        return Ok(v);
    }
    let f = py_float(s).ok_or_else(|| format!("couldn't parse integer: {s:?}"))?;
    if !f.is_finite() || f.fract() != 0.0 {
        return Err(format!("couldn't parse non-integer string: {s:?}"));
    }
    if f.abs() >= 1.6e38 {
        return Err("integer out of range".into());
    }
    Ok(f as i128)
}

fn check_range(kind: Kind, v: i128) -> Result<SVal, String> {
    let (lo, hi): (i128, i128) = match kind {
        Kind::Int32 | Kind::SInt32 | Kind::SFixed32 | Kind::Enum => (i32::MIN as i128, i32::MAX as i128),
        Kind::UInt32 | Kind::Fixed32 => (0, u32::MAX as i128),
        Kind::Int64 | Kind::SInt64 | Kind::SFixed64 => (i64::MIN as i128, i64::MAX as i128),
        Kind::UInt64 | Kind::Fixed64 => (0, u64::MAX as i128),
        _ => return Err(format!("{} is not an integer type", kind.proto_name())),
    };
    if v < lo || v > hi {
        return Err(format!("value {v} out of range for {}", kind.proto_name()));
    }
    Ok(SVal::Int(v))
}

/// Base64 exactly as the official Python parser decodes it: `urlsafe_b64decode` of
/// the text with `4 - len % 4` '=' appended, i.e. CPython's non-strict `a2b_base64`:
/// both alphabets (`-_` are `+/`), other characters skipped, decoding stops at the
/// padding that completes a quantum; one stray data character, or a quantum left
/// incomplete, is an error.
fn base64_decode(s: &str) -> Result<Vec<u8>, String> {
    let mut out = Vec::with_capacity(s.len() / 4 * 3 + 3);
    let pad = 4 - s.len() % 4;
    let (mut quad_pos, mut pads, mut left, mut data) = (0u32, 0usize, 0u8, 0usize);
    for c in s.bytes().chain(std::iter::repeat_n(b'=', pad)) {
        if c == b'=' {
            if quad_pos >= 2 {
                pads += 1;
                if quad_pos as usize + pads >= 4 {
                    return Ok(out);
                }
            }
            continue;
        }
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            _ => continue,
        };
        data += 1;
        pads = 0;
        match quad_pos {
            0 => {
                quad_pos = 1;
                left = v;
            }
            1 => {
                quad_pos = 2;
                out.push((left << 2) | (v >> 4));
                left = v & 0x0f;
            }
            2 => {
                quad_pos = 3;
                out.push((left << 4) | (v >> 2));
                left = v & 0x03;
            }
            _ => {
                quad_pos = 0;
                out.push((left << 6) | v);
                left = 0;
            }
        }
    }
    match quad_pos {
        0 => Ok(out),
        1 => Err(format!("invalid base64: number of data characters ({data}) cannot be 1 more than a multiple of 4")),
        _ => Err("invalid base64: incorrect padding".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_as_python() {
        assert_eq!(base64_decode("YQ==").unwrap(), b"a");
        assert_eq!(base64_decode("YQ").unwrap(), b"a");
        assert_eq!(base64_decode("-_8=").unwrap(), [0xfb, 0xff]);
        assert_eq!(base64_decode("+/8").unwrap(), [0xfb, 0xff]);
        assert_eq!(base64_decode("YQ==YQ==").unwrap(), b"a");
        assert_eq!(base64_decode("YWJj ZGVm").unwrap(), b"abcdef");
        assert!(base64_decode("Y").is_err());
        assert!(base64_decode("Y!Q").is_err());
        assert_eq!(base64_decode("").unwrap(), b"");
    }

    #[test]
    fn integers_as_python() {
        assert_eq!(py_int("+5"), Some(5));
        assert_eq!(py_int("05"), Some(5));
        assert_eq!(py_int("1_000"), Some(1000));
        assert_eq!(py_int("1__0"), None);
        assert_eq!(py_int("\t-7\n"), Some(-7));
        assert_eq!(int_from_py_str("1e2"), Ok(100));
        assert!(int_from_py_str("1.5").is_err());
        assert!(int_from_py_str("inf").is_err());
        assert_eq!(int_from_number("9007199254740993.0"), Ok(9007199254740992));
        assert_eq!(int_from_number("18446744073709551615"), Ok(u64::MAX as i128));
        assert!(int_from_number("1.5").is_err());
        assert!(check_range(Kind::Int32, 1 << 31).is_err());
        assert!(check_range(Kind::UInt64, -1).is_err());
    }

    #[test]
    fn tree_rejects_bad_json() {
        for t in ["", "{", "{\"a\"}", "{\"a\":1,}", "[1,]", "01", "1.", "-", "\"\\x\"", "\"\u{1}\"", "nul", "{} {}", "\"\\ud800\"", "{\"a\":1,\"a\":2}"] {
            assert!(parse_tree(t.as_bytes(), 100).is_err(), "{t:?}");
        }
        let n = parse_tree(b" [1, -2.5e3, \"x\\u00e9\\ud83d\\ude00\", true, false, null, {\"k\": []}] ", 100).unwrap();
        let JVal::Arr(items) = n.v else { panic!() };
        assert_eq!(items.len(), 7);
        assert!(matches!(&items[1].v, JVal::Num(t) if t == "-2.5e3"));
        assert!(matches!(&items[2].v, JVal::Str(s) if s == "x\u{e9}\u{1f600}"));
        assert!(parse_tree("[".repeat(101).as_bytes(), 100).is_err());
    }

    #[test]
    fn tree_errors_say_what_was_expected_where() {
        let cases: &[(&[u8], usize, &str)] = &[
            (b"", 0, "unexpected end of input, expected a value"),
            (b" }", 1, "unexpected '}', expected a value"),
            (b"[1,]", 3, "unexpected ']', expected a value"),
            (b"tru", 0, "unexpected 't', expected a value"),
            (b"\xff", 0, "unexpected '\u{ff}', expected a value"),
            // The byte is looked at before a token is read: not "unterminated string".
            (b"[1 \"x", 3, "unexpected '\"', expected ',' or ']'"),
            (b"{\"a\":1 \"b", 7, "unexpected '\"', expected ',' or '}'"),
            (b"{1:2}", 1, "unexpected '1', expected a string key"),
            (b"{\"a\":1, -}", 8, "unexpected '-', expected a string key"),
            (b"{\"a\" 1}", 5, "unexpected '1', expected ':'"),
            (b"{\"a\"", 4, "unexpected end of input, expected ':'"),
            (b"1 2", 2, "trailing data after the JSON value"),
            (b"{\"a\":1,\"a\" :2}", 12, "duplicate key \"a\""),
            (b"[[[", 2, "JSON nested deeper than 2"),
            (b"[\"ab\\q\"]", 4, "bad escape"),
            (b"{\"\\ud800\":1}", 2, "unpaired surrogate"),
            (b"[-x]", 1, "bad number"),
            (b"\"\xc3(\"", 1, "invalid UTF-8 in string"),
        ];
        for &(t, offset, msg) in cases {
            let max = if msg.starts_with("JSON nested") { 2 } else { 100 };
            let got = match parse_tree(t, max) {
                Err(JsonError::Syntax { offset, msg }) => (offset, msg),
                r => panic!("{r:?}"),
            };
            assert_eq!(got, (offset, msg.to_string()), "{:?}", String::from_utf8_lossy(t));
        }
    }
}

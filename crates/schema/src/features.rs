//! Editions (`edition = "2023"` / `"2024"`): which files use them, and their features
//! resolved as the official resolver does — the edition's defaults, overridden by the
//! file's `option features.*`, then each enclosing message's, then the oneof's (for its
//! members) and the field's own (an enum: the file's, its enclosing messages', its own).
//! Fields of a map entry resolve from the map field, as protoc does. The resolved
//! features map onto the per-field flags every engine already follows (`compile.rs`), so
//! no engine knows editions exist.
//!
//! The descriptor library (prost-reflect 0.16) predates editions, so the patched parser
//! (`vendor/protox-parse`) hands editions files on as proto2; which file is which edition
//! is recorded here from the source as the files are opened.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use prost_reflect::{DynamicMessage, EnumDescriptor, FieldDescriptor, MessageDescriptor, Value};

use crate::fields::Fd;
use crate::SchemaError;

/// The editions heapwire resolves features for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Edition {
    E2023,
    E2024,
}

impl Edition {
    fn name(self) -> &'static str {
        match self {
            Edition::E2023 => "2023",
            Edition::E2024 => "2024",
        }
    }
}

/// File name (as the pool knows it) → edition, for the files that declare one.
pub type Editions = HashMap<String, Edition>;

/// The features that change decoding, encoding, layout or JSON, resolved.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Features {
    pub field_presence: i32,
    pub enum_type: i32,
    pub repeated_field_encoding: i32,
    pub utf8_validation: i32,
    pub message_encoding: i32,
    pub json_format: i32,
}

// heapwire's numbering of the resolved values (FeatureSet's, but for NONE; values are
// matched by name).
pub const EXPLICIT: i32 = 1;
pub const IMPLICIT: i32 = 2;
pub const LEGACY_REQUIRED: i32 = 3;
pub const OPEN: i32 = 1;
pub const CLOSED: i32 = 2;
pub const PACKED: i32 = 1;
pub const EXPANDED: i32 = 2;
pub const VERIFY: i32 = 2;
pub const NO_VALIDATION: i32 = 3;
pub const LENGTH_PREFIXED: i32 = 1;
pub const DELIMITED: i32 = 2;
pub const ALLOW: i32 = 1;
pub const LEGACY_BEST_EFFORT: i32 = 2;

impl Features {
    /// The defaults of an edition (2023 and 2024 agree on every feature that matters here).
    pub fn defaults(_e: Edition) -> Features {
        Features {
            field_presence: EXPLICIT,
            enum_type: OPEN,
            repeated_field_encoding: PACKED,
            utf8_validation: VERIFY,
            message_encoding: LENGTH_PREFIXED,
            json_format: ALLOW,
        }
    }
}

/// Features in `google.protobuf.FeatureSet` that change nothing heapwire produces (naming
/// style checks, symbol visibility). Language features (`features.(pb.cpp)...`, which are
/// extensions) concern generated code only and are accepted too.
const NO_EFFECT: &[&str] = &["enforce_naming_style", "default_symbol_visibility"];

/// Reads the edition from a `.proto` source: its first statement, after comments.
pub fn edition_of_source(src: &str) -> Option<&str> {
    let mut s = src;
    loop {
        s = s.trim_start_matches(|c: char| c.is_whitespace() || c == '\u{feff}');
        if let Some(r) = s.strip_prefix("//") {
            s = r.find('\n').map_or("", |i| &r[i..]);
        } else if let Some(r) = s.strip_prefix("/*") {
            s = r.find("*/").map_or("", |i| &r[i + 2..]);
        } else {
            break;
        }
    }
    let r = s.strip_prefix("edition")?;
    if r.starts_with(|c: char| c.is_alphanumeric() || c == '_') {
        return None;
    }
    let r = r.trim_start().strip_prefix('=')?.trim_start();
    let q = r.chars().next().filter(|c| *c == '"' || *c == '\'')?;
    let r = &r[1..];
    r.find(q).map(|i| &r[..i])
}

/// A protox resolver that records the edition of every file it opens.
pub(crate) struct EditionRecorder<R> {
    pub inner: R,
    pub seen: Arc<Mutex<Editions>>,
}

impl<R: protox::file::FileResolver> protox::file::FileResolver for EditionRecorder<R> {
    fn resolve_path(&self, path: &std::path::Path) -> Option<String> {
        self.inner.resolve_path(path)
    }
    fn open_file(&self, name: &str) -> Result<protox::file::File, protox::Error> {
        let f = self.inner.open_file(name)?;
        if let Some(e) = f.source().and_then(edition_of_source) {
            // The parser only lets "2023" and "2024" through.
            let e = if e == "2024" { Edition::E2024 } else { Edition::E2023 };
            self.seen.lock().unwrap().insert(name.to_string(), e);
        }
        Ok(f)
    }
}

/// Applies the `features` set in `options` (a `*Options` message) over `base`.
/// `what` names the entity for errors; `file` the file it is declared in.
fn apply(base: Features, options: &DynamicMessage, file: &str, what: &str) -> Result<Features, SchemaError> {
    let Some(fs) = options.get_field_by_name("features") else { return Ok(base) };
    if !options.has_field_by_name("features") {
        return Ok(base);
    }
    let Value::Message(fs) = fs.as_ref() else { return Ok(base) };
    let mut out = base;
    for (fd, v) in fs.fields() {
        let num = match v {
            Value::EnumNumber(n) => *n,
            _ => -1,
        };
        let name = fd.name();
        let bad = |why: &str| {
            Err(SchemaError::Unsupported(format!("{file}: {what}: feature {name} = {} {why}", enum_value_name(&fd, num))))
        };
        // By value name: descriptor.proto has renumbered values (utf8_validation NONE).
        let value = enum_value_name(&fd, num);
        // A number the descriptor in use has no name for (an older descriptor.proto, as
        // bundled with the descriptor library) is read with the current numbering, which
        // heapwire's constants follow.
        let pick = |names: &[(&str, i32)]| {
            names.iter().find(|(n, _)| *n == value).or_else(|| names.iter().find(|(_, v)| *v == num && value == num.to_string())).map(|(_, v)| *v)
        };
        // Where a feature may be set (FeatureSet's `targets`), as protoc checks.
        let entity = match what.split(' ').next() {
            Some("edition") => "file",
            Some(w) => w,
            None => "file",
        };
        let targets: &[&str] = match name {
            "field_presence" | "repeated_field_encoding" | "utf8_validation" | "message_encoding" => &["file", "field"],
            "enum_type" => &["file", "enum"],
            "json_format" => &["file", "message", "enum"],
            "default_symbol_visibility" => &["file"],
            _ => &["file", "message", "field", "oneof", "enum"],
        };
        if !targets.contains(&entity) {
            return Err(SchemaError::Invalid(format!(
                "{file}: {what}: feature {name} = {} cannot be set on a {entity}",
                enum_value_name(&fd, num)
            )));
        }
        match (name, name_table(name).and_then(pick)) {
            ("field_presence", Some(v)) => out.field_presence = v,
            ("enum_type", Some(v)) => out.enum_type = v,
            ("repeated_field_encoding", Some(v)) => out.repeated_field_encoding = v,
            ("utf8_validation", Some(v)) => out.utf8_validation = v,
            ("message_encoding", Some(v)) => out.message_encoding = v,
            ("json_format", Some(v)) => out.json_format = v,
            (n, _) if NO_EFFECT.contains(&n) => {}
            _ => return bad("is not supported by heapwire"),
        }
    }
    // Fields the descriptor.proto in use does not know (a newer feature) are refused too.
    if let Some(n) = fs.unknown_fields().next().map(|u| u.number()) {
        return Err(SchemaError::Unsupported(format!(
            "{file}: {what}: unknown feature (FeatureSet field {n}) is not supported by heapwire"
        )));
    }
    Ok(out)
}

/// The values heapwire knows, by name, for each feature that matters.
fn name_table(feature: &str) -> Option<&'static [(&'static str, i32)]> {
    Some(match feature {
        "field_presence" => &[("EXPLICIT", EXPLICIT), ("IMPLICIT", IMPLICIT), ("LEGACY_REQUIRED", LEGACY_REQUIRED)],
        "enum_type" => &[("OPEN", OPEN), ("CLOSED", CLOSED)],
        "repeated_field_encoding" => &[("PACKED", PACKED), ("EXPANDED", EXPANDED)],
        "utf8_validation" => &[("VERIFY", VERIFY), ("NONE", NO_VALIDATION)],
        "message_encoding" => &[("LENGTH_PREFIXED", LENGTH_PREFIXED), ("DELIMITED", DELIMITED)],
        "json_format" => &[("ALLOW", ALLOW), ("LEGACY_BEST_EFFORT", LEGACY_BEST_EFFORT)],
        _ => return None,
    })
}

fn enum_value_name(fd: &FieldDescriptor, n: i32) -> String {
    match fd.kind() {
        prost_reflect::Kind::Enum(e) => e.get_value(n).map_or(n.to_string(), |v| v.name().to_string()),
        _ => "(a value)".into(),
    }
}

/// Resolves features for the messages, fields and enums of editions files, caching
/// per message.
pub(crate) struct Resolver<'a> {
    editions: &'a Editions,
    messages: HashMap<String, Features>,
}

impl<'a> Resolver<'a> {
    pub fn new(editions: &'a Editions) -> Self {
        Resolver { editions, messages: HashMap::new() }
    }

    pub fn edition(&self, file: &str) -> Option<Edition> {
        self.editions.get(file).copied()
    }

    fn file_features(&self, file: &prost_reflect::FileDescriptor) -> Result<Option<Features>, SchemaError> {
        let Some(e) = self.edition(file.name()) else { return Ok(None) };
        let base = Features::defaults(e);
        let f = apply(base, &file.options(), file.name(), &format!("edition {} file", e.name()))?;
        Ok(Some(f))
    }

    /// Features of a message (its file's, its enclosing messages', its own); `None` for
    /// messages of proto2/proto3 files.
    pub fn message(&mut self, m: &MessageDescriptor) -> Result<Option<Features>, SchemaError> {
        if let Some(f) = self.messages.get(m.full_name()) {
            return Ok(Some(*f));
        }
        let base = match m.parent_message() {
            Some(p) if m.is_map_entry() => {
                // A map entry resolves from the map field that declares it.
                let fld = p.fields().find(|f| matches!(f.kind(), prost_reflect::Kind::Message(t) if t == *m));
                match fld {
                    Some(fld) => self.field_of(&Fd::Own(fld))?,
                    None => self.message(&p)?,
                }
            }
            Some(p) => self.message(&p)?,
            None => self.file_features(&m.parent_file())?,
        };
        let Some(base) = base else { return Ok(None) };
        let file = m.parent_file();
        let f = apply(base, &m.options(), file.name(), &format!("message {}", m.full_name()))?;
        self.messages.insert(m.full_name().to_string(), f);
        Ok(Some(f))
    }

    fn field_of(&mut self, f: &Fd) -> Result<Option<Features>, SchemaError> {
        let base = match f.scope() {
            Some(m) => self.message(&m)?,
            None => self.file_features(&f.file())?,
        };
        let Some(mut base) = base else { return Ok(None) };
        let file = f.file();
        if let Some(o) = f.oneof() {
            base = apply(base, &o.options(), file.name(), &format!("oneof {}", o.full_name()))?;
        }
        Ok(Some(apply(base, &f.options(), file.name(), &format!("field {}", f.full_name()))?))
    }

    /// Features of a field (or extension), checked as protoc checks where a feature may
    /// be set; `None` for proto2/proto3 files.
    pub fn field(&mut self, f: &Fd) -> Result<Option<Features>, SchemaError> {
        let Some(r) = self.field_of(f)? else { return Ok(None) };
        let file = f.file();
        let own = own_features(&f.options());
        let err = |feature: &str, value: &str, why: &str| {
            Err(SchemaError::Invalid(format!(
                "{}: field {}: features.{feature} = {value} {why}",
                file.name(),
                f.full_name()
            )))
        };
        let repeated = f.cardinality() == prost_reflect::Cardinality::Repeated;
        let is_msg = matches!(f.kind(), prost_reflect::Kind::Message(_));
        let in_oneof = f.oneof().is_some();
        if own.contains(&"field_presence") {
            if repeated {
                return err("field_presence", presence_name(r.field_presence), "cannot be set on a repeated field");
            }
            if in_oneof {
                return err("field_presence", presence_name(r.field_presence), "cannot be set on a oneof member");
            }
            if is_msg && r.field_presence == IMPLICIT {
                return err("field_presence", "IMPLICIT", "cannot be set on a message field");
            }
            if matches!(f, Fd::Ext(_)) && r.field_presence != EXPLICIT {
                return err("field_presence", presence_name(r.field_presence), "cannot be set on an extension");
            }
        }
        if !is_msg && !repeated && !in_oneof && r.field_presence == IMPLICIT && f.has_default() {
            return err("field_presence", "IMPLICIT", "cannot be combined with a default value");
        }
        if own.contains(&"repeated_field_encoding") && (!repeated || !packable(f)) {
            return err(
                "repeated_field_encoding",
                if r.repeated_field_encoding == PACKED { "PACKED" } else { "EXPANDED" },
                "applies only to repeated scalar fields",
            );
        }
        if own.contains(&"message_encoding") && r.message_encoding == DELIMITED && (!is_msg || f.is_map()) {
            return err("message_encoding", "DELIMITED", "applies only to message fields that are not maps");
        }
        if own.contains(&"utf8_validation") && !is_string_like(f) {
            return err("utf8_validation", "(a value)", "applies only to string fields");
        }
        Ok(Some(r))
    }

    /// Features of an enum; `None` for proto2/proto3 files.
    pub fn enum_(&mut self, e: &EnumDescriptor) -> Result<Option<Features>, SchemaError> {
        let base = match e.parent_message() {
            Some(p) => self.message(&p)?,
            None => self.file_features(&e.parent_file())?,
        };
        let Some(base) = base else { return Ok(None) };
        Ok(Some(apply(base, &e.options(), e.parent_file().name(), &format!("enum {}", e.full_name()))?))
    }
}

fn presence_name(n: i32) -> &'static str {
    match n {
        EXPLICIT => "EXPLICIT",
        IMPLICIT => "IMPLICIT",
        _ => "LEGACY_REQUIRED",
    }
}

fn packable(f: &Fd) -> bool {
    !matches!(f.kind(), prost_reflect::Kind::Message(_) | prost_reflect::Kind::String | prost_reflect::Kind::Bytes)
}

fn is_string_like(f: &Fd) -> bool {
    if f.is_map() {
        return true;
    }
    matches!(f.kind(), prost_reflect::Kind::String)
}

/// Names of the features set on the entity itself.
fn own_features(options: &DynamicMessage) -> Vec<&'static str> {
    const ALL: &[&str] = &[
        "field_presence",
        "enum_type",
        "repeated_field_encoding",
        "utf8_validation",
        "message_encoding",
        "json_format",
    ];
    let Some(Value::Message(fs)) = options.get_field_by_name("features").map(|c| c.into_owned()) else {
        return vec![];
    };
    if !options.has_field_by_name("features") {
        return vec![];
    }
    ALL.iter().copied().filter(|n| fs.has_field_by_name(n)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edition_from_source() {
        assert_eq!(edition_of_source("edition = \"2023\";"), Some("2023"));
        assert_eq!(edition_of_source("// c\n/* d */\n  edition='2024';\nmessage M {}"), Some("2024"));
        assert_eq!(edition_of_source("syntax = \"proto3\";"), None);
        assert_eq!(edition_of_source("editions = \"2023\";"), None);
        assert_eq!(edition_of_source(""), None);
    }
}

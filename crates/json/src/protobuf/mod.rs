//! The proto3 JSON mapping, as the official libraries use it by default.
//!
//! * [`print`]: heap image → JSON (`decode --json`), compact single-line output.
//! * [`parse`]: JSON → protobuf wire bytes (`encode --from-json`), schema-driven.
//!
//! Neither recurses without bound: the printer walks the image with an explicit stack
//! (and a byte budget against shared or cyclic pointers in untrusted images); the
//! parser tokenizes iteratively and converts with a depth limit.

pub mod parse;
mod wkt;
pub mod print;

pub use parse::{from_json, from_json_with, ParseOptions};
pub use print::{to_json, to_json_into, to_json_with, PrintOptions};

use heapwire_image::ViewError;

/// Well-known types with their own JSON form.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Wkt {
    Timestamp,
    Duration,
    FieldMask,
    Wrapper,
    Struct,
    ListValue,
    Value,
    Any,
}

/// The JSON form of the message type named `name` (a full name), if special.
pub(crate) fn wkt(name: &str) -> Option<Wkt> {
    Some(match name.strip_prefix("google.protobuf.")? {
        "Timestamp" => Wkt::Timestamp,
        "Duration" => Wkt::Duration,
        "FieldMask" => Wkt::FieldMask,
        "Struct" => Wkt::Struct,
        "ListValue" => Wkt::ListValue,
        "Value" => Wkt::Value,
        "Any" => Wkt::Any,
        "DoubleValue" | "FloatValue" | "Int64Value" | "UInt64Value" | "Int32Value" | "UInt32Value" | "BoolValue"
        | "StringValue" | "BytesValue" => Wkt::Wrapper,
        _ => return None,
    })
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JsonError {
    /// The image could not be read (printing).
    #[error("bad_image: {0}")]
    Image(#[from] ViewError),
    /// A proto2 map key that is not UTF-8: a JSON object key cannot hold it, and
    /// changing the bytes would lose data, so the message is not printed (as the official
    /// library refuses). `offset`: the image offset of the key.
    #[error("invalid_utf8: a map key of {field} is not valid UTF-8 (JSON cannot hold it) at image offset {offset}")]
    InvalidUtf8 { field: String, offset: u64 },
    /// Messages nested deeper than the limit.
    #[error("too_deep: nesting deeper than {limit} at {at} {offset}")]
    TooDeep { limit: usize, at: &'static str, offset: u64 },
    #[error("bad_type: no message type with index {0}")]
    BadType(usize),
    /// The text is not JSON.
    #[error("json_syntax: {msg} at byte {offset}")]
    Syntax { offset: usize, msg: String },
    /// JSON that does not fit the schema (unknown field, wrong type, out of range...).
    #[error("json_value: {msg} at \"{path}\" (byte {offset})")]
    Value { path: String, offset: usize, msg: String },
}

impl JsonError {
    /// The error's kind, for one-line reports (`bad_image`, `json_syntax`, ...).
    pub fn kind(&self) -> &'static str {
        match self {
            JsonError::Image(_) => "bad_image",
            JsonError::InvalidUtf8 { .. } => "invalid_utf8",
            JsonError::TooDeep { .. } => "too_deep",
            JsonError::BadType(_) => "bad_type",
            JsonError::Syntax { .. } => "json_syntax",
            JsonError::Value { .. } => "json_value",
        }
    }
    /// Byte offset the error refers to (image offset when printing, text offset when
    /// parsing).
    pub fn offset(&self) -> u64 {
        match self {
            JsonError::Image(e) => e.offset,
            JsonError::TooDeep { offset, .. } | JsonError::InvalidUtf8 { offset, .. } => *offset,
            JsonError::BadType(_) => 0,
            JsonError::Syntax { offset, .. } | JsonError::Value { offset, .. } => *offset as u64,
        }
    }
}


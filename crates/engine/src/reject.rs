//! The one rejection type every engine returns, and its one text form.

/// Why an input was rejected. One list for every engine and wire format, with codes that
/// are stable (the C ABI returns them; the device runtime's error register holds them).
/// Protobuf kinds keep the hardware core's error-register numbers (1-14); object-graph
/// kinds start at 32.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum RejectKind {
    /// Input ends inside a tag, value, length-delimited field, count, type id or member.
    Truncated = 1,
    /// A varint longer than 10 bytes (5 for tags and length prefixes), or a tag over 32 bits.
    VarintTooLong = 2,
    FieldNumberZero = 3,
    /// Wire type 6 or 7.
    InvalidWireType = 4,
    /// A length reaching past its enclosing message or the input.
    LengthPastEnd = 5,
    /// Nesting deeper than `max_depth`.
    DepthExceeded = 6,
    /// A proto3 `string` that is not UTF-8.
    InvalidUtf8 = 7,
    /// An end-group tag that closes nothing, or a group without its end.
    GroupMismatch = 8,
    /// Packed fixed-width data whose length is not a multiple of the width.
    PackedLength = 9,
    /// A proto2 `required` field is missing (only engines built to enforce it).
    MissingRequired = 10,
    /// The image would exceed `max_image_bytes`.
    ImageTooLarge = 11,
    /// `base` is not 8-aligned, or `base + image size` does not fit the pointer width.
    BadBase = 12,
    /// The engine's memories are too small for this input (hardware cores).
    Capacity = 13,
    /// The input needs something this engine does not implement (hardware cores).
    Unsupported = 14,
    /// The caller's buffer is smaller than the image (`needed` says how large).
    BufferTooSmall = 15,
    /// Object graphs: the object count is larger than the input could hold.
    CountTooLarge = 32,
    /// Object graphs: a type id that no concrete class has.
    UnknownType = 33,
    /// Object graphs: a reference index not below the object count (and not null).
    BadReference = 34,
    /// Object graphs: a reference to an object of the wrong class.
    ReferenceType = 35,
    /// Object graphs: object 0 is not of the requested root class (or a subclass).
    RootType = 36,
    /// Object graphs: bytes after the last member of the last object.
    TrailingBytes = 37,
    /// Object graphs: the requested type is not a class.
    NotAClass = 38,
    /// Object-graph encoding: a header word that is no concrete class's register value.
    UnknownHeader = 39,
    /// Object-graph encoding: a pointer outside the memory being read.
    BadPointer = 40,
    /// Object-graph encoding: a member value that does not fit its wire width.
    ValueOutOfRange = 41,
    /// Object-graph encoding: more objects than the wire's 32-bit count and references hold.
    TooManyObjects = 42,
}

impl RejectKind {
    pub const ALL: [RejectKind; 26] = {
        use RejectKind::*;
        [
            Truncated, VarintTooLong, FieldNumberZero, InvalidWireType, LengthPastEnd, DepthExceeded, InvalidUtf8,
            GroupMismatch, PackedLength, MissingRequired, ImageTooLarge, BadBase, Capacity, Unsupported, BufferTooSmall,
            CountTooLarge, UnknownType, BadReference, ReferenceType, RootType, TrailingBytes, NotAClass, UnknownHeader,
            BadPointer, ValueOutOfRange, TooManyObjects,
        ]
    };

    /// The name `heapwire decode` prints (`truncated`, `length_past_end`, ...).
    pub fn name(self) -> &'static str {
        use RejectKind::*;
        match self {
            Truncated => "truncated",
            VarintTooLong => "varint_too_long",
            FieldNumberZero => "field_number_zero",
            InvalidWireType => "invalid_wire_type",
            LengthPastEnd => "length_past_end",
            DepthExceeded => "depth_exceeded",
            InvalidUtf8 => "invalid_utf8",
            GroupMismatch => "group_mismatch",
            PackedLength => "packed_length",
            MissingRequired => "missing_required",
            ImageTooLarge => "image_too_large",
            BadBase => "bad_base",
            Capacity => "capacity",
            Unsupported => "unsupported",
            BufferTooSmall => "buffer_too_small",
            CountTooLarge => "count_too_large",
            UnknownType => "unknown_type",
            BadReference => "bad_reference",
            ReferenceType => "reference_type",
            RootType => "root_type",
            TrailingBytes => "trailing_bytes",
            NotAClass => "not_a_class",
            UnknownHeader => "unknown_header",
            BadPointer => "bad_pointer",
            ValueOutOfRange => "value_out_of_range",
            TooManyObjects => "too_many_objects",
        }
    }

    /// The stable number (never 0, which means success).
    pub fn code(self) -> u32 {
        self as u32
    }

    pub fn from_code(code: u32) -> Option<RejectKind> {
        Self::ALL.into_iter().find(|k| k.code() == code)
    }

    pub fn from_name(name: &str) -> Option<RejectKind> {
        Self::ALL.into_iter().find(|k| k.name() == name)
    }
}

impl std::fmt::Display for RejectKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A rejected input: what went wrong and where. `offset` counts from the start of the
/// stream the caller sees (see [`Rejection::within`]); `message` is the message's index in
/// a delimited stream; `needed` is the image size for [`RejectKind::BufferTooSmall`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rejection {
    pub kind: RejectKind,
    pub offset: u64,
    pub message: Option<u64>,
    pub needed: u64,
}

impl Rejection {
    pub fn new(kind: RejectKind, offset: u64) -> Rejection {
        Rejection { kind, offset, message: None, needed: 0 }
    }

    /// This rejection of the message at byte `start` of a delimited stream, numbered `index`.
    pub fn within(mut self, start: u64, index: u64) -> Rejection {
        self.offset += start;
        self.message = Some(index);
        self
    }
}

/// `length_past_end at byte 17`, or `... at byte 17 (message 3)` in a stream: the line
/// `heapwire` prints after `rejected: `.
impl std::fmt::Display for Rejection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} at byte {}", self.kind.name(), self.offset)?;
        if let Some(i) = self.message {
            write!(f, " (message {i})")?;
        }
        Ok(())
    }
}

impl std::error::Error for Rejection {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_and_names_are_unique_and_round_trip() {
        for k in RejectKind::ALL {
            assert_ne!(k.code(), 0);
            assert_eq!(RejectKind::from_code(k.code()), Some(k));
            assert_eq!(RejectKind::from_name(k.name()), Some(k));
        }
        let mut codes: Vec<u32> = RejectKind::ALL.iter().map(|k| k.code()).collect();
        codes.sort_unstable();
        codes.dedup();
        assert_eq!(codes.len(), RejectKind::ALL.len());
        assert_eq!(RejectKind::from_name("no_such_kind"), None);
    }

    #[test]
    fn one_text_form() {
        let r = Rejection::new(RejectKind::LengthPastEnd, 5);
        assert_eq!(r.to_string(), "length_past_end at byte 5");
        assert_eq!(r.within(12, 3).to_string(), "length_past_end at byte 17 (message 3)");
    }
}

//! The compiled schema: what every engine gets and nothing else.
//!
//! A `CompiledSchema` is a list of message types (each a descriptor table plus its
//! struct layout) and a list of enums. Indices into those lists are the type ids
//! engines and devices use. See `docs/table-format.md` and `docs/image-layout.md`.

/// Field kinds, numbered as in `google/protobuf/descriptor.proto` so that a table
/// file written by heapwire can be read against protobuf documentation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Kind {
    Double = 1,
    Float = 2,
    Int64 = 3,
    UInt64 = 4,
    Int32 = 5,
    Fixed64 = 6,
    Fixed32 = 7,
    Bool = 8,
    String = 9,
    Group = 10,
    Message = 11,
    Bytes = 12,
    UInt32 = 13,
    Enum = 14,
    SFixed32 = 15,
    SFixed64 = 16,
    SInt32 = 17,
    SInt64 = 18,
}

/// Protobuf wire types.
pub mod wire_type {
    pub const VARINT: u8 = 0;
    pub const FIXED64: u8 = 1;
    pub const LEN: u8 = 2;
    pub const START_GROUP: u8 = 3;
    pub const END_GROUP: u8 = 4;
    pub const FIXED32: u8 = 5;
}

impl Kind {
    pub fn from_u8(v: u8) -> Option<Kind> {
        use Kind::*;
        Some(match v {
            1 => Double,
            2 => Float,
            3 => Int64,
            4 => UInt64,
            5 => Int32,
            6 => Fixed64,
            7 => Fixed32,
            8 => Bool,
            9 => String,
            10 => Group,
            11 => Message,
            12 => Bytes,
            13 => UInt32,
            14 => Enum,
            15 => SFixed32,
            16 => SFixed64,
            17 => SInt32,
            18 => SInt64,
            _ => return None,
        })
    }

    /// The wire type of one (unpacked) value of this kind.
    pub fn wire_type(self) -> u8 {
        use Kind::*;
        match self {
            Double | Fixed64 | SFixed64 => wire_type::FIXED64,
            Float | Fixed32 | SFixed32 => wire_type::FIXED32,
            Int64 | UInt64 | Int32 | UInt32 | Bool | Enum | SInt32 | SInt64 => wire_type::VARINT,
            String | Bytes | Message => wire_type::LEN,
            Group => wire_type::START_GROUP,
        }
    }

    /// Scalars that may be packed.
    pub fn is_packable(self) -> bool {
        !matches!(self, Kind::String | Kind::Bytes | Kind::Message | Kind::Group)
    }

    pub fn is_message(self) -> bool {
        matches!(self, Kind::Message | Kind::Group)
    }

    pub fn is_string_like(self) -> bool {
        matches!(self, Kind::String | Kind::Bytes)
    }

    /// Bytes one value occupies in the image (scalars; strings and messages use pointers).
    pub fn scalar_size(self) -> Option<u32> {
        use Kind::*;
        match self {
            Double | Int64 | UInt64 | Fixed64 | SFixed64 | SInt64 => Some(8),
            Float | Int32 | UInt32 | Fixed32 | SFixed32 | SInt32 | Enum => Some(4),
            Bool => Some(1),
            String | Bytes | Message | Group => None,
        }
    }

    pub fn proto_name(self) -> &'static str {
        use Kind::*;
        match self {
            Double => "double",
            Float => "float",
            Int64 => "int64",
            UInt64 => "uint64",
            Int32 => "int32",
            Fixed64 => "fixed64",
            Fixed32 => "fixed32",
            Bool => "bool",
            String => "string",
            Group => "group",
            Message => "message",
            Bytes => "bytes",
            UInt32 => "uint32",
            Enum => "enum",
            SFixed32 => "sfixed32",
            SFixed64 => "sfixed64",
            SInt32 => "sint32",
            SInt64 => "sint64",
        }
    }
}

/// How a field records that it was set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Presence {
    /// proto3 implicit presence, and repeated fields: present iff not default / non-empty.
    Implicit,
    /// Explicit presence through bit `n` of the struct's presence words.
    HasBit(u32),
    /// Member of oneof `n`: present iff the oneof's case word equals the field number.
    Oneof(u32),
    /// Singular message fields: present iff the pointer is not null.
    Pointer,
}

/// Field flags (bit values are part of the table file format).
pub mod field_flags {
    /// `repeated` (maps too).
    pub const REPEATED: u8 = 1 << 0;
    /// Encode packed (decode accepts both forms regardless).
    pub const PACKED: u8 = 1 << 1;
    /// Strings must be valid UTF-8 (proto3 `string`).
    pub const VALIDATE_UTF8: u8 = 1 << 2;
    /// Enum is closed (proto2): unknown values go to the unknown fields.
    pub const CLOSED_ENUM: u8 = 1 << 3;
    /// A `map<K,V>`: repeated entries of a map-entry message type.
    pub const MAP: u8 = 1 << 4;
    /// proto2 `required`.
    pub const REQUIRED: u8 = 1 << 5;
    pub const ALL: u8 = 0x3f;
}

/// A proto2 default value (`[default = ...]`), as the bits an engine would store.
#[derive(Clone, Debug, PartialEq)]
pub enum DefaultValue {
    /// Integers, enums, bools: sign-extended into 64 bits.
    Int(i64),
    /// Unsigned 64-bit.
    UInt(u64),
    Double(f64),
    Float(f32),
    Bytes(Vec<u8>),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Field {
    pub number: u32,
    pub name: String,
    pub json_name: String,
    pub kind: Kind,
    /// `field_flags::*`.
    pub flags: u8,
    pub presence: Presence,
    /// Byte offset of the field's storage in its struct (for oneof members: the union).
    pub offset: u32,
    /// Message index for `Message`/`Group`, enum index for `Enum`, otherwise `NONE`.
    pub sub: u32,
    pub default: Option<DefaultValue>,
}

pub const NONE: u32 = u32::MAX;

/// The identifier generated code uses for a field name: the name itself, or for an
/// extension (named by its bracketed full name, `[pkg.Scope.ext]`) the full name with
/// `_` for `.` (`pkg_Scope_ext`).
pub fn ident_name(name: &str) -> std::borrow::Cow<'_, str> {
    match name.strip_prefix('[').and_then(|n| n.strip_suffix(']')) {
        Some(full) => full.replace('.', "_").into(),
        None => name.into(),
    }
}

impl Field {
    pub fn is_repeated(&self) -> bool {
        self.flags & field_flags::REPEATED != 0
    }
    pub fn is_packed(&self) -> bool {
        self.flags & field_flags::PACKED != 0
    }
    pub fn is_map(&self) -> bool {
        self.flags & field_flags::MAP != 0
    }
    pub fn validates_utf8(&self) -> bool {
        self.flags & field_flags::VALIDATE_UTF8 != 0
    }
    pub fn is_closed_enum(&self) -> bool {
        self.flags & field_flags::CLOSED_ENUM != 0
    }
    pub fn is_required(&self) -> bool {
        self.flags & field_flags::REQUIRED != 0
    }
    /// An extension of its message (named `[pkg.ext]`, see `ident_name`).
    pub fn is_extension(&self) -> bool {
        self.name.starts_with('[')
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Oneof {
    pub name: String,
    /// Offset of the `u32` case word: 0 or the number of the member that is set.
    pub case_offset: u32,
    /// Offset and size of the storage shared by the members.
    pub storage_offset: u32,
    pub storage_size: u32,
}

/// Message flags (bit values are part of the table file format).
pub mod message_flags {
    pub const MAP_ENTRY: u32 = 1 << 0;
    /// Declared in a proto3 file.
    pub const PROTO3: u32 = 1 << 1;
    /// Declares extension ranges (JSON: a bracketed name it does not know is an unknown
    /// extension, which `ignore_unknown_fields` skips, rather than an error).
    pub const EXTENDABLE: u32 = 1 << 2;
    pub const ALL: u32 = 0x7;
}

#[derive(Clone, Debug, PartialEq)]
pub struct Message {
    pub full_name: String,
    /// Struct size in bytes, a multiple of `align`.
    pub size: u32,
    pub align: u32,
    /// `message_flags::*`.
    pub flags: u32,
    /// Offset of the first `u32` presence word; `hasbit_count` bits in all.
    pub hasbits_offset: u32,
    pub hasbit_count: u32,
    /// Offset of the unknown-fields byte range `{ptr, len}`.
    pub unknown_offset: u32,
    /// Sorted by field number.
    pub fields: Vec<Field>,
    pub oneofs: Vec<Oneof>,
}

impl Message {
    pub fn is_map_entry(&self) -> bool {
        self.flags & message_flags::MAP_ENTRY != 0
    }
    pub fn is_extendable(&self) -> bool {
        self.flags & message_flags::EXTENDABLE != 0
    }
    pub fn is_proto3(&self) -> bool {
        self.flags & message_flags::PROTO3 != 0
    }
    /// Index of the field with `number`, by binary search over the sorted table.
    pub fn field_index(&self, number: u32) -> Option<usize> {
        self.fields.binary_search_by_key(&number, |f| f.number).ok()
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct EnumValue {
    pub name: String,
    pub number: i32,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Enum {
    pub full_name: String,
    /// Closed (proto2) enums reject unknown values into the unknown fields.
    pub closed: bool,
    /// In declaration order; the first is the default.
    pub values: Vec<EnumValue>,
}

impl Enum {
    pub fn name_of(&self, number: i32) -> Option<&str> {
        self.values.iter().find(|v| v.number == number).map(|v| v.name.as_str())
    }
    pub fn number_of(&self, name: &str) -> Option<i32> {
        self.values.iter().find(|v| v.name == name).map(|v| v.number)
    }
    pub fn contains(&self, number: i32) -> bool {
        self.values.iter().any(|v| v.number == number)
    }
}

/// Width of pointers (and of lengths and counts) in the image.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PointerWidth {
    P32 = 4,
    P64 = 8,
}

impl PointerWidth {
    pub fn bytes(self) -> u32 {
        self as u32
    }
}

/// Layout choices fixed at compile time; recorded in the table file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LayoutOptions {
    pub pointer_width: PointerWidth,
    /// Every struct starts with one pointer-sized header word whose value comes from the
    /// per-type register (a vtable pointer or a type tag).
    pub header_words: bool,
}

impl Default for LayoutOptions {
    fn default() -> Self {
        LayoutOptions { pointer_width: PointerWidth::P64, header_words: false }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct CompiledSchema {
    pub layout: LayoutOptions,
    pub messages: Vec<Message>,
    pub enums: Vec<Enum>,
    /// Messages compiled as classes for object graphs (`objgraph.rs`); bases first.
    pub classes: Vec<crate::objgraph::Class>,
}

impl CompiledSchema {
    pub fn message_index(&self, full_name: &str) -> Option<usize> {
        let name = full_name.strip_prefix('.').unwrap_or(full_name);
        self.messages.iter().position(|m| m.full_name == name)
    }
    pub fn ptr(&self) -> u32 {
        self.layout.pointer_width.bytes()
    }
}

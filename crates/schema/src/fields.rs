//! The fields a message's table holds: its own, and the extensions of it declared
//! anywhere in the schema (proto2 `extend`, editions `extend`, custom options). An
//! extension is a field like any other in the table; its name and JSON name are both its
//! bracketed full name (`[pkg.Scope.ext]`), as the JSON mapping spells it.

use prost_reflect::{
    Cardinality, DynamicMessage, ExtensionDescriptor, FieldDescriptor, FileDescriptor, Kind, MessageDescriptor,
    OneofDescriptor, Value,
};

#[derive(Clone)]
pub(crate) enum Fd {
    Own(FieldDescriptor),
    Ext(ExtensionDescriptor),
}

impl Fd {
    /// A message's fields and extensions, by number.
    pub fn of(md: &MessageDescriptor) -> Vec<Fd> {
        let mut v: Vec<Fd> = md.fields().map(Fd::Own).chain(md.extensions().map(Fd::Ext)).collect();
        v.sort_by_key(|f| f.number());
        v
    }
    pub fn number(&self) -> u32 {
        match self {
            Fd::Own(f) => f.number(),
            Fd::Ext(x) => x.number(),
        }
    }
    pub fn full_name(&self) -> &str {
        match self {
            Fd::Own(f) => f.full_name(),
            Fd::Ext(x) => x.full_name(),
        }
    }
    pub fn name(&self) -> &str {
        match self {
            Fd::Own(f) => f.name(),
            Fd::Ext(x) => x.json_name(),
        }
    }
    pub fn json_name(&self) -> &str {
        match self {
            Fd::Own(f) => f.json_name(),
            Fd::Ext(x) => x.json_name(),
        }
    }
    pub fn kind(&self) -> Kind {
        match self {
            Fd::Own(f) => f.kind(),
            Fd::Ext(x) => x.kind(),
        }
    }
    pub fn is_group(&self) -> bool {
        match self {
            Fd::Own(f) => f.is_group(),
            Fd::Ext(x) => x.is_group(),
        }
    }
    pub fn is_map(&self) -> bool {
        matches!(self, Fd::Own(f) if f.is_map())
    }
    pub fn cardinality(&self) -> Cardinality {
        match self {
            Fd::Own(f) => f.cardinality(),
            Fd::Ext(x) => x.cardinality(),
        }
    }
    pub fn supports_presence(&self) -> bool {
        match self {
            Fd::Own(f) => f.supports_presence(),
            Fd::Ext(x) => x.supports_presence(),
        }
    }
    pub fn options(&self) -> DynamicMessage {
        match self {
            Fd::Own(f) => f.options(),
            Fd::Ext(x) => x.options(),
        }
    }
    /// Whether `[default = ...]` is written.
    pub fn has_default(&self) -> bool {
        match self {
            Fd::Own(f) => f.field_descriptor_proto().default_value.is_some(),
            Fd::Ext(x) => x.field_descriptor_proto().default_value.is_some(),
        }
    }
    pub fn default_value(&self) -> Value {
        match self {
            Fd::Own(f) => f.default_value(),
            Fd::Ext(x) => x.default_value(),
        }
    }
    /// The file that declares the field (for an extension: not the extendee's).
    pub fn file(&self) -> FileDescriptor {
        match self {
            Fd::Own(f) => f.parent_file(),
            Fd::Ext(x) => x.parent_file(),
        }
    }
    /// Where the field's features come from: its message, or an extension's scope
    /// (the message its `extend` block stands in; `None` at file level).
    pub fn scope(&self) -> Option<MessageDescriptor> {
        match self {
            Fd::Own(f) => Some(f.parent_message().clone()),
            Fd::Ext(x) => x.parent_message(),
        }
    }
    /// A real or synthetic oneof the field belongs to.
    pub fn oneof(&self) -> Option<OneofDescriptor> {
        match self {
            Fd::Own(f) => f.containing_oneof(),
            Fd::Ext(_) => None,
        }
    }
}

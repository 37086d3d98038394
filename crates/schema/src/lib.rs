//! heapwire-schema: the schema compiler.
//!
//! `.proto` (proto2 and proto3) → [`CompiledSchema`]: per message type a descriptor
//! table (field number → kind, offset, presence, sub-type, flags) and its struct layout,
//! serializable to the versioned table file every engine and device is installed from.

mod bundled;
mod compile;
pub mod descriptor_set;
pub mod features;
mod fields;
mod layout;
mod model;
mod objgraph;
pub mod table_file;

pub use compile::{compile_files, from_pool, from_pool_editions, MAX_DECLARATION_DEPTH, MAX_FIELD_NUMBER};
pub use layout::slot_size_align;
pub use model::*;
pub use objgraph::{validate_classes, Class, ClassMember, OPTIONS_PROTO, OPTIONS_PROTO_NAME, REF_WIRE_WIDTH};

#[derive(Debug, thiserror::Error)]
pub enum SchemaError {
    #[error("{0}")]
    Io(String),
    #[error("{0}")]
    Parse(String),
    #[error("{0}")]
    Invalid(String),
    #[error("unsupported: {0}")]
    Unsupported(String),
    #[error("table file at byte {offset}: {reason}")]
    Table { offset: usize, reason: String },
    #[error("unknown message type {0}")]
    UnknownType(String),
}

/// Loads a schema: a table file written by `heapwire compile` (recognized by its magic),
/// a serialized `FileDescriptorSet` (`protoc --include_imports --descriptor_set_out`), or
/// a `.proto` file, compiled with `layout`.
pub fn load(path: &std::path::Path, includes: &[std::path::PathBuf], layout: LayoutOptions) -> Result<CompiledSchema, SchemaError> {
    let head = {
        use std::io::Read;
        let mut f = std::fs::File::open(path).map_err(|e| SchemaError::Io(format!("{}: {e}", path.display())))?;
        let mut b = [0u8; 8];
        let n = f.read(&mut b).unwrap_or(0);
        b[..n].to_vec()
    };
    if head == table_file::MAGIC {
        let bytes = std::fs::read(path).map_err(|e| SchemaError::Io(format!("{}: {e}", path.display())))?;
        table_file::read(&bytes)
    } else if head.first() == Some(&0x0a) && {
        let bytes = std::fs::read(path).map_err(|e| SchemaError::Io(format!("{}: {e}", path.display())))?;
        descriptor_set::looks_like(&bytes)
    } {
        let bytes = std::fs::read(path).map_err(|e| SchemaError::Io(format!("{}: {e}", path.display())))?;
        descriptor_set::compile_descriptor_set(&bytes, layout)
    } else {
        compile_files(&[path.to_path_buf()], includes, layout)
    }
}

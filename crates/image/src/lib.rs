//! heapwire-image: the heap image as a thing to read and to describe.
//!
//! `rt` is the support module generated Rust views depend on; `codegen` writes the
//! C header and the Rust views for a compiled schema.

pub mod codegen;
pub mod rt;

pub use codegen::{c_header, rust_views};

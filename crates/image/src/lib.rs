//! heapwire-image: the heap image as a thing to read and to describe.
//!
//! `view` reads an image with bounds checks and errors that say what was wrong (for
//! untrusted images); `rt` is the lenient support module generated Rust views depend
//! on; `codegen` writes the C header and the Rust views for a compiled schema.

pub mod codegen;
pub mod rt;
mod view;

pub use codegen::{c_header, rust_views};
pub use view::*;

//! heapwire-image: the heap image as a thing to read and to describe.
//!
//! `view` reads an image with bounds checks and errors that say what was wrong (for
//! untrusted images); `rt` is the lenient support module generated Rust views depend
//! on (the views themselves come from `heapwire-emit`).

pub mod rt;
mod view;

pub use view::*;

//! Protobuf binary ⇄ heap image: [`decode::Decoder`] (wire → image, the reference for
//! `docs/image-layout.md`) and [`encode`] (image → wire).

pub mod decode;
pub mod encode;
pub mod wire;

#[cfg(test)]
mod decode_tests;

pub use decode::{DecodeError, DecodeOptions, Decoder};

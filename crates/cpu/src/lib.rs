//! heapwire-cpu: the CPU engine — the reference and the fast path.
//!
//! One door per direction: compiled schema + wire bytes in, heap image out
//! ([`decode::Decoder`]); image out to wire ([`encode`]) and JSON ([`json`]).

pub mod decode;
pub mod encode;
pub mod json;
pub mod objgraph;
mod wire;

pub use decode::{DecodeError, DecodeOptions, Decoder, ErrorKind};
pub use wire::{put_varint, varint_len};

#[cfg(test)]
mod decode_tests;

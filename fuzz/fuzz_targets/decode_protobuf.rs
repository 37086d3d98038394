//! Any bytes, any schema: decode answers Ok or an error, never panics, and a
//! successful image has a size that is a multiple of 8.
#![cfg_attr(fuzzing, no_main)]

#[path = "common.rs"]
mod common;

/// The target's check of one input (also replayed by `cargo test`, see
/// crates/cli/tests/fuzz_regressions.rs).
pub fn check(data: &[u8]) {
    if data.is_empty() {
        return;
    }
    let all = common::schemas();
    let (s, ty) = &all[data[0] as usize % all.len()];
    let mut out = Vec::new();
    let opts = heapwire_cpu::DecodeOptions { base: 0x10000, max_image_bytes: 1 << 24, ..Default::default() };
    if heapwire_cpu::Decoder::new(s).decode(*ty, &data[1..], &opts, &mut out).is_ok() {
        assert_eq!(out.len() % 8, 0);
    }
}

#[cfg(fuzzing)]
libfuzzer_sys::fuzz_target!(|data: &[u8]| check(data));

//! Any bytes, any schema: decode answers Ok or an error, never panics, a successful
//! image has a size that is a multiple of 8, and `decode` (usually the one-pass fast
//! path) answers exactly as the two-pass reference: the same image or the same error.
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
    let (mut out, mut want) = (Vec::new(), Vec::new());
    let opts = heapwire_cpu::DecodeOptions { base: 0x10000, max_image_bytes: 1 << 24, ..Default::default() };
    let mut d = heapwire_cpu::Decoder::new(s);
    let fast = d.decode(*ty, &data[1..], &opts, &mut out);
    let reference = d.decode_reference(*ty, &data[1..], &opts, &mut want);
    assert_eq!(fast, reference, "decode and the reference disagree");
    if fast.is_ok() {
        assert_eq!(out.len() % 8, 0);
        assert!(out == want, "decode's image is not the reference's");
    }
}

#[cfg(fuzzing)]
libfuzzer_sys::fuzz_target!(|data: &[u8]| check(data));

//! decode → encode → decode: whatever decodes must encode, and the re-encoding must
//! decode to an image that encodes to the same bytes again.
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
    let opts = heapwire_cpu::DecodeOptions { max_image_bytes: 1 << 24, ..Default::default() };
    let mut dec = heapwire_cpu::Decoder::new(s);
    let mut img = Vec::new();
    if dec.decode(*ty, &data[1..], &opts, &mut img).is_err() {
        return;
    }
    let view = heapwire_image::ImageView::for_schema(s, &img, 0);
    let mut wire = Vec::new();
    heapwire_cpu::protobuf::encode::encode(s, *ty, &view, 0, &mut wire).expect("a decoded image encodes");
    let mut img2 = Vec::new();
    dec.decode(*ty, &wire, &opts, &mut img2).expect("an encoding decodes");
    let view2 = heapwire_image::ImageView::for_schema(s, &img2, 0);
    let mut wire2 = Vec::new();
    heapwire_cpu::protobuf::encode::encode(s, *ty, &view2, 0, &mut wire2).expect("re-encode");
    assert_eq!(wire, wire2, "encoding is stable");
}

#[cfg(fuzzing)]
libfuzzer_sys::fuzz_target!(|data: &[u8]| check(data));

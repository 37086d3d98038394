//! Object-graph wire bytes from the fuzzer, for the paper's expression-tree classes in
//! both layouts: decode answers Ok or an error, never panics, and the engine's fast path
//! gives the reference decoder's image or error; whatever decodes encodes
//! (objects reachable from the root, in prefix order) to a graph that decodes, and
//! encoding that again gives the same bytes.
#![cfg_attr(fuzzing, no_main)]
use std::sync::OnceLock;

use heapwire_cpu::objgraph::{encode, reference::ReferenceDecoder, ImageMemory, ObjDecoder};
use heapwire_cpu::DecodeOptions;
use heapwire_schema::{compile_files, CompiledSchema, LayoutOptions, PointerWidth};

#[path = "common.rs"]
#[allow(dead_code)] // only repo_root
mod common;

fn schemas() -> &'static [CompiledSchema; 2] {
    static S: OnceLock<[CompiledSchema; 2]> = OnceLock::new();
    S.get_or_init(|| {
        let p = common::repo_root().join("examples/expression_tree/expr.proto");
        let c = |pw| compile_files(std::slice::from_ref(&p), &[], LayoutOptions { pointer_width: pw, header_words: false }).unwrap();
        [c(PointerWidth::P64), c(PointerWidth::P32)]
    })
}

/// The target's check of one input (also replayed by `cargo test`, see
/// crates/cli/tests/fuzz_regressions.rs).
pub fn check(data: &[u8]) {
    if data.is_empty() {
        return;
    }
    let s = &schemas()[(data[0] & 1) as usize];
    let root = s.message_index("expr.Node").unwrap();
    let base = 0x1000;
    let opts = DecodeOptions { base, max_image_bytes: 1 << 24, ..Default::default() };
    let mut d = ObjDecoder::new(s);
    let mut img = Vec::new();
    let r = d.decode(root, &data[1..], &opts, &mut img);
    let mut want = Vec::new();
    assert_eq!(r, ReferenceDecoder::new(s).decode(root, &data[1..], &opts, &mut want), "fast path and reference answer alike");
    assert_eq!(img, want, "fast path and reference write the same image");
    if r.is_ok() {
        let mut wire = Vec::new();
        let at = if img.is_empty() { 0 } else { base };
        encode(s, d.tables(), &ImageMemory { bytes: &img, base }, at, root, &[], &mut wire).expect("a decoded graph encodes");
        let mut img2 = Vec::new();
        ObjDecoder::new(s).decode(root, &wire, &opts, &mut img2).expect("its encoding decodes");
        let mut d2 = ObjDecoder::new(s);
        d2.decode(root, &wire, &opts, &mut img2).unwrap();
        let mut wire2 = Vec::new();
        let at2 = if img2.is_empty() { 0 } else { base };
        encode(s, d2.tables(), &ImageMemory { bytes: &img2, base }, at2, root, &[], &mut wire2).expect("re-encode");
        assert_eq!(wire, wire2, "encoding is stable");
    }
}

#[cfg(fuzzing)]
libfuzzer_sys::fuzz_target!(|data: &[u8]| check(data));

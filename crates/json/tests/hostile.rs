//! Untrusted inputs never panic, hang or overflow the stack: random and mutated heap
//! images through the JSON printer and the encoder, random and mutated JSON text through
//! the JSON parser.

use heapwire_cpu::protobuf::decode::{DecodeOptions, Decoder};
use heapwire_cpu::protobuf::encode::encode;
use heapwire_json::protobuf as json;
use heapwire_image::ImageView;
use heapwire_schema::{compile_files, CompiledSchema, LayoutOptions, PointerWidth};
use proptest::prelude::*;
use std::path::Path;
use std::sync::OnceLock;

fn schemas() -> &'static [CompiledSchema] {
    static S: OnceLock<Vec<CompiledSchema>> = OnceLock::new();
    S.get_or_init(|| {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
        let mut v = Vec::new();
        for f in ["jt3.proto", "jt2.proto"] {
            for layout in [
                LayoutOptions::default(),
                LayoutOptions { pointer_width: PointerWidth::P32, header_words: true },
            ] {
                v.push(compile_files(&[dir.join(f)], std::slice::from_ref(&dir), layout).unwrap());
            }
        }
        v
    })
}

/// A valid image to mutate: a message with most fields set, decoded from JSON.
fn seed_image(s: &CompiledSchema, mi: usize, base: u64) -> Vec<u8> {
    let name = &s.messages[mi].full_name;
    let text: &[u8] = match name.as_str() {
        "jt3.All" => br#"{"i32":1,"i64":"2","s":"hello","by":"AAEC","e":"BLUE","sub":{"a":1,"next":{"s":"x"}},
            "ri32":[1,2,3],"rs":["a","bc"],"rsub":[{"a":1},{"s":"z"}],"mStr":{"k":1,"l":2},"mI64":{"5":{"a":3}},
            "osub":{"a":9},"optS":"o","rdb":[1.5],"rby":["AA=="]}"#,
        "jt2.P2" => br#"{"req":1,"os":"s","grp":{"ga":1,"gs":["q"]},"node":{"left":{"id":2},"kids":[{},{"name":"n"}]},
            "cNode":{"id":4},"nodes":{"a":{"id":1}},"kinds":{"1":"K_ONE"},"rkPacked":["K_ONE","K_TEN"]}"#,
        _ => b"{}",
    };
    let mut wire = Vec::new();
    json::from_json(s, mi, text, &mut wire).unwrap();
    let mut img = Vec::new();
    let opts = DecodeOptions { base, ..Default::default() };
    Decoder::new(s).decode(mi, &wire, &opts, &mut img).unwrap();
    img
}

fn exercise(s: &CompiledSchema, mi: usize, img: &[u8], base: u64, root: usize) {
    let view = ImageView::for_schema(s, img, base);
    let mut out = Vec::new();
    if json::to_json_into(s, mi, &view, root, &mut out).is_ok() {
        assert!(std::str::from_utf8(&out).is_ok());
    }
    let mut wire = Vec::new();
    if encode(s, mi, &view, root, &mut wire).is_ok() {
        // Whatever the encoder accepts is well-formed enough for the decoder to answer.
        let _ = Decoder::new(s).decode(mi, &wire, &DecodeOptions::default(), &mut Vec::new());
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn random_images_never_panic(si in 0usize..4, mi in 0usize..64, bytes in proptest::collection::vec(any::<u8>(), 0..512),
                                 base in prop_oneof![Just(0u64), Just(8u64), Just(0x1000u64)], root in 0usize..64) {
        let s = &schemas()[si];
        let mi = mi % s.messages.len();
        exercise(s, mi, &bytes, base, root);
    }

    #[test]
    fn mutated_images_never_panic(si in 0usize..4, which in 0usize..2, base in prop_oneof![Just(0u64), Just(0x1000u64)],
                                  muts in proptest::collection::vec((any::<usize>(), any::<u8>(), 0u8..4), 1..8)) {
        let s = &schemas()[si];
        let name = if si < 2 { ["jt3.All", "jt3.Sub"][which] } else { ["jt2.P2", "jt2.Node"][which] };
        let mi = s.message_index(name).unwrap();
        let mut img = seed_image(s, mi, base);
        for (pos, val, how) in muts {
            if img.is_empty() { break; }
            let p = pos % img.len();
            match how {
                0 => img[p] = val,
                1 => img[p] ^= 1 << (val % 8),
                // Point a word at another place inside the image (cycles, sharing).
                2 => {
                    let pw = s.ptr() as usize;
                    let p = p / pw * pw;
                    if p + pw <= img.len() {
                        let target = base + (val as u64 % (img.len() as u64 / 8 + 1)) * 8;
                        img[p..p + pw].copy_from_slice(&target.to_le_bytes()[..pw]);
                    }
                }
                _ => { let n = img.len(); img.truncate(n - p.min(n) / 2); }
            }
        }
        exercise(s, mi, &img, base, 0);
    }

    #[test]
    fn random_json_never_panics(si in 0usize..4, mi in 0usize..64, text in "[\\[\\]{}\":,0-9a-zA-Z.eE+\\- \\\\nul]{0,200}") {
        let s = &schemas()[si];
        let mi = mi % s.messages.len();
        let _ = json::from_json(s, mi, text.as_bytes(), &mut Vec::new());
    }

    #[test]
    fn mutated_json_never_panics(pos in any::<usize>(), del in 0usize..5, ins in "[\\[\\]{}\":,0-9a-zA-Z.\\-\\\\ ]{0,6}") {
        let s = &schemas()[0];
        let mi = s.message_index("jt3.All").unwrap();
        let mut text = r#"{"i32":1,"i64":"2","s":"hello","by":"AAEC","e":"BLUE","sub":{"a":1,"next":{"s":"x"}},"ri32":[1,2,3],"rsub":[{"a":1},{"s":"z"}],"mStr":{"k":1},"mI64":{"5":{"a":3}},"osub":{"a":9},"rdb":[1.5,"NaN"]}"#.to_string();
        let p = pos % text.len();
        let end = (p + del).min(text.len());
        if text.is_char_boundary(p) && text.is_char_boundary(end) {
            text.replace_range(p..end, &ins);
        }
        let mut wire = Vec::new();
        if json::from_json(s, mi, text.as_bytes(), &mut wire).is_ok() {
            // Whatever the parser accepts, the decoder accepts.
            Decoder::new(s).decode(mi, &wire, &DecodeOptions::default(), &mut Vec::new()).unwrap();
        }
    }
}

//! Object graphs end to end: the CPU engine's decoder and serializer (`heapwire-cpu`)
//! and their JSON form (this crate), on the paper's expression tree and a class zoo.

use std::path::PathBuf;

use heapwire_schema::{compile_files, CompiledSchema, LayoutOptions, PointerWidth};
use proptest::prelude::*;

use heapwire_cpu::objgraph::*;
use heapwire_cpu::protobuf::DecodeOptions;
use heapwire_engine::RejectKind;
use heapwire_json::objgraph as json;
use heapwire_testkit::scaled_tree;

fn expr(pw: PointerWidth) -> CompiledSchema {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/expression_tree/expr.proto");
    compile_files(&[p], &[], LayoutOptions { pointer_width: pw, header_words: false }).expect("compiles")
}

fn idx(s: &CompiledSchema, n: &str) -> usize {
    s.message_index(n).unwrap()
}

/// The paper's section 3.1 table, byte for byte.
fn paper_bytes() -> Vec<u8> {
    let mut v = Vec::new();
    for w in [5u32, 1, 0, 1, 0, 0, 1, 2] {
        v.extend_from_slice(&w.to_le_bytes());
    }
    v.push(0); // add: eAddition
    v.extend_from_slice(&3u32.to_le_bytes());
    v.extend_from_slice(&3u32.to_le_bytes());
    v.extend_from_slice(&4u32.to_le_bytes());
    v.push(2); // mult: eMultiplication
    v.extend_from_slice(&5u32.to_le_bytes());
    v.extend_from_slice(&4u32.to_le_bytes());
    assert_eq!(v.len(), 54);
    v
}

fn opts(base: u64) -> DecodeOptions {
    DecodeOptions { base, ..Default::default() }
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap())
}

/// Evaluates the expression tree in a 32-bit image at `base` (iteratively).
fn eval32(s: &CompiledSchema, img: &[u8], base: u64, root: u64) -> i64 {
    let lit = idx(s, "expr.Literal") as u32;
    // Post-order with an explicit stack.
    let mut stack = vec![(root, false)];
    let mut vals: Vec<i64> = Vec::new();
    while let Some((p, done)) = stack.pop() {
        let o = (p - base) as usize;
        if u32_at(img, o) == lit {
            vals.push(u32_at(img, o + 12) as i32 as i64);
        } else if !done {
            stack.push((p, true));
            stack.push((u32_at(img, o + 8) as u64, false));
            stack.push((u32_at(img, o + 4) as u64, false));
        } else {
            let r = vals.pop().unwrap();
            let l = vals.pop().unwrap();
            vals.push(match u32_at(img, o + 12) {
                0 => l + r,
                1 => l - r,
                2 => l * r,
                _ => l / r,
            });
        }
    }
    vals[0]
}

#[test]
fn paper_example_32_bit_is_the_papers_heap() {
    let s = expr(PointerWidth::P32);
    let mut d = ObjDecoder::new(&s);
    let mut img = Vec::new();
    let base = 0x1000;
    d.decode(idx(&s, "expr.Node"), &paper_bytes(), &opts(base), &mut img).unwrap();
    assert_eq!(img.len(), 5 * 16);
    let (lit, op) = (idx(&s, "expr.Literal") as u32, idx(&s, "expr.Operation") as u32);
    let words: Vec<u32> = (0..20).map(|i| u32_at(&img, 4 * i)).collect();
    #[rustfmt::skip]
    let want = vec![
        op, 0x1010, 0x1020, 0,   // add = l3 + mult
        lit, 0, 0, 3,            // l3
        op, 0x1030, 0x1040, 2,   // mult = l5 * l4
        lit, 0, 0, 5,
        lit, 0, 0, 4,
    ];
    assert_eq!(words, want);
    assert_eq!(eval32(&s, &img, base, base), 23);
    // And back: the serializer reproduces the 54 bytes from the image.
    let mut wire = Vec::new();
    encode(&s, d.tables(), &ImageMemory { bytes: &img, base }, base, idx(&s, "expr.Node"), &[], &mut wire).unwrap();
    assert_eq!(wire, paper_bytes());
}

#[test]
fn paper_example_64_bit_layout_and_registers() {
    let s = expr(PointerWidth::P64);
    let mut d = ObjDecoder::new(&s);
    let mut img = Vec::new();
    let mut words = vec![0u64; s.messages.len()];
    words[idx(&s, "expr.Literal")] = 0x5555_0000_1000;
    words[idx(&s, "expr.Operation")] = 0x5555_0000_2000;
    let o = DecodeOptions { base: 0x7f00_0000_0000, type_words: words.clone(), ..Default::default() };
    d.decode(idx(&s, "expr.Operation"), &paper_bytes(), &o, &mut img).unwrap();
    assert_eq!(img.len(), 5 * 32);
    let q = |at: usize| u64::from_le_bytes(img[at..at + 8].try_into().unwrap());
    assert_eq!(q(0), 0x5555_0000_2000);
    assert_eq!(q(8), 0x7f00_0000_0020);
    assert_eq!(q(16), 0x7f00_0000_0040);
    assert_eq!(u32_at(&img, 24), 0);
    assert_eq!(q(32), 0x5555_0000_1000);
    assert_eq!((q(40), q(48), u32_at(&img, 56)), (0, 0, 3));
    assert_eq!(u32_at(&img, 64 + 24), 2);
    let mut wire = Vec::new();
    encode(&s, d.tables(), &ImageMemory { bytes: &img, base: o.base }, o.base, idx(&s, "expr.Node"), &words, &mut wire).unwrap();
    assert_eq!(wire, paper_bytes());
    // The root type is checked: a Literal root is refused.
    assert_eq!(d.decode(idx(&s, "expr.Literal"), &paper_bytes(), &o, &mut img).unwrap_err().kind, RejectKind::RootType);
}

/// Builds a graph image by hand (64-bit, registers = message indices) to serialize.
struct G {
    img: Vec<u8>,
    lit: u64,
    op: u64,
}

impl G {
    fn new(s: &CompiledSchema) -> G {
        G { img: Vec::new(), lit: idx(s, "expr.Literal") as u64, op: idx(s, "expr.Operation") as u64 }
    }
    fn obj(&mut self, words: [u64; 4]) -> u64 {
        let at = self.img.len() as u64;
        for w in words {
            self.img.extend_from_slice(&w.to_le_bytes());
        }
        at
    }
    fn set(&mut self, obj: u64, slot: usize, v: u64) {
        let at = obj as usize + 8 * slot;
        self.img[at..at + 8].copy_from_slice(&v.to_le_bytes());
    }
}

#[test]
fn shared_objects_and_cycles_survive() {
    let s = expr(PointerWidth::P64);
    let mut g = G::new(&s);
    let base = 0x10000u64;
    // add(x, x) with one shared literal x, and a cycle: mult.right = add.
    let add = g.obj([g.op, 0, 0, 0]);
    let mult = g.obj([g.op, 0, 0, 2]);
    let x = g.obj([g.lit, 0, 0, 7]);
    g.set(add, 1, base + mult);
    g.set(add, 2, base + x);
    g.set(mult, 1, base + x);
    g.set(mult, 2, base + add);
    let t = Tables::new(&s);
    let mut wire = Vec::new();
    encode(&s, &t, &ImageMemory { bytes: &g.img, base }, base + add, idx(&s, "expr.Node"), &[], &mut wire).unwrap();
    // Prefix order: add(0), mult(1), x(2); every object once.
    assert_eq!(u32_at(&wire, 0), 3);
    assert_eq!(wire.len(), 4 + 12 + 9 + 9 + 4);
    let refs = (u32_at(&wire, 16), u32_at(&wire, 20), u32_at(&wire, 25), u32_at(&wire, 29));
    assert_eq!(refs, (1, 2, 2, 0));
    let mut d = ObjDecoder::new(&s);
    let mut img = Vec::new();
    d.decode(idx(&s, "expr.Node"), &wire, &opts(base), &mut img).unwrap();
    let q = |at: usize| u64::from_le_bytes(img[at..at + 8].try_into().unwrap());
    assert_eq!(q(8), base + 32); // add.left = mult
    assert_eq!(q(16), base + 64); // add.right = x (shared)
    assert_eq!(q(32 + 8), base + 64); // mult.left = x (same object)
    assert_eq!(q(32 + 16), base); // mult.right = add (cycle)
    // Re-encoding the decoded image gives the same bytes.
    let mut again = Vec::new();
    encode(&s, d.tables(), &ImageMemory { bytes: &img, base }, base, idx(&s, "expr.Node"), &[], &mut again).unwrap();
    assert_eq!(again, wire);
    // JSON round trip.
    let mut js = Vec::new();
    json::print_json(&d, &img, base, &mut js);
    let text = String::from_utf8(js).unwrap();
    assert!(text.contains("\"left\": {\"@ref\": 1}"), "{text}");
    let mut back = Vec::new();
    json::parse_json(&s, d.tables(), idx(&s, "expr.Node"), &text, &mut back).unwrap();
    assert_eq!(back, wire);
}

#[test]
fn scaled_tree_sizes_match_the_paper() {
    let s = expr(PointerWidth::P32);
    let mut d = ObjDecoder::new(&s);
    let mut img = Vec::new();
    for n in [1usize, 2, 10, 127] {
        let w = scaled_tree::wire(n);
        // The paper's 21n+12 is our wire (count, types, members); its request adds the
        // 4-byte heap pointer: 2,683 bytes for n = 127, as section 6.3.1 reports.
        assert_eq!(w.len(), 21 * n + 12);
        if n == 127 {
            assert_eq!(w.len() + 4, 2683);
        }
        d.decode(idx(&s, "expr.Node"), &w, &opts(0x100), &mut img).unwrap();
        assert_eq!(img.len(), 32 * n + 16);
    }
}

#[test]
fn million_long_chain_encodes_decodes_and_prints() {
    let s = expr(PointerWidth::P64);
    let w = scaled_tree::wire(500_000); // 1,000,001 objects
    let mut d = ObjDecoder::new(&s);
    let mut img = Vec::new();
    let base = 0x1_0000_0000;
    d.decode(idx(&s, "expr.Node"), &w, &opts(base), &mut img).unwrap();
    let mut again = Vec::new();
    encode(&s, d.tables(), &ImageMemory { bytes: &img, base }, base, idx(&s, "expr.Node"), &[], &mut again).unwrap();
    assert_eq!(again, w);
    let mut js = Vec::new();
    json::print_json(&d, &img, base, &mut js);
    let mut back = Vec::new();
    json::parse_json(&s, d.tables(), idx(&s, "expr.Node"), std::str::from_utf8(&js).unwrap(), &mut back).unwrap();
    assert_eq!(back, w);
}

/// The JSON text of a graph: what the parser accepts beyond strict JSON (numbers are
/// read as runs and checked when converted) and where its errors point.
#[test]
fn json_text_errors_and_offsets() {
    let s = expr(PointerWidth::P64);
    let t = Tables::new(&s);
    let parse = |text: &str| {
        let mut out = Vec::new();
        json::parse_json(&s, &t, idx(&s, "expr.Node"), text, &mut out).map(|_| out).map_err(|e| (e.kind, e.offset))
    };
    let doc = |ty: &str, value: &str| format!("{{\"objects\": [{{\"@type\": {ty}, \"value\": {value}}}]}}");
    let three = parse(&doc("\"expr.Literal\"", "3")).unwrap();
    for v in ["03", "3.", "3.0", "0.3e1", "\"3\""] {
        assert_eq!(parse(&doc("\"expr.Literal\"", v)).as_ref(), Ok(&three), "{v}");
    }
    assert_eq!(parse(&doc(r#""expr.Lit\u0065ral""#, "3")).as_ref(), Ok(&three));
    let at = |text: &str, what: &str| text.find(what).unwrap();
    for (text, kind, off) in [
        (doc("\"expr.Literal\"", "1-2"), "bad_value", None),
        (doc("\"expr.Literal\"", "-"), "bad_value", None),
        (doc("\"expr.Literal\"", "tru"), "invalid_json", None),
        (doc("\"expr.Literal\"", "[]"), "invalid_json", None),
        (doc(r#""\ud83d\ude00""#, "3"), "unknown_type", Some("\"\\ud83d")),
        (doc(r#""expr.\x""#, "3"), "invalid_json", Some("x\"")),
        (doc(r#""expr.\u12""#, "3"), "invalid_json", Some("12")),
        (doc("\"expr.\u{1}\"", "3"), "invalid_json", Some("\u{1}")),
        (doc("\"expr.Literal\"", "3") + " x", "invalid_json", Some(" x")),
    ] {
        let off = match off {
            Some(w) => at(&text, w) + (w == " x") as usize,
            None => at(&text, "\"value\": ") + 9,
        };
        assert_eq!(parse(&text), Err((kind, off)), "{text}");
    }
    // An unterminated string is an error at the end of the text.
    let text = "{\"objects\": [{\"@type\": \"expr.Lit";
    assert_eq!(parse(text), Err(("invalid_json", text.len())));
    assert_eq!(parse(&format!("{text}\\")), Err(("invalid_json", text.len() + 1)));
}

fn kind_of(s: &CompiledSchema, w: &[u8]) -> (RejectKind, u64) {
    let mut d = ObjDecoder::new(s);
    let mut img = Vec::new();
    let e = d.decode(idx(s, "expr.Node"), w, &opts(0), &mut img).unwrap_err();
    (e.kind, e.offset)
}

#[test]
fn malformed_inputs_are_clean_errors_with_offsets() {
    let s = expr(PointerWidth::P32);
    let good = paper_bytes();
    use RejectKind::*;
    assert_eq!(kind_of(&s, &[]), (Truncated, 0));
    assert_eq!(kind_of(&s, &[5, 0]), (Truncated, 0));
    // Count larger than the input can hold.
    let mut w = good.clone();
    w[0..4].copy_from_slice(&100u32.to_le_bytes());
    assert_eq!(kind_of(&s, &w), (CountTooLarge, 0));
    w[0..4].copy_from_slice(&u32::MAX.to_le_bytes());
    assert_eq!(kind_of(&s, &w), (CountTooLarge, 0));
    // Unknown type id (object 2).
    let mut w = good.clone();
    w[12] = 9;
    assert_eq!(kind_of(&s, &w), (UnknownType, 12));
    // Reference index out of range: add.right at byte 28.
    let mut w = good.clone();
    w[28] = 5;
    assert_eq!(kind_of(&s, &w), (BadReference, 28));
    // A reference to an object of the wrong class is impossible here (every class is a
    // Node); use the root check instead: object 0 a Literal is fine for Node...
    // Truncated members: cut inside the last literal's value.
    assert_eq!(kind_of(&s, &good[..52]), (Truncated, 50));
    assert_eq!(kind_of(&s, &good[..33]), (Truncated, 33));
    // Trailing bytes.
    let mut w = good.clone();
    w.push(0);
    assert_eq!(kind_of(&s, &w), (TrailingBytes, 54));
    // Null references are allowed.
    let mut w = good.clone();
    w[24..28].copy_from_slice(&NULL_REF.to_le_bytes());
    let mut d = ObjDecoder::new(&s);
    let mut img = Vec::new();
    d.decode(idx(&s, "expr.Node"), &w, &opts(0x40), &mut img).unwrap();
    assert_eq!(u32_at(&img, 4), 0);
    // Bad base: unaligned, or past 4 GiB with 32-bit pointers.
    assert_eq!(d.decode(idx(&s, "expr.Node"), &good, &opts(3), &mut img).unwrap_err().kind, BadBase);
    assert_eq!(d.decode(idx(&s, "expr.Node"), &good, &opts(0xFFFF_FFF0), &mut img).unwrap_err().kind, BadBase);
    // Image limit.
    let o = DecodeOptions { max_image_bytes: 40, ..Default::default() };
    assert_eq!(d.decode(idx(&s, "expr.Node"), &good, &o, &mut img).unwrap_err().kind, ImageTooLarge);
    // Buffer too small for decode_into.
    let mut small = [0u8; 16];
    let e = d.decode_into(idx(&s, "expr.Node"), &good, &opts(0), &mut small).unwrap_err();
    assert_eq!((e.kind, e.needed), (BufferTooSmall, 80));
}

#[test]
fn reference_to_a_class_outside_the_fields_hierarchy_is_refused() {
    let dir = std::env::temp_dir().join(format!("hw_og_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("zoo.proto");
    std::fs::write(
        &p,
        r#"syntax = "proto3"; package zoo; import "heapwire/options.proto";
        message Animal { option (heapwire.class) = {}; Animal friend = 1; }
        message Cat { option (heapwire.class) = { type_id: 1 base: "Animal" }; Food food = 2; int64 lives = 3 [(heapwire.wire_width) = 2]; bool indoor = 4; double weight = 5; }
        message Food { option (heapwire.class) = { type_id: 2 }; uint32 kcal = 1 [(heapwire.wire_width) = 1]; }"#,
    )
    .unwrap();
    let s = compile_files(&[p], &[], LayoutOptions::default()).unwrap();
    // Cat(friend=Food!) : types [1, 2]; Cat members: friend(4) food(4) lives(2) indoor(1) weight(8); Food: kcal(1)
    let mut w = Vec::new();
    for x in [2u32, 1, 2, 1, 1] {
        w.extend_from_slice(&x.to_le_bytes());
    }
    w.extend_from_slice(&(-3i16).to_le_bytes());
    w.push(1);
    w.extend_from_slice(&2.5f64.to_le_bytes());
    w.push(200);
    let mut d = ObjDecoder::new(&s);
    let mut img = Vec::new();
    let e = d.decode(idx(&s, "zoo.Animal"), &w, &opts(0), &mut img).unwrap_err();
    assert_eq!((e.kind, e.offset), (RejectKind::ReferenceType, 12));
    // friend = Cat itself (a cycle of length one) is fine; wire widths extend. With
    // base 0 a reference to object 0 would be null: refused.
    w[12..16].copy_from_slice(&0u32.to_le_bytes());
    let e = d.decode(idx(&s, "zoo.Animal"), &w, &opts(0), &mut img).unwrap_err();
    assert_eq!((e.kind, e.offset), (RejectKind::BadBase, 12));
    d.decode(idx(&s, "zoo.Animal"), &w, &opts(0x100), &mut img).unwrap();
    let cat = &s.classes[s.class_of(idx(&s, "zoo.Cat")).unwrap()];
    let off = |name: &str| cat.members.iter().find(|m| s.member_field(m).name == name).unwrap().offset as usize;
    assert_eq!(i64::from_le_bytes(img[off("lives")..off("lives") + 8].try_into().unwrap()), -3);
    assert_eq!(img[off("indoor")], 1);
    assert_eq!(f64::from_le_bytes(img[off("weight")..off("weight") + 8].try_into().unwrap()), 2.5);
    let mut back = Vec::new();
    encode(&s, d.tables(), &ImageMemory { bytes: &img, base: 0x100 }, 0x100, idx(&s, "zoo.Animal"), &[], &mut back).unwrap();
    assert_eq!(back, w);
    // A value that does not fit its wire width is refused by the serializer.
    let mut img2 = img.clone();
    img2[off("lives")..off("lives") + 8].copy_from_slice(&70000i64.to_le_bytes());
    let e = encode(&s, d.tables(), &ImageMemory { bytes: &img2, base: 0x100 }, 0x100, idx(&s, "zoo.Animal"), &[], &mut back).unwrap_err();
    assert_eq!(e.kind, RejectKind::ValueOutOfRange);
    // JSON: value checks.
    let mut js = Vec::new();
    json::print_json(&d, &img, 0x100, &mut js);
    let text = String::from_utf8(js).unwrap();
    assert!(text.contains("\"lives\": \"-3\""), "{text}");
    let bad = text.replace("\"kcal\": 200", "\"kcal\": 300");
    assert_eq!(json::parse_json(&s, d.tables(), idx(&s, "zoo.Animal"), &bad, &mut back).unwrap_err().kind, "value_out_of_range");
    let bad = text.replace("\"friend\": {\"@ref\": 0}", "\"friend\": {\"@ref\": 1}");
    assert_eq!(json::parse_json(&s, d.tables(), idx(&s, "zoo.Animal"), &bad, &mut back).unwrap_err().kind, "reference_type");
    let _ = std::fs::remove_dir_all(dir);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]
    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..200), pw64 in any::<bool>()) {
        let s = expr(if pw64 { PointerWidth::P64 } else { PointerWidth::P32 });
        let mut d = ObjDecoder::new(&s);
        let mut img = Vec::new();
        if d.decode(idx(&s, "expr.Node"), &bytes, &opts(0x1000), &mut img).is_ok() {
            // Whatever decodes re-encodes to a valid graph that decodes to the same image.
            let mut w = Vec::new();
            encode(&s, d.tables(), &ImageMemory { bytes: &img, base: 0x1000 }, if img.is_empty() { 0 } else { 0x1000 }, idx(&s, "expr.Node"), &[], &mut w).unwrap();
            let mut d2 = ObjDecoder::new(&s);
            let mut img2 = Vec::new();
            d2.decode(idx(&s, "expr.Node"), &w, &opts(0x1000), &mut img2).unwrap();
        }
    }

    #[test]
    fn mutated_paper_bytes_never_panic(pos in 0usize..54, val in any::<u8>(), cut in 0usize..60) {
        let s = expr(PointerWidth::P32);
        let mut w = paper_bytes();
        w[pos] = val;
        w.truncate(cut);
        let mut d = ObjDecoder::new(&s);
        let mut img = Vec::new();
        let _ = d.decode(idx(&s, "expr.Node"), &w, &opts(0x1000), &mut img);
        let t = String::from_utf8_lossy(&w).into_owned();
        let mut out = Vec::new();
        let _ = json::parse_json(&s, d.tables(), idx(&s, "expr.Node"), &t, &mut out);
    }
}

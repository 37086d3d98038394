//! Decoder unit tests: exact image bytes, relocation, size bound, hostile input.

use std::path::PathBuf;

use heapwire_schema::{compile_files, CompiledSchema, LayoutOptions, PointerWidth};
use proptest::prelude::*;

use super::decode::{DecodeOptions, Decoder};
use heapwire_engine::RejectKind;
use super::wire::put_varint;

fn schema(file: &str, layout: LayoutOptions) -> CompiledSchema {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("testdata");
    compile_files(&[dir.join(file)], &[dir], layout).expect("test schema compiles")
}

fn tag(out: &mut Vec<u8>, num: u32, wt: u8) {
    put_varint(out, ((num as u64) << 3) | wt as u64);
}

fn len_field(out: &mut Vec<u8>, num: u32, body: &[u8]) {
    tag(out, num, 2);
    put_varint(out, body.len() as u64);
    out.extend_from_slice(body);
}

/// Decodes with the fast path and checks it against the two-pass reference: same
/// bytes, or the same error. Checks `decode_into` against them too.
fn decode(s: &CompiledSchema, ty: &str, input: &[u8], base: u64) -> Result<Vec<u8>, crate::DecodeError> {
    let mut out = Vec::new();
    let opts = DecodeOptions { base, ..Default::default() };
    let mi = s.message_index(ty).unwrap();
    let mut d = Decoder::new(s);
    let fast = d.decode(mi, input, &opts, &mut out).map(|_| out);
    let mut out2 = vec![0xAA; 3];
    let reference = d.decode_reference(mi, input, &opts, &mut out2).map(|_| out2);
    assert_eq!(fast, reference, "fast path and two-pass reference disagree on {input:02x?}");
    check_decode_into(&mut d, mi, input, &opts, &fast);
    fast
}

/// `decode_into` gives `decode`'s image (or rejection) in buffers of several sizes:
/// exact, larger (over garbage), one byte short and empty (`buffer_too_small` with the
/// image's size, unless the input is invalid: then `decode`'s rejection).
fn check_decode_into(d: &mut Decoder<&CompiledSchema>, mi: usize, input: &[u8], opts: &DecodeOptions, want: &Result<Vec<u8>, crate::DecodeError>) {
    let n = want.as_ref().map_or(0, |img| img.len());
    let mut sizes = vec![n, n + 1, n + 3 * 8 + 5, 2 * n + 200, 0];
    if n > 0 {
        sizes.push(n - 1);
    }
    for size in sizes {
        let mut buf = vec![0xA5u8; size];
        let got = d.decode_into(mi, input, opts, &mut buf);
        match want {
            Ok(img) if size >= img.len() => {
                assert_eq!(got, Ok(img.len()), "decode_into into {size} bytes, input {input:02x?}");
                assert_eq!(&buf[..img.len()], &img[..], "decode_into's image differs (buffer of {size}), input {input:02x?}");
            }
            Ok(img) => {
                let e = got.expect_err("an image larger than the buffer");
                assert_eq!((e.kind, e.offset, e.needed), (RejectKind::BufferTooSmall, 0, img.len() as u64), "buffer of {size}, input {input:02x?}");
            }
            Err(de) => {
                let e = got.expect_err("decode rejected the input");
                assert_eq!((e.kind, e.offset, e.needed), (de.kind, de.offset as u64, 0), "buffer of {size}, input {input:02x?}");
            }
        }
    }
}

fn field_off(s: &CompiledSchema, ty: &str, name: &str) -> usize {
    let m = &s.messages[s.message_index(ty).unwrap()];
    m.fields.iter().find(|f| f.name == name).unwrap().offset as usize
}

fn u64_at(b: &[u8], o: usize) -> u64 {
    u64::from_le_bytes(b[o..o + 8].try_into().unwrap())
}

/// A message touching strings, sub-messages, repeated, maps, oneofs and merges.
fn sample() -> Vec<u8> {
    let mut leaf = Vec::new();
    tag(&mut leaf, 1, 0);
    put_varint(&mut leaf, 7);
    len_field(&mut leaf, 2, "leaf-ü".as_bytes());
    let mut packed = Vec::new();
    for v in [1u64, 3, 300] {
        put_varint(&mut packed, v);
    }
    len_field(&mut leaf, 3, &packed);
    let mut m = Vec::new();
    tag(&mut m, 1, 0);
    put_varint(&mut m, (-5i64) as u64);
    len_field(&mut m, 14, b"hello");
    len_field(&mut m, 18, &leaf);
    len_field(&mut m, 19, &leaf);
    len_field(&mut m, 21, b"a");
    len_field(&mut m, 19, &leaf);
    len_field(&mut m, 21, b"bc");
    let mut entry = Vec::new();
    len_field(&mut entry, 1, b"k");
    len_field(&mut entry, 2, &leaf);
    len_field(&mut m, 22, &entry);
    len_field(&mut m, 24, b"oneof-string");
    len_field(&mut m, 25, &leaf);
    // A second occurrence of `leaf` merges into the first.
    let mut leaf2 = Vec::new();
    tag(&mut leaf2, 1, 0);
    put_varint(&mut leaf2, 9);
    len_field(&mut m, 18, &leaf2);
    // Unknown fields of every wire type are kept.
    tag(&mut m, 1000, 0);
    put_varint(&mut m, 1);
    tag(&mut m, 1001, 5);
    m.extend_from_slice(&[1, 2, 3, 4]);
    tag(&mut m, 1002, 3);
    tag(&mut m, 1, 0);
    put_varint(&mut m, 1);
    tag(&mut m, 1002, 4);
    m
}

#[test]
fn exact_layout_of_a_small_message() {
    let s = schema("unit.proto", LayoutOptions::default());
    let mut m = Vec::new();
    tag(&mut m, 1, 0);
    put_varint(&mut m, 42);
    len_field(&mut m, 14, b"hi");
    let img = decode(&s, "unit.Node", &m, 0x1000).unwrap();
    let node = &s.messages[s.message_index("unit.Node").unwrap()];
    // Root struct, then the 2 string bytes at the next multiple of 8.
    assert_eq!(img.len(), node.size as usize + 8);
    assert_eq!(u32::from_le_bytes(img[field_off(&s, "unit.Node", "i32")..][..4].try_into().unwrap()), 42);
    let so = field_off(&s, "unit.Node", "s");
    assert_eq!(u64_at(&img, so), 0x1000 + node.size as u64);
    assert_eq!(u64_at(&img, so + 8), 2);
    assert_eq!(&img[node.size as usize..node.size as usize + 2], b"hi");
    assert!(img[node.size as usize + 2..].iter().all(|&b| b == 0), "padding is zero");
}

#[test]
fn merge_repeated_map_oneof_and_unknowns() {
    let s = schema("unit.proto", LayoutOptions::default());
    let img = decode(&s, "unit.Node", &sample(), 0).unwrap();
    let leaf_ptr = u64_at(&img, field_off(&s, "unit.Node", "leaf")) as usize;
    // Merged: id from the second occurrence, name from the first.
    assert_eq!(u32::from_le_bytes(img[leaf_ptr..leaf_ptr + 4].try_into().unwrap()), 9);
    let name = field_off(&s, "unit.Leaf", "name");
    assert_eq!(u64_at(&img, leaf_ptr + name + 8), "leaf-ü".len() as u64);
    let lv = field_off(&s, "unit.Node", "leaves");
    assert_eq!(u64_at(&img, lv + 8), 2, "two repeated elements in one array");
    let strs = field_off(&s, "unit.Node", "strs");
    assert_eq!(u64_at(&img, strs + 8), 2);
    let node = &s.messages[s.message_index("unit.Node").unwrap()];
    assert_eq!(u32::from_le_bytes(img[node.oneofs[0].case_offset as usize..][..4].try_into().unwrap()), 25);
    let unk = node.unknown_offset as usize;
    // varint 2+1, fixed32 2+4, group 2+1+1+2
    assert_eq!(u64_at(&img, unk + 8), 15);
}

#[test]
fn base_changes_only_pointer_words() {
    for pw in [PointerWidth::P64, PointerWidth::P32] {
        let s = schema("unit.proto", LayoutOptions { pointer_width: pw, header_words: true });
        let a = decode(&s, "unit.Node", &sample(), 0).unwrap();
        let b = decode(&s, "unit.Node", &sample(), 0x4000_0000).unwrap();
        assert_eq!(a.len(), b.len());
        let w = pw.bytes() as usize;
        let mut pointers = 0;
        for o in (0..a.len()).step_by(w) {
            let (x, y) = (&a[o..o + w], &b[o..o + w]);
            if x != y {
                let (x, y) = if w == 8 { (u64_at(&a, o), u64_at(&b, o)) } else {
                    (u32::from_le_bytes(x.try_into().unwrap()) as u64, u32::from_le_bytes(y.try_into().unwrap()) as u64)
                };
                assert_eq!(y - x, 0x4000_0000, "word at {o} differs by more than the base");
                assert!((x as usize) < a.len(), "pointer at {o} leaves the image");
                pointers += 1;
            }
        }
        assert!(pointers >= 10, "expected many pointers, saw {pointers}");
    }
}

/// With 32-bit pointers an image that would cross 4 GiB is rejected (`bad_base`), by the
/// fast path too: it used to panic on the second element of an array, whose offset it
/// read back from a wrapped pointer.
#[test]
fn base_near_4_gib_with_32_bit_pointers() {
    let s = schema("unit.proto", LayoutOptions { pointer_width: PointerWidth::P32, header_words: true });
    let len = decode(&s, "unit.Node", &sample(), 0).unwrap().len() as u64;
    let top = 1u64 << 32;
    for base in [top - len - 8, top - len] {
        assert_eq!(decode(&s, "unit.Node", &sample(), base).unwrap().len() as u64, len, "base {base:#x}");
    }
    for base in [top - len + 8, top - 8, top, top + 8] {
        assert_eq!(decode(&s, "unit.Node", &sample(), base).unwrap_err().kind, RejectKind::BadBase, "base {base:#x}");
    }
}

/// With 64-bit pointers the image must end by 2^64: a base whose image would wrap is
/// rejected (`bad_base`) instead of wrapping its pointers (or overflowing, in a debug build).
#[test]
fn base_near_2_pow_64_with_64_bit_pointers() {
    let s = schema("unit.proto", LayoutOptions::default());
    let len = decode(&s, "unit.Node", &sample(), 0).unwrap().len() as u64;
    let last = u64::MAX - 7; // the highest 8-aligned base
    let fits = last - len + 8;
    let img = decode(&s, "unit.Node", &sample(), fits).unwrap();
    assert_eq!(img.len() as u64, len);
    for base in [fits + 8, last] {
        assert_eq!(decode(&s, "unit.Node", &sample(), base).unwrap_err().kind, RejectKind::BadBase, "base {base:#x}");
    }
}

#[test]
fn proto2_closed_enums_groups_required() {
    let s = schema("unit2.proto", LayoutOptions::default());
    let mut m = Vec::new();
    tag(&mut m, 1, 0);
    put_varint(&mut m, 1);
    tag(&mut m, 2, 0);
    put_varint(&mut m, 5); // not a Kind: goes to the unknown fields
    len_field(&mut m, 3, &[1, 7, 2]); // 7 is unknown
    tag(&mut m, 4, 3);
    tag(&mut m, 5, 0);
    put_varint(&mut m, 3);
    tag(&mut m, 4, 4);
    let img = decode(&s, "unit2.Req", &m, 0).unwrap();
    let req = &s.messages[s.message_index("unit2.Req").unwrap()];
    let unk = req.unknown_offset as usize;
    assert_eq!(u64_at(&img, unk + 8), 4, "two re-encoded enum values, 2 bytes each");
    let kinds = field_off(&s, "unit2.Req", "kinds");
    assert_eq!(u64_at(&img, kinds + 8), 2);
    let g = u64_at(&img, field_off(&s, "unit2.Req", "g")) as usize;
    assert_ne!(g, 0);
    // Like the official parsers, parsing does not enforce `required` (an empty
    // `next` lacks its id and still decodes).
    let mut partial = m.clone();
    len_field(&mut partial, 6, &[]);
    assert!(decode(&s, "unit2.Req", &partial, 0).is_ok());
    // Mismatched end group.
    let mut bad = Vec::new();
    tag(&mut bad, 4, 3);
    tag(&mut bad, 9, 4);
    assert_eq!(decode(&s, "unit2.Req", &bad, 0).unwrap_err().kind, RejectKind::GroupMismatch);
}

#[test]
fn malformed_inputs_name_kind_and_offset() {
    let s = schema("unit.proto", LayoutOptions::default());
    let cases: &[(&[u8], RejectKind, usize)] = &[
        (&[0x08], RejectKind::Truncated, 1),
        (&[0x00, 0x01], RejectKind::FieldNumberZero, 0),
        (&[0x0f], RejectKind::InvalidWireType, 0),
        (&[0x72, 0x05, b'a'], RejectKind::LengthPastEnd, 1),
        (&[0x72, 0x01, 0xff], RejectKind::InvalidUtf8, 2),
        (&[0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01], RejectKind::VarintTooLong, 1),
        (&[0x0c], RejectKind::GroupMismatch, 0),
        (&[0xda, 0x01, 0x03, 0x01, 0x02, 0x03], RejectKind::PackedLength, 3),
        // Length prefixes: 5 bytes (non-minimal) are fine, 6 are not (protobuf 7.x), for a
        // string, a packed run and an unknown field alike.
        (&[0x72, 0x81, 0x80, 0x80, 0x80, 0x80, 0x00, b'a'], RejectKind::VarintTooLong, 1),
        (&[0xda, 0x01, 0x81, 0x80, 0x80, 0x80, 0x80, 0x00, 0x00, 0x00, 0x00, 0x00], RejectKind::VarintTooLong, 2),
        (&[0x08, 0x01, 0xfa, 0x3e, 0x81, 0x80, 0x80, 0x80, 0x80, 0x00, b'x'], RejectKind::VarintTooLong, 4),
    ];
    for (input, kind, offset) in cases {
        let e = decode(&s, "unit.Node", input, 0).unwrap_err();
        assert_eq!((e.kind, e.offset), (*kind, *offset), "input {input:02x?}");
    }
    let five = [0x72, 0x81, 0x80, 0x80, 0x80, 0x00, b'a'];
    assert!(decode(&s, "unit.Node", &five, 0).is_ok(), "a 5-byte length prefix is valid");
}

#[test]
fn nesting_is_bounded_without_recursion() {
    let s = schema("unit.proto", LayoutOptions::default());
    let nest = |depth: usize| {
        let mut m: Vec<u8> = Vec::new();
        for _ in 0..depth {
            let mut outer = Vec::new();
            len_field(&mut outer, 26, &m);
            m = outer;
        }
        m
    };
    assert!(decode(&s, "unit.Node", &nest(100), 0).is_ok());
    assert_eq!(decode(&s, "unit.Node", &nest(101), 0).unwrap_err().kind, RejectKind::DepthExceeded);
    // A much deeper input with a raised limit: no stack overflow.
    let deep = nest(20_000);
    let mut out = Vec::new();
    let opts = DecodeOptions { max_depth: 1_000_000, ..Default::default() };
    Decoder::new(&s).decode(s.message_index("unit.Node").unwrap(), &deep, &opts, &mut out).unwrap();
}

/// The documented bound: align8(root) + n * K.
fn bound(s: &CompiledSchema, root: usize, n: usize) -> usize {
    let k = s.messages.iter().map(|m| (m.size as usize).div_ceil(8) * 8 / 2 + 8).max().unwrap().max(16);
    (s.messages[root].size as usize).div_ceil(8) * 8 + n * k
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    /// Map entries of every flat shape (filled in place by the fast pass) and one that is
    /// not (a message value), built from random parts: mostly keys and values of the
    /// right wire type (repeated, missing, in either order), sometimes an unknown field,
    /// a wrong wire type, field number 0, text that is not UTF-8, a cut at the end. Fast
    /// path and reference must agree.
    #[test]
    fn map_entries_fast_path_matches_reference(entries in proptest::collection::vec((1u32..8, proptest::collection::vec((0u8..14, any::<u64>()), 0..4)), 0..10), cut in 0usize..3) {
        let s = schema("maps.proto", LayoutOptions::default());
        // Wire types of key and value per map field (maps.proto).
        const WIRES: [(u8, u8); 7] = [(2, 2), (0, 2), (0, 1), (0, 5), (0, 0), (2, 2), (0, 0)];
        let mut m = Vec::new();
        for (field, parts) in entries {
            let mut e = Vec::new();
            for (k, v) in parts {
                let (num, wire) = match k {
                    0..=4 => (1, WIRES[field as usize - 1].0),
                    5..=10 => (2, WIRES[field as usize - 1].1),
                    11 => (3, 0),
                    12 => (1 + (v % 2) as u32, [0u8, 1, 2, 5][(v % 4) as usize]),
                    _ => (0, 0),
                };
                tag(&mut e, num, wire);
                match wire {
                    0 => put_varint(&mut e, if v % 2 == 0 { v % 300 } else { v }),
                    1 => e.extend_from_slice(&v.to_le_bytes()),
                    5 => e.extend_from_slice(&v.to_le_bytes()[..4]),
                    _ => {
                        let body: Vec<u8> = match v % 5 {
                            0 => "héllo wörld".into(),
                            1 => vec![0xff, b'a'],
                            2 => { let mut b = Vec::new(); tag(&mut b, 1, 0); put_varint(&mut b, v >> 8); b }
                            _ => (0..(v % 9) as u8).map(|i| b'a' + i).collect(),
                        };
                        put_varint(&mut e, body.len() as u64);
                        e.extend_from_slice(&body);
                    }
                }
            }
            if field == 7 {
                tag(&mut m, 7, 0);
                put_varint(&mut m, e.len() as u64);
            } else {
                len_field(&mut m, field, &e);
            }
        }
        m.truncate(m.len().saturating_sub(cut));
        let _ = decode(&s, "maps.Maps", &m, 0);
    }

    #[test]
    fn random_bytes_never_panic_and_respect_the_bound(input in proptest::collection::vec(any::<u8>(), 0..300)) {
        for (file, ty) in [("unit.proto", "unit.Node"), ("unit2.proto", "unit2.Req")] {
            let s = schema(file, LayoutOptions::default());
            if let Ok(img) = decode(&s, ty, &input, 0) {
                let root = s.message_index(ty).unwrap();
                prop_assert!(img.len() <= bound(&s, root, input.len()), "{} > bound", img.len());
                prop_assert_eq!(img.len() % 8, 0);
            }
        }
    }

    /// Structured random messages (merges, oneof switches, repeats, unknowns, closed
    /// enums, map entries with stray fields) so both paths of `decode` are exercised.
    #[test]
    fn fast_path_matches_reference(parts in proptest::collection::vec((0u8..13, any::<u16>()), 0..24)) {
        let s = schema("unit.proto", LayoutOptions::default());
        let s2 = schema("unit2.proto", LayoutOptions::default());
        let mut m = Vec::new();
        let mut p2 = Vec::new();
        for (k, v) in parts {
            let v = v as u64;
            match k {
                0 => { tag(&mut m, 1, 0); put_varint(&mut m, v); }
                1 => { let mut l = Vec::new(); tag(&mut l, 3, 0); put_varint(&mut l, v); len_field(&mut m, 18, &l); }
                2 => { let mut l = Vec::new(); tag(&mut l, 1, 0); put_varint(&mut l, v); len_field(&mut m, 19, &l); }
                3 => { let mut pk = Vec::new(); put_varint(&mut pk, v); put_varint(&mut pk, v >> 3); len_field(&mut m, 20, &pk); }
                4 => { len_field(&mut m, 21, &v.to_le_bytes()[..(v % 5) as usize]); }
                5 => { let mut e = Vec::new(); len_field(&mut e, 1, b"k"); if v % 3 == 0 { tag(&mut e, 7, 0); put_varint(&mut e, v); } len_field(&mut m, 22, &e); }
                6 => { tag(&mut m, 23, 0); put_varint(&mut m, v); }
                7 => { let mut l = Vec::new(); tag(&mut l, 1, 0); put_varint(&mut l, v); len_field(&mut m, 25, &l); }
                8 => { tag(&mut m, 900 + (v % 3) as u32, 0); put_varint(&mut m, v); }
                9 => { tag(&mut m, 27, 1); m.extend_from_slice(&v.to_le_bytes()); }
                11 => {
                    // A singular scalar of every kind and width (the fast pass's stores by
                    // kind), proto3 plain and proto3 optional; values of every varint width.
                    const SCALARS: [(u32, u8); 15] = [(1, 0), (2, 0), (3, 0), (4, 0), (5, 0), (6, 0), (7, 5), (8, 1), (9, 5), (10, 1), (11, 5), (12, 1), (13, 0), (16, 0), (17, 0)];
                    let (num, w) = SCALARS[v as usize % SCALARS.len()];
                    let x = v.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (v % 64);
                    tag(&mut m, num, w);
                    match w {
                        0 => put_varint(&mut m, x),
                        5 => m.extend_from_slice(&(x as u32).to_le_bytes()),
                        _ => m.extend_from_slice(&x.to_le_bytes()),
                    }
                }
                10 => { tag(&mut p2, 2, 0); put_varint(&mut p2, v % 4); let mut pk = Vec::new(); put_varint(&mut pk, v % 5); len_field(&mut p2, 3, &pk); }
                _ => { let mut inner = Vec::new(); tag(&mut inner, 1, 0); put_varint(&mut inner, v); len_field(&mut m, 26, &inner); }
            }
        }
        let _ = decode(&s, "unit.Node", &m, 0);
        let _ = decode(&s2, "unit2.Req", &p2, 0);
    }

    #[test]
    fn mutated_sample_never_panics(pos in 0usize..200, byte in any::<u8>(), cut in 0usize..400) {
        let s = schema("unit.proto", LayoutOptions::default());
        let mut m = sample();
        let p = pos % m.len();
        m[p] = byte;
        m.truncate(cut.min(m.len()));
        if let Ok(img) = decode(&s, "unit.Node", &m, 8) {
            prop_assert!(img.len() <= bound(&s, s.message_index("unit.Node").unwrap(), m.len()));
        }
    }
}

/// A map entry with unknown fields nested in the value of another such entry: upb keeps
/// only the outer entry, whole, among the parent's unknown fields (checked with the
/// official `protobuf` package: no map entries, the bytes re-encode unchanged). The
/// inner entry must not stay on the dropped list, or the write pass would decode the outer
/// entry after all and fail past its end.
#[test]
fn map_entry_dropped_inside_a_dropped_map_entry() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/differential/schemas");
    let s = compile_files(&[dir.join("evolution.proto")], &[dir], LayoutOptions::default()).unwrap();
    // RecordV2.kids (15) = {key "a", value: RecordV2{kids = {key "b", field 3: 1}}, field 3: 1}
    let input = [0x7a, 0x0e, 0x0a, 0x01, 0x61, 0x12, 0x07, 0x7a, 0x05, 0x0a, 0x01, 0x62, 0x18, 0x01, 0x18, 0x01];
    let mi = s.message_index("hw.evo.RecordV2").unwrap();
    let image = decode(&s, "hw.evo.RecordV2", &input, 0x1000).expect("accepted, as upb does");
    let view = heapwire_image::ImageView::for_schema(&s, &image, 0x1000);
    let mut wire = Vec::new();
    super::encode::encode(&s, mi, &view, 0, &mut wire).unwrap();
    assert_eq!(wire, input, "the outer entry is kept whole among the unknown fields");
}

/// `decode_into` on the differential suite's committed reproducers (maps with unknown
/// fields, closed enums, missing required fields): the same image as `decode` in every
/// buffer size, through the helper above.
#[test]
fn decode_into_on_the_differential_reproducers() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let field = |json: &str, key: &str| -> String {
        let at = json.find(&format!("\"{key}\": \"")).unwrap_or_else(|| panic!("no {key}")) + key.len() + 5;
        json[at..at + json[at..].find('"').unwrap()].to_string()
    };
    let mut seen = 0;
    for entry in std::fs::read_dir(root.join("tests/differential/repro")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "json") {
            continue;
        }
        let json = std::fs::read_to_string(&path).unwrap();
        let input = std::fs::read(path.with_extension("bin")).unwrap();
        let include = root.join(field(&json, "include"));
        for layout in [LayoutOptions::default(), LayoutOptions { pointer_width: PointerWidth::P32, header_words: true }] {
            let s = compile_files(&[root.join(field(&json, "schema"))], std::slice::from_ref(&include), layout).unwrap();
            for base in [0, 0x1000] {
                let _ = decode(&s, &field(&json, "type"), &input, base);
            }
        }
        seen += 1;
    }
    assert!(seen >= 6, "expected the committed reproducers, found {seen}");
}

/// Rejections before any decoding (an unaligned base, a 32-bit image past 4 GiB) and
/// the image limit are `decode`'s too, whatever the buffer.
#[test]
fn decode_into_rejections_match_decode() {
    let s32 = schema("unit.proto", LayoutOptions { pointer_width: PointerWidth::P32, header_words: false });
    let mi = s32.message_index("unit.Node").unwrap();
    let mut d = Decoder::new(&s32);
    let cases = [
        DecodeOptions { base: 4, ..Default::default() },
        DecodeOptions { base: 0xFFFF_FFF8, ..Default::default() },
        DecodeOptions { max_image_bytes: 40, ..Default::default() },
    ];
    for opts in &cases {
        let mut img = Vec::new();
        let want = d.decode(mi, &sample(), opts, &mut img).map(|()| img);
        assert!(want.is_err());
        check_decode_into(&mut d, mi, &sample(), opts, &want);
    }
}

/// Strings and bytes of every length 0..=80 (the fast pass copies those of up to 32 bytes
/// with overlapping loads and stores, longer ones and the reference with `memcpy`): singular
/// (the last field, so its bytes end both the input and the image), a repeated run, and a
/// map entry's key and value. `decode` compares the fast pass with the two-pass reference
/// and `decode_into` in exact-size buffers; here the bytes at the pointer are checked
/// against the input, and the padding after them must stay zero.
#[test]
fn strings_of_every_length_copied_exactly() {
    let s = schema("unit.proto", LayoutOptions::default());
    let maps = schema("maps.proto", LayoutOptions::default());
    let by = field_off(&s, "unit.Node", "by");
    let text = |n: usize, salt: u8| -> Vec<u8> { (0..n).map(|i| b'!' + ((i * 7 + n + salt as usize) % 90) as u8).collect() };
    let string_at = |img: &[u8], at: usize| -> (usize, usize) {
        let (ptr, len) = (u64_at(img, at) as usize, u64_at(img, at + 8) as usize);
        if len > 0 {
            let pad = &img[ptr + len..(ptr + len + 7) & !7];
            assert!(pad.iter().all(|&b| b == 0), "bytes after a {len}-byte string: {pad:02x?}");
        }
        (ptr, len)
    };
    for n in 0..=80usize {
        // Binary bytes (every value but the pattern's) as the last field: at the image's end.
        let data: Vec<u8> = (0..n).map(|i| (i * 37 + n * 11) as u8 ^ 0x80).collect();
        let mut input = Vec::new();
        len_field(&mut input, 14, &text(n, 1));
        len_field(&mut input, 15, &data);
        let img = decode(&s, "unit.Node", &input, 0).unwrap();
        let (ptr, len) = string_at(&img, by);
        assert_eq!(len, n);
        if n > 0 {
            assert_eq!(&img[ptr..ptr + n], &data[..], "{n}-byte bytes field");
            assert_eq!(ptr + ((n + 7) & !7), img.len(), "the last string ends the image");
        }
        // A repeated run of strings of lengths n, n/2 and n + 1.
        let mut input = Vec::new();
        for (k, m) in [n, n / 2, n + 1].into_iter().enumerate() {
            len_field(&mut input, 21, &text(m, k as u8));
        }
        decode(&s, "unit.Node", &input, 8).unwrap();
        // A map<string, string> entry whose key and value are n bytes.
        let mut entry = Vec::new();
        len_field(&mut entry, 1, &text(n, 3));
        len_field(&mut entry, 2, &text(n, 4));
        let mut input = Vec::new();
        len_field(&mut input, 1, &entry);
        decode(&maps, "maps.Maps", &input, 0).unwrap();
    }
}

/// UTF-8 checks of strings on either side of the inline copy's 32 bytes: every length
/// 2..=80 with one invalid byte (rejected, by the fast pass as by the two passes) or a
/// valid two-byte character (accepted), at the start, the middle and the end, singular, in
/// a repeated run and as a map value.
#[test]
fn utf8_of_strings_of_every_length_checked() {
    let s = schema("unit.proto", LayoutOptions::default());
    let maps = schema("maps.proto", LayoutOptions::default());
    for n in 2..=80usize {
        for at in [0, (n - 2) / 2, n - 2] {
            for (patch, valid) in [(&[0xffu8, b'x'][..], false), (&[0xc3, 0xa9][..], true)] {
                let mut text = vec![b'a'; n];
                text[at..at + 2].copy_from_slice(patch);
                let mut entry = Vec::new();
                len_field(&mut entry, 1, b"k");
                len_field(&mut entry, 2, &text);
                let mut map_input = Vec::new();
                len_field(&mut map_input, 1, &entry);
                let cases = [
                    (&s, "unit.Node", 14, None),
                    (&s, "unit.Node", 21, None),
                    (&maps, "maps.Maps", 0, Some(map_input)),
                ];
                for (schema, ty, num, whole) in cases {
                    let input = whole.unwrap_or_else(|| {
                        let mut input = Vec::new();
                        len_field(&mut input, 21, b"first");
                        len_field(&mut input, num, &text);
                        input
                    });
                    let got = decode(schema, ty, &input, 0);
                    if valid {
                        got.unwrap_or_else(|e| panic!("{ty} field {num}, {n} bytes, é at {at}: {e}"));
                    } else {
                        let e = got.expect_err("invalid UTF-8 accepted");
                        assert_eq!(e.kind, RejectKind::InvalidUtf8, "{ty} field {num}, {n} bytes, 0xff at {at}");
                    }
                }
            }
        }
    }
}

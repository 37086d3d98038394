//! The fast objgraph decoder against the reference: same image bytes or the same error
//! (kind and offset), through `decode` and `decode_into`, on random graphs of the
//! expression tree and of the testbench's zoo (every width and conversion, abstract
//! classes, a sparse type id, 32-bit layouts with 8-aligned classes), then on those
//! graphs' bytes damaged at random.

use std::path::PathBuf;

use heapwire_engine::{Options, RejectKind};
use heapwire_schema::{compile_files, CompiledSchema, LayoutOptions, PointerWidth};
use proptest::prelude::*;

use super::reference::ReferenceDecoder;
use super::{ObjDecoder, ObjError, NULL_REF};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// expr and zoo, each in both pointer widths.
fn schemas() -> &'static [CompiledSchema; 4] {
    static S: std::sync::OnceLock<[CompiledSchema; 4]> = std::sync::OnceLock::new();
    S.get_or_init(|| {
        let c = |f: &str, pw| compile_files(&[repo().join(f)], &[], LayoutOptions { pointer_width: pw, header_words: false }).expect("test schema compiles");
        let (e, z) = ("examples/expression_tree/expr.proto", "rtl/tb/hw_og_core/zoo.proto");
        [c(e, PointerWidth::P64), c(e, PointerWidth::P32), c(z, PointerWidth::P64), c(z, PointerWidth::P32)]
    })
}

/// A graph's recipe: objects as (choice of concrete class, member bytes seed, per
/// reference a choice), plus the request.
#[derive(Clone, Debug)]
struct Recipe {
    schema: usize,
    root: usize,
    objects: Vec<(usize, u64, Vec<u32>)>,
    base: u64,
    small_limit: bool,
    registers: bool,
}

fn recipe() -> impl Strategy<Value = Recipe> {
    (
        0usize..4,
        any::<usize>(),
        proptest::collection::vec((any::<usize>(), any::<u64>(), proptest::collection::vec(any::<u32>(), 6)), 0..24),
        prop_oneof![1 => Just(0u64), 4 => Just(0x1000), 1 => Just(0x7fff_fff8), 1 => Just(0xffff_ff00), 2 => (0u64..1 << 20).prop_map(|b| b * 8)],
        proptest::bool::weighted(0.1),
        any::<bool>(),
    )
        .prop_map(|(schema, root, objects, base, small_limit, registers)| Recipe { schema, root, objects, base, small_limit, registers })
}

/// The wire bytes a recipe describes: concrete classes only, references mostly valid
/// (sometimes null, out of range or of any class).
fn wire_of(r: &Recipe) -> Vec<u8> {
    let s = &schemas()[r.schema];
    let d = ObjDecoder::new(s);
    let t = d.tables();
    let concrete: Vec<usize> = (0..t.classes.len()).filter(|&c| t.classes[c].type_id != heapwire_schema::NONE).collect();
    let n = r.objects.len() as u32;
    let mut w = n.to_le_bytes().to_vec();
    let cls: Vec<usize> = r.objects.iter().map(|o| concrete[o.0 % concrete.len()]).collect();
    for &c in &cls {
        w.extend_from_slice(&t.classes[c].type_id.to_le_bytes());
    }
    for (&c, (_, seed, refs)) in cls.iter().zip(&r.objects) {
        let mut bytes = seed.to_le_bytes().into_iter().cycle();
        let mut refs = refs.iter();
        for op in t.classes[c].ops.iter().filter(|o| o.wire != 0) {
            if let super::Conv::Ref(target) = op.conv {
                let pick = *refs.next().unwrap_or(&0);
                let fitting: Vec<u32> = (0..n).filter(|&j| t.is_sub(cls[j as usize] as u32, target)).collect();
                let v = match pick % 64 {
                    0 => NULL_REF,
                    1 => n + pick % 3,
                    2 => pick % n.max(1),
                    3 => pick,
                    _ if fitting.is_empty() => NULL_REF,
                    _ => fitting[pick as usize % fitting.len()],
                };
                w.extend_from_slice(&v.to_le_bytes());
            } else {
                w.extend((0..op.wire).map(|_| bytes.next().unwrap()));
            }
        }
    }
    w
}

fn options(r: &Recipe, s: &CompiledSchema) -> Options {
    Options {
        base: r.base,
        max_image_bytes: if r.small_limit { 200 } else { 1 << 30 },
        type_words: if r.registers { (0..s.messages.len() as u64).map(|m| 0x5555_0000_0000_1111 ^ (m * 0x0101_0101)).collect() } else { Vec::new() },
        ..Options::default()
    }
}

fn root_of(r: &Recipe, s: &CompiledSchema, wire: &[u8]) -> usize {
    // Mostly object 0's own class; sometimes any class or any message (not_a_class).
    let classes: Vec<usize> = s.classes.iter().map(|c| c.message as usize).collect();
    let first = wire.get(4..8).and_then(|id| s.classes.iter().find(|c| c.type_id == u32::from_le_bytes(id.try_into().unwrap())));
    match (r.root % 8, first) {
        (0, _) => r.root / 8 % s.messages.len(),
        (1, _) | (_, None) => classes[r.root / 8 % classes.len()],
        (_, Some(c)) => c.message as usize,
    }
}

/// Decodes `wire` with the reference and the fast decoder (with byte shuffles where the
/// CPU has them, and without), both entry points; asserts they agree and returns the
/// answer.
fn agree(schema: usize, root: usize, wire: &[u8], opts: &Options) -> Result<Vec<u8>, ObjError> {
    let s = &schemas()[schema];
    let mut want = vec![7u8; 3];
    let r = ReferenceDecoder::new(s).decode(root, wire, opts, &mut want).map(|()| want.clone());
    agree_with(s, ObjDecoder::new(s), &r, root, wire, opts);
    agree_with(s, ObjDecoder::new(s).without_shuffles(), &r, root, wire, opts);
    r
}

/// One fast decoder against the reference's answer `r`.
fn agree_with(s: &CompiledSchema, mut fast: ObjDecoder<&CompiledSchema>, r: &Result<Vec<u8>, ObjError>, root: usize, wire: &[u8], opts: &Options) {
    // `decode` writes into capacity it does not zero first: make it dirty.
    let mut got = vec![0xa5u8; r.as_ref().map_or(64, |i| i.len() + 64)];
    got.clear();
    let f = fast.decode(root, wire, opts, &mut got);
    assert_eq!(f, r.clone().map(|_| ()), "decode answers differ");
    if let Ok(want) = r {
        assert_eq!(&got, want, "images differ");
        let mut reference = ReferenceDecoder::new(s);
        reference.decode(root, wire, opts, &mut Vec::new()).unwrap();
        assert!(fast.objects().eq(reference.objects()), "object tables differ");
    } else {
        assert!(got.is_empty(), "a rejected decode leaves `out` empty");
    }
    // Into a dirty buffer with room to spare: same image, nothing written past it.
    let room = r.as_ref().map_or(64, |i| i.len() + 24);
    let mut buf = vec![0xa5u8; room];
    match fast.decode_into(root, wire, opts, &mut buf) {
        Ok(len) => {
            assert_eq!(Ok(&buf[..len]), r.as_ref().map(|i| &i[..]), "decode_into image differs");
            assert!(buf[len..].iter().all(|&b| b == 0xa5), "decode_into wrote past the image");
        }
        Err(e) => assert_eq!(Err(e), r.clone().map(|_| ()), "decode_into answer differs"),
    }
    // One byte short: buffer_too_small with the size, as the reference says.
    if let Ok(img) = &r {
        if !img.is_empty() {
            let mut short = vec![0u8; img.len() - 1];
            let e = fast.decode_into(root, wire, opts, &mut short).unwrap_err();
            assert_eq!((e.kind, e.needed), (RejectKind::BufferTooSmall, img.len() as u64));
            let e2 = ReferenceDecoder::new(s).decode_into(root, wire, opts, &mut short).unwrap_err();
            assert_eq!(e, e2);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1500, ..ProptestConfig::default() })]

    #[test]
    fn fast_path_matches_reference_on_random_graphs(r in recipe()) {
        let s = &schemas()[r.schema];
        let w = wire_of(&r);
        let _ = agree(r.schema, root_of(&r, s, &w), &w, &options(&r, s));
    }

    #[test]
    fn fast_path_matches_reference_on_damaged_bytes(r in recipe(), edits in proptest::collection::vec((any::<usize>(), any::<u8>()), 1..4), cut in 0usize..6, extra in 0usize..3) {
        let s = &schemas()[r.schema];
        let mut w = wire_of(&r);
        for (at, b) in edits {
            let at = at % w.len();
            w[at] = b;
        }
        w.truncate(w.len().saturating_sub(cut % 3 * (cut / 3)));
        w.extend(std::iter::repeat_n(0u8, extra));
        let _ = agree(r.schema, root_of(&r, s, &w), &w, &options(&r, s));
    }
}

/// The cases the random recipes reach rarely, written out.
#[test]
fn fast_path_matches_reference_on_edge_cases() {
    let expr = 0;
    let s = &schemas()[expr];
    let node = s.message_index("expr.Node").unwrap();
    let lit = s.message_index("expr.Literal").unwrap();
    let opts = Options { base: 0x1000, ..Options::default() };
    let at0 = Options { base: 0, ..Options::default() };
    // Operation(lit 1, lit 2) + two literals.
    let mut tree = vec![3, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 2];
    tree.extend_from_slice(&(-5i32).to_le_bytes());
    tree.extend_from_slice(&9i32.to_le_bytes());
    assert!(agree(expr, node, &tree, &opts).is_ok());
    assert_eq!(agree(expr, lit, &tree, &opts).unwrap_err().kind, RejectKind::RootType);
    // A reference to object 0 at base 0 would read as null.
    let mut self_ref = tree.clone();
    self_ref[16] = 0;
    assert_eq!(agree(expr, node, &self_ref, &at0).unwrap_err(), ObjError { kind: RejectKind::BadBase, offset: 16, needed: 0 });
    assert!(agree(expr, node, &self_ref, &opts).is_ok());
    // Null references; the empty graph; short, long and unknown input.
    let mut nulls = tree.clone();
    nulls[16..24].fill(0xff);
    assert!(agree(expr, node, &nulls, &at0).is_ok());
    assert_eq!(agree(expr, node, &[0, 0, 0, 0], &opts), Ok(Vec::new()));
    for cut in 0..tree.len() {
        assert!(agree(expr, node, &tree[..cut], &opts).is_err());
    }
    let mut long = tree.clone();
    long.push(0);
    assert_eq!(agree(expr, node, &long, &opts).unwrap_err().kind, RejectKind::TrailingBytes);
    let mut unknown = tree.clone();
    unknown[8] = 5;
    assert_eq!(agree(expr, node, &unknown, &opts).unwrap_err().kind, RejectKind::UnknownType);
    // A reference error after a root error: the root error wins, as in the reference.
    let mut both = tree.clone();
    both[20] = 200;
    assert_eq!(agree(expr, node, &both, &opts).unwrap_err(), ObjError { kind: RejectKind::BadReference, offset: 20, needed: 0 });
    assert_eq!(agree(expr, lit, &both, &opts).unwrap_err().kind, RejectKind::RootType);
    // A big chain crosses many zeroing chunks.
    let n = 5000u32;
    let mut chain = (2 * n + 1).to_le_bytes().to_vec();
    for k in 0..2 * n + 1 {
        chain.extend_from_slice(&u32::from(k < n).to_le_bytes());
    }
    for k in 0..n {
        chain.extend_from_slice(&(n + k).to_le_bytes());
        chain.extend_from_slice(&(if k + 1 < n { k + 1 } else { 2 * n }).to_le_bytes());
        chain.push(k as u8 % 3);
    }
    for k in 0..=n {
        chain.extend_from_slice(&(k as i32 - 7).to_le_bytes());
    }
    assert_eq!(agree(expr, node, &chain, &opts).unwrap().len(), (2 * n as usize + 1) * 32);
}

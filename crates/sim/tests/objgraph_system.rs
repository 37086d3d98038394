//! System test of the objgraph core: the simulated core against the CPU objgraph
//! decoder (the reference), byte for byte: identical images, or the same error kind at
//! the same byte offset.
//!
//! Cases: the expression tree (the paper's scaled tree: a chain of n Operations) for
//! n = 1..=127 and some larger n, in both layouts (32-bit pointers: 16-byte objects; 64-bit),
//! at random bases; random class graphs of the expression schema and of a richer schema
//! (every width and conversion, abstract classes, sparse type ids, omitted base members);
//! and mutations of them (truncations, byte flips, appended bytes, patched counts, type
//! ids and references), plus hand-written corner cases.
//!
//! Knobs: HEAPWIRE_OG_CASES (random graphs per schema, default 30), HEAPWIRE_OG_SEED,
//! HEAPWIRE_OG_MAXN (largest n of the full 1..n expression-tree sweep, default 127).

mod common;
use common::{env_num, root, Rng};

use heapwire_testkit::scaled_tree::wire as chain;
use heapwire_cpu::objgraph::ObjDecoder;
use heapwire_cpu::DecodeOptions;
use heapwire_schema::{compile_files, CompiledSchema, Kind, LayoutOptions, PointerWidth, NONE};
use heapwire_sim::objgraph::{simulate, Options};
use heapwire_sim::SimError;

fn expr(pw: PointerWidth) -> CompiledSchema {
    let p = root().join("examples/expression_tree/expr.proto");
    compile_files(&[p], &[], LayoutOptions { pointer_width: pw, header_words: false }).expect("expr.proto compiles")
}

const ZOO: &str = r#"syntax = "proto3"; package zoo; import "heapwire/options.proto";
enum Mood { CALM = 0; ANGRY = -2; HAPPY = 5; }
message Animal { option (heapwire.class) = {}; Animal friend = 1; sint32 age = 2 [(heapwire.wire_width) = 1]; }
message Cat { option (heapwire.class) = { type_id: 1 base: "Animal" }; Food food = 3; int64 lives = 4 [(heapwire.wire_width) = 2];
  bool indoor = 5; double weight = 6; Mood mood = 7 [(heapwire.wire_width) = 1]; }
message Dog { option (heapwire.class) = { type_id: 7 base: "Animal" omit_base_members: true }; uint64 tricks = 3; float speed = 4;
  Animal pal = 5; uint32 spots = 6 [(heapwire.wire_width) = 2]; }
message Puppy { option (heapwire.class) = { type_id: 9000 base: "Dog" }; fixed32 tag = 7; bool small = 8; int32 bite = 9 [(heapwire.wire_width) = 2]; }
message Food { option (heapwire.class) = { type_id: 2 }; uint32 kcal = 1 [(heapwire.wire_width) = 1]; sfixed64 price = 2; Food next = 3; }
message Empty { option (heapwire.class) = { type_id: 3 }; }
message Box { option (heapwire.class) = { type_id: 4 }; Empty e = 1; Animal a = 2; int32 n = 3; }
"#;

fn zoo(pw: PointerWidth) -> CompiledSchema {
    let dir = std::env::temp_dir().join(format!("hw_og_sys_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("zoo.proto");
    std::fs::write(&p, ZOO).unwrap();
    compile_files(&[p], &[], LayoutOptions { pointer_width: pw, header_words: false }).expect("zoo compiles")
}

fn idx(s: &CompiledSchema, n: &str) -> usize {
    s.message_index(n).unwrap()
}

/// A random graph of `s`'s concrete classes whose object 0 is a subclass of `root`.
fn random_graph(s: &CompiledSchema, root: usize, r: &mut Rng) -> Vec<u8> {
    let rc = s.class_of(root).unwrap();
    let concrete: Vec<usize> = (0..s.classes.len()).filter(|&c| !s.classes[c].is_abstract()).collect();
    let roots: Vec<usize> = concrete.iter().copied().filter(|&c| s.is_subclass(c, rc)).collect();
    let n = match r.below(4) {
        0 => 1 + r.below(3) as usize,
        1 => 1 + r.below(20) as usize,
        2 => 1 + r.below(80) as usize,
        _ => 1 + r.below(300) as usize,
    };
    let mut cls = vec![roots[r.below(roots.len() as u64) as usize]];
    for _ in 1..n {
        cls.push(concrete[r.below(concrete.len() as u64) as usize]);
    }
    let mut w = (n as u32).to_le_bytes().to_vec();
    for &c in &cls {
        w.extend_from_slice(&s.classes[c].type_id.to_le_bytes());
    }
    for &c in &cls {
        for m in s.classes[c].members.iter().filter(|m| m.wire_width > 0) {
            let f = s.member_field(m);
            if f.kind.is_message() {
                let t = s.class_of(f.sub as usize).map(|x| x as u32).unwrap_or(NONE);
                let ok: Vec<usize> = (0..n).filter(|&j| t != NONE && s.is_subclass(cls[j], t as usize)).collect();
                let v = if ok.is_empty() || r.chance(20) { u32::MAX } else { ok[r.below(ok.len() as u64) as usize] as u32 };
                w.extend_from_slice(&v.to_le_bytes());
            } else {
                let v = match f.kind {
                    // any non-zero byte is true (the CPU engine stores 1)
                    Kind::Bool => if r.chance(50) { r.below(2) } else { r.next() & 0xff },
                    _ => match r.below(4) {
                        0 => 0,
                        1 => u64::MAX,
                        2 => r.below(300),
                        _ => r.next(),
                    },
                };
                w.extend_from_slice(&v.to_le_bytes()[..m.wire_width as usize]);
            }
        }
    }
    w
}

fn mutate(w: &[u8], r: &mut Rng) -> Vec<u8> {
    let mut m = w.to_vec();
    match r.below(7) {
        0 => m.truncate(r.below(m.len() as u64 + 1) as usize),
        1 => {
            if !m.is_empty() {
                let at = r.below(m.len() as u64) as usize;
                m[at] = r.next() as u8;
            }
        }
        2 => {
            for _ in 0..=r.below(4) {
                m.push(r.next() as u8);
            }
        }
        3 => {
            // patch the count
            let n = u32::from_le_bytes(m[..4].try_into().unwrap());
            let v = match r.below(3) {
                0 => n.wrapping_add(1),
                1 => n.wrapping_sub(1),
                _ => r.next() as u32,
            };
            m[..4].copy_from_slice(&v.to_le_bytes());
        }
        4 => {
            // patch a type id
            let n = u32::from_le_bytes(m[..4].try_into().unwrap()) as usize;
            if n > 0 && 4 + 4 * n <= m.len() {
                let at = 4 + 4 * r.below(n as u64) as usize;
                let v = [0u32, 1, 2, 3, 4, 7, 9000, 5, u32::MAX][r.below(9) as usize];
                m[at..at + 4].copy_from_slice(&v.to_le_bytes());
            }
        }
        5 => {
            // a 4-byte word past the type ids: a reference, most likely, set to a small index
            let n = u32::from_le_bytes(m[..4].try_into().unwrap()) as usize;
            if m.len() > 4 + 4 * n + 4 {
                let at = 4 + 4 * n + r.below((m.len() - 4 - 4 * n - 3) as u64) as usize;
                let v = r.below(n as u64 + 2) as u32;
                m[at..at + 4].copy_from_slice(&v.to_le_bytes());
            }
        }
        _ => {
            let at = r.below(m.len() as u64 + 1) as usize;
            m.insert(at, r.next() as u8);
        }
    }
    m
}

struct Stats {
    ok: usize,
    rejected: usize,
}

/// One case through both engines; panics on any difference.
#[allow(clippy::too_many_arguments)]
fn check(s: &CompiledSchema, root: usize, w: &[u8], base: u64, regs: &[u64], (in_width, out_width): (u32, u32), what: &str, st: &mut Stats) -> u64 {
    let opts = DecodeOptions { base, type_words: regs.to_vec(), ..Default::default() };
    let mut d = ObjDecoder::new(s);
    let mut img = Vec::new();
    let cpu = d.decode(root, w, &opts, &mut img);
    let so = Options { base, type_words: regs.to_vec(), out_width, in_width, ..Default::default() };
    let hw = simulate(s, root, w, &so);
    match (cpu, hw) {
        (Ok(()), Ok(h)) => {
            if h.image != img {
                let at = h.image.iter().zip(&img).position(|(a, b)| a != b).unwrap_or(img.len().min(h.image.len()));
                panic!("{what}: images differ at byte {at} (cpu {} bytes, core {} bytes)\ninput {:02x?}", img.len(), h.image.len(), w);
            }
            st.ok += 1;
            h.cycles
        }
        (Err(e), Err(SimError::Rejected { kind, offset, cycles })) => {
            assert_eq!((e.kind, e.offset), (kind, offset), "{what}: different errors; input {:02x?}", w);
            st.rejected += 1;
            cycles
        }
        (c, h) => panic!("{what}: cpu {:?} vs core {:?}; input {:02x?}", c.map(|_| img.len()), h.map(|o| o.image.len()), w),
    }
}

#[test]
fn expression_tree_matches_cpu() {
    let maxn = env_num("HEAPWIRE_OG_MAXN", 127) as usize;
    let mut st = Stats { ok: 0, rejected: 0 };
    let mut r = Rng(env_num("HEAPWIRE_OG_SEED", 0x9e3779b97f4a7c15) | 1);
    for pw in [PointerWidth::P32, PointerWidth::P64] {
        let s = expr(pw);
        let node = idx(&s, "expr.Node");
        for n in (1..=maxn).chain([300, 1000]) {
            let w = chain(n);
            let base = 8 * (1 + r.below(1 << 20));
            let ow = [64, 128, 256][r.below(3) as usize];
            let iw = [32, 64, 128][r.below(3) as usize];
            check(&s, node, &w, base, &[], (iw, ow), &format!("expr {pw:?} n={n} in {iw} out {ow}"), &mut st);
        }
        // registers through the register port, base 0 (no reference to object 0 here)
        let regs: Vec<u64> = (0..s.messages.len() as u64).map(|i| 0x4000_1000 + 0x40 * i).collect();
        check(&s, node, &chain(5), 0, &regs, (64, 256), "expr regs", &mut st);
    }
    assert!(st.ok >= 2 * maxn);
    eprintln!("expression tree: {} identical images, {} identical rejections", st.ok, st.rejected);
}

#[test]
fn random_graphs_and_mutations_match_cpu() {
    let cases = env_num("HEAPWIRE_OG_CASES", 30);
    let mut st = Stats { ok: 0, rejected: 0 };
    let mut r = Rng(env_num("HEAPWIRE_OG_SEED", 0x2545f4914f6cdd1d) | 1);
    let schemas = [
        (expr(PointerWidth::P32), "expr.Node"),
        (expr(PointerWidth::P64), "expr.Operation"),
        (zoo(PointerWidth::P64), "zoo.Animal"),
        (zoo(PointerWidth::P32), "zoo.Box"),
    ];
    for (s, rootname) in &schemas {
        let root = idx(s, rootname);
        for case in 0..cases {
            let w = random_graph(s, root, &mut r);
            let base = if r.chance(10) { 0 } else { 8 * r.below(1 << 24) };
            let regs: Vec<u64> = if r.chance(30) { (0..s.messages.len()).map(|_| r.next()).collect() } else { Vec::new() };
            let ow = [64, 128, 256][r.below(3) as usize];
            let iw = [32, 64, 128][r.below(3) as usize];
            check(s, root, &w, base, &regs, (iw, ow), &format!("{rootname} case {case} in {iw} out {ow}"), &mut st);
            let m = mutate(&w, &mut r);
            check(s, root, &m, base, &regs, (iw, ow), &format!("{rootname} mutated case {case} in {iw} out {ow}"), &mut st);
        }
    }
    eprintln!("random graphs: {} identical images, {} identical rejections", st.ok, st.rejected);
    assert!(st.ok > 0 && st.rejected > 0);
}

#[test]
fn corner_cases_match_cpu() {
    let mut st = Stats { ok: 0, rejected: 0 };
    let s32 = expr(PointerWidth::P32);
    let node = idx(&s32, "expr.Node");
    let lit = idx(&s32, "expr.Literal");
    let op = idx(&s32, "expr.Operation");
    let w = chain(3);
    let mut cases: Vec<(usize, Vec<u8>, u64, &str)> = vec![
        (node, vec![], 8, "empty"),
        (node, vec![0, 0, 0], 8, "short count"),
        (node, 0u32.to_le_bytes().to_vec(), 8, "zero objects"),
        (node, [0u32.to_le_bytes(), 0u32.to_le_bytes()].concat(), 8, "zero objects, trailing"),
        (node, 2u32.to_le_bytes().to_vec(), 8, "count too large"),
        (node, w.clone(), 4, "misaligned base"),
        (node, w.clone(), 0, "base 0, reference to object 1"),
        (node, w.clone(), 0xffff_fff0, "base near 4 GiB (32-bit)"),
        (lit, w.clone(), 8, "root type"),
        (op, w.clone(), 8, "root type ok"),
        (node, w[..w.len() - 1].to_vec(), 8, "truncated last member"),
        (node, w[..4 + 4 * 7 + 3].to_vec(), 8, "truncated first member"),
        (node, [w.clone(), vec![0]].concat(), 8, "trailing byte"),
    ];
    // a reference to object 0 at base 0
    let mut r0 = w.clone();
    let at = 4 + 4 * 7;
    r0[at..at + 4].copy_from_slice(&0u32.to_le_bytes());
    cases.push((node, r0, 0, "reference to object 0 at base 0"));
    let mut bad = w.clone();
    bad[at + 4..at + 8].copy_from_slice(&7u32.to_le_bytes());
    cases.push((node, bad, 8, "reference out of range"));
    let mut nul = w.clone();
    nul[at..at + 4].copy_from_slice(&u32::MAX.to_le_bytes());
    cases.push((node, nul, 8, "null reference"));
    let mut ut = w.clone();
    ut[8..12].copy_from_slice(&5u32.to_le_bytes());
    cases.push((node, ut, 8, "unknown type"));
    // unknown ids whose low bits name a class (the core's type ROM matches the low bits,
    // the bits above are checked apart, in two halves)
    for (obj, bit, what) in [(1, 1, "unknown type, bit 1 set"), (0, 16, "unknown type, bit 16 set"), (1, 31, "unknown type, bit 31 set")] {
        let mut hi = w.clone();
        let at = 4 + 4 * obj;
        let id = u32::from_le_bytes(hi[at..at + 4].try_into().unwrap()) | 1 << bit;
        hi[at..at + 4].copy_from_slice(&id.to_le_bytes());
        cases.push((node, hi, 8, what));
    }
    for (root, w, base, what) in &cases {
        for iwow in [(64, 64), (64, 256), (32, 128), (128, 64)] {
            check(&s32, *root, w, *base, &[], iwow, what, &mut st);
        }
    }
    // image_too_large: a tiny limit through both engines
    let opts = DecodeOptions { base: 8, max_image_bytes: 40, ..Default::default() };
    let e = ObjDecoder::new(&s32).decode(node, &w, &opts, &mut Vec::new()).unwrap_err();
    let so = Options { base: 8, max_image_bytes: 40, ..Default::default() };
    match simulate(&s32, node, &w, &so) {
        Err(SimError::Rejected { kind, offset, .. }) => assert_eq!((e.kind, e.offset), (kind, offset)),
        other => panic!("image_too_large: {other:?}"),
    }
    // the zoo: a reference of the wrong class
    let z = zoo(PointerWidth::P64);
    let animal = idx(&z, "zoo.Animal");
    let mut zw = Vec::new();
    for x in [2u32, 1, 2] {
        zw.extend_from_slice(&x.to_le_bytes());
    }
    zw.extend_from_slice(&1u32.to_le_bytes()); // friend -> Food: reference_type
    zw.push(0xfe);
    zw.extend_from_slice(&1u32.to_le_bytes());
    zw.extend_from_slice(&(-3i16).to_le_bytes());
    zw.push(1);
    zw.extend_from_slice(&2.5f64.to_le_bytes());
    zw.push(5);
    zw.push(200);
    zw.extend_from_slice(&(-9i64).to_le_bytes());
    zw.extend_from_slice(&u32::MAX.to_le_bytes());
    check(&z, animal, &zw, 64, &[], (64, 256), "zoo reference_type", &mut st);
    zw[12..16].copy_from_slice(&u32::MAX.to_le_bytes());
    check(&z, animal, &zw, 64, &[], (128, 128), "zoo ok", &mut st);
    eprintln!("corner cases: {} identical images, {} identical rejections", st.ok, st.rejected);
}

//! System test: the simulated core against the CPU engine, byte for byte.
//!
//! For every test schema, random valid messages (schema-driven: every field kind, packed
//! and unpacked, repeats, merges, oneof switches, unknown fields and groups, closed-enum
//! unknowns, bad UTF-8 now and then), their mutations (truncations, byte flips, inserted
//! bytes) and a sample of the bench workloads run through both engines; the image must be
//! identical, or both must reject with the same kind at the same offset.
//!
//! Knobs: HEAPWIRE_RTL_CASES (cases per schema, default 40), HEAPWIRE_RTL_SEED,
//! HEAPWIRE_RTL_BENCH (bench messages per workload, default 6), HEAPWIRE_RTL_OUT_WIDTH
//! (output memory width), HEAPWIRE_RTL_IN_WIDTH (input memory width) and
//! HEAPWIRE_RTL_ONE_PASS (0/1, the core's ONE_PASS), HEAPWIRE_RTL_OUT2_WR (0/1, the
//! core's OUT2_WR); by default cases go round output widths 64 and 256 bits, one pass and
//! two passes, input widths 64, 128 and 32, with and without the second write port.

mod common;
#[path = "common/protobuf.rs"]
mod protobuf;
use common::{env_num, root, Rng};
use protobuf::{read_delimited, schema};
use std::path::PathBuf;

use heapwire_cpu::{DecodeOptions, Decoder};
use heapwire_engine::framing::put_varint;
use heapwire_schema::{CompiledSchema, LayoutOptions, PointerWidth};
use heapwire_sim::protobuf::{simulate, Options};
use heapwire_sim::SimError;
use heapwire_testkit::{protobuf_gen, workloads};

struct Stats {
    ok: usize,
    rejected: usize,
    failures: Vec<String>,
    cycles: u64,
    bytes: u64,
}

fn compare(s: &CompiledSchema, mi: usize, input: &[u8], base: u64, label: &str, st: &mut Stats) {
    let mut dec = Decoder::new(s);
    let mut img = Vec::new();
    let opts = DecodeOptions { base, ..Default::default() };
    let cpu = dec.decode(mi, input, &opts, &mut img);
    // both output widths and one pass / two passes, in turn (HEAPWIRE_RTL_OUT_WIDTH and
    // HEAPWIRE_RTL_ONE_PASS=0/1 force one)
    let n = st.ok + st.rejected + st.failures.len();
    let out_width = match std::env::var("HEAPWIRE_RTL_OUT_WIDTH").ok().and_then(|w| w.parse().ok()) {
        Some(w) => w,
        None => [64, 256][n % 2],
    };
    let one_pass = match std::env::var("HEAPWIRE_RTL_ONE_PASS").ok().as_deref() {
        Some("0") => false,
        Some(_) => true,
        None => n % 4 < 2,
    };
    // input widths: mostly 64, some 128 (with 256-bit output, one pass) and 32 (64-bit
    // output, two passes): two more simulator builds per schema (HEAPWIRE_RTL_IN_WIDTH forces one)
    let in_width = match std::env::var("HEAPWIRE_RTL_IN_WIDTH").ok().and_then(|w| w.parse().ok()) {
        Some(w) => w,
        None => [64, 128, 64, 64, 64, 64, 32, 64][n % 8],
    };
    // the second output write port: used, except in the 256-bit one-pass 64-bit-input
    // builds (no more simulator builds; HEAPWIRE_RTL_OUT2_WR=0/1 forces it)
    let out2_wr = match std::env::var("HEAPWIRE_RTL_OUT2_WR").ok().as_deref() {
        Some("0") => false,
        Some(_) => true,
        None => n % 8 != 5,
    };
    let hw = simulate(s, mi, input, &Options { base, out_width, in_width, one_pass, out2_wr, ..Default::default() });
    let verdict = match (&cpu, &hw) {
        (Ok(()), Ok(out)) => {
            st.cycles += out.cycles;
            st.bytes += input.len() as u64;
            if out.image == img {
                st.ok += 1;
                None
            } else {
                let at = out.image.iter().zip(&img).position(|(a, b)| a != b).unwrap_or(img.len().min(out.image.len()));
                Some(format!("images differ (cpu {} bytes, core {} bytes, first difference at {at})", img.len(), out.image.len()))
            }
        }
        (Err(e), Err(SimError::Rejected { kind, offset, .. })) => {
            if e.kind == *kind && e.offset as u64 == *offset {
                st.rejected += 1;
                None
            } else {
                Some(format!("cpu {e}, core {kind} at byte {offset}"))
            }
        }
        (Ok(()), Err(e)) => Some(format!("cpu ok, core {e}")),
        (Err(e), Ok(_)) => Some(format!("cpu {e}, core ok")),
        (Err(e), Err(h)) => Some(format!("cpu {e}, core {h}")),
    };
    if let Some(v) = verdict {
        let hex: String = input.iter().map(|b| format!("{b:02x}")).collect();
        st.failures.push(format!("{label} [{} {}]: {v}\n    input ({} bytes): {hex}", s.messages[mi].full_name, base, input.len()));
    }
}

fn run_schema(s: &CompiledSchema, name: &str, seed: u64, cases: u64, st: &mut Stats) {
    let mut r = Rng(seed | 1);
    let roots: Vec<usize> = (0..s.messages.len()).filter(|&i| !s.messages[i].is_map_entry()).collect();
    for c in 0..cases {
        let mi = roots[r.below(roots.len() as u64) as usize];
        let mut msg = Vec::new();
        let mut budget = 40i64;
        protobuf_gen::message(&mut r, s, mi, 0, &mut budget, &mut msg);
        let base = if r.chance(20) { 0x1000 * (1 + r.below(16)) } else { 0 };
        compare(s, mi, &msg, base, &format!("{name} case {c}"), st);
        if r.chance(60) {
            let m = protobuf_gen::mutate(&mut r, &msg);
            compare(s, mi, &m, 0, &format!("{name} case {c} mutated"), st);
        }
    }
}

#[test]
fn core_matches_cpu_engine() {
    let seed = env_num("HEAPWIRE_RTL_SEED", 12345);
    let cases = env_num("HEAPWIRE_RTL_CASES", 40);
    let mut st = Stats { ok: 0, rejected: 0, failures: Vec::new(), cycles: 0, bytes: 0 };
    let p32 = LayoutOptions { pointer_width: PointerWidth::P32, header_words: false };
    let hdr = LayoutOptions { pointer_width: PointerWidth::P64, header_words: true };
    let mut sets: Vec<(String, CompiledSchema)> = Vec::new();
    for (p, inc) in [
        ("crates/cpu/testdata/unit.proto", vec!["crates/cpu/testdata"]),
        ("crates/cpu/testdata/unit2.proto", vec!["crates/cpu/testdata"]),
        ("bench/schemas/social.proto", vec!["bench/schemas"]),
    ] {
        if let Some(s) = schema(p, &inc, LayoutOptions::default()) {
            sets.push((p.to_string(), s));
        }
    }
    if let Ok(rd) = std::fs::read_dir(root().join("tests/differential/schemas")) {
        let mut files: Vec<PathBuf> = rd.filter_map(|e| e.ok()).map(|e| e.path()).filter(|p| p.extension().is_some_and(|x| x == "proto")).collect();
        files.sort();
        for f in files {
            let rel = f.strip_prefix(root()).unwrap().to_string_lossy().to_string();
            if let Some(s) = schema(&rel, &["tests/differential/schemas"], LayoutOptions::default()) {
                sets.push((rel, s));
            }
        }
    }
    // other layouts: 32-bit pointers, header words
    if let Some(s) = schema("crates/cpu/testdata/unit.proto", &["crates/cpu/testdata"], p32) {
        sets.push(("unit.proto (32-bit pointers)".into(), s));
    }
    if let Some(s) = schema("crates/cpu/testdata/unit2.proto", &["crates/cpu/testdata"], hdr) {
        sets.push(("unit2.proto (header words)".into(), s));
    }
    assert!(sets.len() >= 3, "test schemas did not compile");
    for (i, (name, s)) in sets.iter().enumerate() {
        run_schema(s, name, seed.wrapping_add(i as u64 * 7919), cases, &mut st);
    }
    // bench workloads (bench/out/quick, from `bench/run.sh --quick`), when present
    let social = sets.iter().find(|(n, _)| n.contains("social")).map(|(_, s)| s);
    let per = env_num("HEAPWIRE_RTL_BENCH", 6) as usize;
    let mut bench_n = 0;
    let quick = root().join(workloads::QUICK_DIR);
    if let (Some(s), true) = (social, quick.join("manifest.json").exists()) {
        for (file, ty) in workloads::SOCIAL {
            let (Ok(data), Some(mi)) = (std::fs::read(quick.join(file)), s.message_index(ty)) else { continue };
            for (k, m) in read_delimited(&data, per).iter().enumerate() {
                compare(s, mi, m, 0, &format!("{file} #{k}"), &mut st);
                bench_n += 1;
            }
        }
    } else {
        eprintln!("{} missing: {} to include the workloads", workloads::QUICK_DIR, workloads::QUICK_HINT);
    }
    // hand-written malformed and corner cases
    if let Some((_, s)) = sets.iter().find(|(n, _)| n == "crates/cpu/testdata/unit.proto") {
        let node = s.message_index("unit.Node").unwrap();
        let mut deep = Vec::new();
        for _ in 0..102 {
            let mut w = vec![0xd2, 0x01];
            put_varint(&mut w, deep.len() as u64);
            w.extend_from_slice(&deep);
            deep = w;
        }
        let cases: Vec<Vec<u8>> = vec![
            vec![],
            vec![0x08],
            vec![0x00, 0x01],
            vec![0x0e, 0x01],
            vec![0x0f],
            vec![0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01],
            vec![0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f],
            vec![0x88, 0x80, 0x80, 0x80, 0x00, 0x01],
            vec![0x88, 0x80, 0x80, 0x80, 0x80, 0x00, 0x01],
            vec![0xff, 0xff, 0xff, 0xff, 0x1f, 0x01],
            vec![0x72, 0x05, 0x61],
            vec![0x72, 0x02, 0xc3, 0x28],
            vec![0x72, 0x01, 0xed],
            vec![0x3d, 0x01, 0x02],
            vec![0xa2, 0x01, 0x03, 0x01, 0x02],
            vec![0x1b, 0x08, 0x01, 0x1c],
            vec![0x1b, 0x08, 0x01, 0x24],
            vec![0x1c],
            vec![0x1b, 0x08, 0x01],
            vec![0xba, 0x01, 0x02, 0x01, 0x02, 0xc2, 0x01, 0x01, 0x61, 0xb8, 0x01, 0x05],
            vec![0xca, 0x01, 0x02, 0x08, 0x01, 0xb8, 0x01, 0x07, 0xca, 0x01, 0x02, 0x08, 0x02],
            vec![0x92, 0x01, 0x02, 0x08, 0x01, 0x92, 0x01, 0x04, 0x12, 0x02, 0x68, 0x69],
            deep.clone(),
            deep[..deep.len() - 3].to_vec(),
        ];
        for (k, c) in cases.iter().enumerate() {
            compare(s, node, c, 0, &format!("hand case {k}"), &mut st);
        }
        // misaligned base
        compare(s, node, &[0x08, 0x01], 4, "misaligned base", &mut st);
    }
    if let Some((_, s)) = sets.iter().find(|(n, _)| n == "crates/cpu/testdata/unit2.proto") {
        let req = s.message_index("unit2.Req").unwrap();
        for (k, c) in [
            vec![0x10, 0x01],
            vec![0x08, 0x01, 0x10, 0x07, 0x1a, 0x03, 0x01, 0x09, 0x02],
            vec![0x08, 0x01, 0x32, 0x02, 0x10, 0x01],
            vec![0x08, 0x01, 0x23, 0x28, 0x05, 0x24],
            vec![0x08, 0x01, 0x23, 0x28, 0x05, 0x2c],
        ]
        .iter()
        .enumerate()
        {
            compare(s, req, c, 0, &format!("unit2 hand case {k}"), &mut st);
        }
    }
    eprintln!(
        "system test: {} identical images, {} identical rejections, {} failures; {} bench messages; {:.3} bytes/cycle on accepted inputs",
        st.ok,
        st.rejected,
        st.failures.len(),
        bench_n,
        st.bytes as f64 / st.cycles.max(1) as f64
    );
    for f in st.failures.iter().take(15) {
        eprintln!("FAIL {f}");
    }
    assert!(st.failures.is_empty(), "{} mismatches between the core and the CPU engine", st.failures.len());
    assert!(st.ok > 20 && st.rejected > 10, "too few cases exercised");
}

//! `heapwire compile --rtl` and `heapwire sim` end to end, through the binary: the files
//! `--rtl` writes, and `sim` writing exactly what `decode` writes (image bytes on stdout,
//! the same `<kind> at byte <offset>` line and exit 1 on a rejected input), for both
//! wires, single messages and `--delimited` streams. Needs Icarus Verilog (scripts/setup.sh).

mod common;

use std::process::Output;

use common::{delimit, heapwire, stderr};

/// The `cycles: N` line of a `sim` run.
fn cycles(o: &Output) -> u64 {
    let e = stderr(o);
    let line = e.lines().find(|l| l.starts_with("cycles: ")).unwrap_or_else(|| panic!("no cycles line in {e:?}"));
    line["cycles: ".len()..].parse().unwrap()
}

/// The stderr line naming the rejection (everything but the cycles line).
fn verdict(o: &Output) -> String {
    stderr(o).lines().filter(|l| !l.starts_with("cycles: ")).collect::<Vec<_>>().join("\n")
}

const UNIT: [&str; 4] = ["--schema", "crates/cpu/testdata/unit.proto", "--type", "unit.Node"];
const EXPR: [&str; 6] = ["--schema", "examples/expression_tree/expr.proto", "--type", "expr.Node", "--wire", "objgraph"];

fn encode_json(json: &str) -> Vec<u8> {
    let o = heapwire(&[&["encode"], &UNIT[..], &["--from-json", "-"]].concat(), json.as_bytes());
    assert!(o.status.success(), "encode: {}", stderr(&o));
    o.stdout
}

/// Runs `decode` and `sim` with the same arguments and input; both must agree on the
/// exit status, the image bytes and the rejection line. Returns the `sim` output.
fn agree(common: &[&str], extra: &[&str], input: &[u8]) -> Output {
    let dec = heapwire(&[&["decode"], common, extra, &["-"]].concat(), input);
    let sim = heapwire(&[&["sim"], common, extra, &["-"]].concat(), input);
    assert_eq!(sim.status.code(), dec.status.code(), "exit status: sim {} / decode {}", stderr(&sim), stderr(&dec));
    assert_eq!(sim.stdout, dec.stdout, "image bytes differ ({extra:?})");
    assert_eq!(verdict(&sim), stderr(&dec).trim_end(), "rejection line");
    sim
}

#[test]
fn compile_rtl_writes_the_cores() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let o = heapwire(&["compile", "crates/cpu/testdata/unit.proto", "-o", d, "--rtl"], b"");
    assert!(o.status.success(), "{}", stderr(&o));
    // (the hand-written files: crates/emit's SOURCES, which its tests keep equal to rtl/hw_pb_core.f)
    for f in std::iter::once("unit_core.gen.v").chain(heapwire_emit::verilog::protobuf::SOURCES.iter().map(|(name, _)| *name)) {
        assert!(dir.path().join(f).is_file(), "compile --rtl did not write {f}");
    }
    let o = heapwire(&["compile", "examples/expression_tree/expr.proto", "-o", d, "--rtl"], b"");
    assert!(o.status.success(), "{}", stderr(&o));
    for f in ["expr_og_core.gen.v", "hw_axi_wrap.v"].into_iter().chain(heapwire_emit::verilog::objgraph::SOURCES.iter().map(|(name, _)| *name)) {
        assert!(dir.path().join(f).is_file(), "compile --rtl did not write {f}");
    }
    // each core also on standard buses (rtl/hw_axi_wrap.v around it)
    for (f, module) in [("unit_core.gen.v", "module heapwire_axi #("), ("expr_og_core.gen.v", "module heapwire_og_axi #(")] {
        let text = std::fs::read_to_string(dir.path().join(f)).unwrap();
        assert!(text.contains(module) && text.contains("hw_axi_wrap #("), "{f} has no {module}");
    }
}

#[test]
fn protobuf_sim_matches_decode() {
    let a = encode_json(r#"{"i32": -5, "s": "héllo", "leaves": [{"id": 1, "vals": ["-3", "4"]}, {"name": "x"}], "packedInts": [1, 2, 300], "byName": {"k": {"id": 9}}, "cStr": "c"}"#);
    let b = encode_json(r#"{"u64": "18446744073709551615", "child": {"child": {"b": true}}, "dbls": [1.5, -0.0]}"#);
    let empty: &[u8] = b"";

    let single = agree(&UNIT, &["--base", "0x10000"], &a);
    assert!(single.status.success() && !single.stdout.is_empty());
    assert!(cycles(&single) > 0);

    // A stream: each image follows the previous one, pointers relocated accordingly.
    let stream = delimit(&[&a, &b, empty, &a]);
    let s = agree(&[&UNIT[..], &["--delimited"]].concat(), &["--base", "4096"], &stream);
    assert!(s.status.success());
    assert!(cycles(&s) > cycles(&single), "a stream of four costs more cycles than one message");

    // Rejections: the same kind and absolute offset (and message index) as decode.
    let o = agree(&UNIT, &[], &a[..a.len() - 1]);
    assert_eq!(o.status.code(), Some(1));
    assert!(verdict(&o).contains("at byte"), "{}", verdict(&o));
    let mut bad = b.clone();
    bad.extend_from_slice(&[0x00, 0x01]); // field number 0
    let o = agree(&[&UNIT[..], &["--delimited"]].concat(), &[], &delimit(&[&a, &bad]));
    assert_eq!(o.status.code(), Some(1));
    assert!(verdict(&o).contains("(message 1)"), "{}", verdict(&o));
    // A length prefix claiming more than is there.
    let mut cut = delimit(&[&a]);
    cut.truncate(cut.len() - 3);
    let o = agree(&[&UNIT[..], &["--delimited"]].concat(), &[], &cut);
    assert_eq!(o.status.code(), Some(1));
}

/// `sim`'s core parameters: every build writes decode's image; the default is the build
/// the recorded figures use (128-bit input, 256-bit output, second port, one pass).
#[test]
fn protobuf_sim_core_parameters() {
    let a = encode_json(r#"{"s": "a string of some forty bytes, copied here", "strs": ["x", "yz"], "leaves": [{"id": 1}, {"id": 2}], "packedInts": [1, 2, 300]}"#);
    let dec = heapwire(&[&["decode"], &UNIT[..], &["-"]].concat(), &a);
    assert!(dec.status.success(), "{}", stderr(&dec));
    let run = |flags: &[&str]| {
        let o = heapwire(&[&["sim"], &UNIT[..], flags, &["-"]].concat(), &a);
        assert!(o.status.success(), "sim {flags:?}: {}", stderr(&o));
        assert_eq!(o.stdout, dec.stdout, "sim {flags:?}: image differs from decode's");
        cycles(&o)
    };
    let default = run(&[]);
    assert_eq!(default, run(&["--in-width", "128", "--out-width", "256"]), "the default build is 128/256");
    let narrow = run(&["--in-width", "64", "--out-width", "64"]);
    assert!(narrow > default, "64/64 ({narrow} cycles) should take more cycles than 128/256 ({default})");
    let plain = run(&["--in-width", "32", "--out-width", "128", "--no-out2", "--two-pass"]);
    assert!(plain > default, "32/128, two passes, one write port ({plain} cycles) vs 128/256 ({default})");
    // run-time-loaded tables: the same image and, read a cycle ahead, the same cycles
    assert_eq!(run(&["--tables"]), default, "--tables (TABLES=1) takes the ROM build's cycles");
    for bad in [&["--in-width", "48"][..], &["--out-width", "32"][..]] {
        let o = heapwire(&[&["sim"], &UNIT[..], bad, &["-"]].concat(), &a);
        assert_eq!(o.status.code(), Some(2), "sim {bad:?}: {}", stderr(&o));
    }
    let o = heapwire(&[&["sim"], &EXPR[..], &["--two-pass", "-"]].concat(), b"");
    assert_eq!(o.status.code(), Some(2), "objgraph --two-pass: {}", stderr(&o));
    let o = heapwire(&[&["sim"], &EXPR[..], &["--tables", "-"]].concat(), b"");
    assert_eq!(o.status.code(), Some(2), "objgraph --tables: {}", stderr(&o));
}

#[test]
fn objgraph_sim_matches_decode() {
    // The paper's 3+(5*4) (docs/objgraph-wire.md).
    let tree: Vec<u8> = [
        "05000000", "01000000", "00000000", "01000000", "00000000", "00000000", "0100000002000000", "00",
        "03000000", "030000000400000002", "05000000", "04000000",
    ]
    .concat()
    .as_bytes()
    .chunks(2)
    .map(|h| u8::from_str_radix(std::str::from_utf8(h).unwrap(), 16).unwrap())
    .collect();
    assert_eq!(tree.len(), 54);
    let o = agree(&EXPR, &["--base", "0x2000"], &tree);
    assert!(o.status.success() && o.stdout.len() == 5 * 32);
    let o = agree(&[&EXPR[..], &["--delimited"]].concat(), &["--base", "0x2000"], &delimit(&[&tree, &tree]));
    assert!(o.status.success() && o.stdout.len() == 10 * 32);

    let mut bad = tree.clone();
    bad[24] = 9; // the add's left child: object 9 of 5
    let o = agree(&EXPR, &[], &bad);
    assert_eq!(o.status.code(), Some(1));
    assert!(verdict(&o).contains("bad_reference at byte 24"), "{}", verdict(&o));
    let o = agree(&[&EXPR[..], &["--delimited"]].concat(), &[], &delimit(&[&tree, &tree[..40]]));
    assert_eq!(o.status.code(), Some(1));
    assert!(verdict(&o).contains("(message 1)"), "{}", verdict(&o));
}

#[test]
fn sim_usage_errors_exit_2() {
    let o = heapwire(&["sim", "--schema", "crates/cpu/testdata/unit.proto", "--type", "unit.Nope", "-"], b"");
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    // Objgraph needs a class.
    let o = heapwire(&["sim", "--schema", "crates/cpu/testdata/unit.proto", "--type", "unit.Node", "--wire", "objgraph", "-"], b"");
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}

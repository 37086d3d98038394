//! The command line end to end on the CPU engine: one rejection line per kind of
//! failure, `bench` on single messages, streams and object graphs, and the object-graph
//! JSON round trip through `decode --json` and `encode --from-json`.

mod common;

use common::{delimit, heapwire, stderr};
use heapwire_testkit::scaled_tree::paper;

const UNIT: [&str; 4] = ["--schema", "crates/cpu/testdata/unit.proto", "--type", "unit.Node"];
const EXPR: [&str; 6] = ["--schema", "examples/expression_tree/expr.proto", "--type", "expr.Node", "--wire", "objgraph"];

/// `unit.Node {i32: 42, s: "hi"}`.
const NODE: &[u8] = b"\x08\x2a\x72\x02hi";


fn rejected(args: &[&str], input: &[u8]) -> String {
    let o = heapwire(args, input);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let e = stderr(&o);
    assert_eq!(e.lines().count(), 1, "one line: {e:?}");
    e.trim_end().to_string()
}

#[test]
fn rejections_name_kind_byte_and_message() {
    let decode = [&["decode"], &UNIT[..], &["-"]].concat();
    assert_eq!(rejected(&decode, &NODE[..5]), "heapwire: rejected: length_past_end at byte 3");
    let stream = [&["decode", "--delimited"], &UNIT[..], &["-"]].concat();
    // Message 1 cut short: its string's length claims more than the message holds.
    let s = delimit(&[NODE, &NODE[..5]]);
    assert_eq!(rejected(&stream, &s), "heapwire: rejected: length_past_end at byte 11 (message 1)");
    // The stream itself cut off inside message 1.
    let mut s = delimit(&[NODE, NODE]);
    s.truncate(s.len() - 2);
    assert_eq!(rejected(&stream, &s), "heapwire: rejected: truncated at byte 12 (message 1)");
    // A length prefix that never ends.
    let mut s = delimit(&[NODE]);
    s.extend_from_slice(&[0xff; 11]);
    assert_eq!(rejected(&stream, &s), "heapwire: rejected: varint_too_long at byte 7 (message 1)");
    let og = [&["decode"], &EXPR[..], &["-"]].concat();
    assert_eq!(rejected(&og, &paper()[..50]), "heapwire: rejected: truncated at byte 50");
}

fn bench_line(args: &[&str], input: &[u8]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("input.bin");
    std::fs::write(&f, input).unwrap();
    let o = heapwire(&[&["bench", "--reps", "3"], args, &[f.to_str().unwrap()]].concat(), b"");
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8(o.stdout).unwrap();
    out.lines().last().unwrap().to_string()
}

#[test]
fn bench_reads_one_message_a_stream_or_an_object_graph() {
    let single = bench_line(&UNIT, NODE);
    assert!(single.starts_with("decode: ") && single.ends_with(" msg/s"), "{single}");
    let stream = bench_line(&[&UNIT[..], &["--delimited"]].concat(), &delimit(&[NODE, NODE, NODE]));
    assert!(stream.starts_with("decode: ") && stream.contains(" MB/s, "), "{stream}");
    let graph = bench_line(&EXPR, &paper());
    assert!(graph.starts_with("decode: "), "{graph}");
    // Without --delimited a stream is one (malformed) protobuf message: rejected.
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("graph.bin");
    std::fs::write(&f, paper()).unwrap();
    let o = heapwire(&[&["bench"], &UNIT[..], &[f.to_str().unwrap()]].concat(), b"");
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
}

#[test]
fn bench_times_with_the_cpu_clock_unless_told_wall() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("input.bin");
    std::fs::write(&f, NODE).unwrap();
    let run = |clock: &[&str]| heapwire(&[&["bench", "--reps", "2"], &UNIT[..], clock, &[f.to_str().unwrap()]].concat(), b"");
    for (args, name) in [(&[][..], "cpu"), (&["--clock", "cpu"][..], "cpu"), (&["--clock", "wall"][..], "wall")] {
        let o = run(args);
        assert!(o.status.success(), "{args:?}: {}", stderr(&o));
        let out = String::from_utf8(o.stdout).unwrap();
        assert!(out.contains(&format!("clock: {name}\n")), "{args:?}: {out}");
        assert!(out.lines().last().unwrap().starts_with("decode: "), "{out}");
    }
    let o = run(&["--clock", "cycles"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("'cycles' is neither cpu nor wall"), "{}", stderr(&o));
}

#[test]
fn objgraph_json_round_trip_one_document_per_line() {
    let g = paper();
    let o = heapwire(&[&["decode", "--delimited", "--json"], &EXPR[..], &["-"]].concat(), &delimit(&[&g, &g]));
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8(o.stdout).unwrap();
    assert_eq!(text.lines().count(), 2, "{text}");
    let o = heapwire(&[&["encode", "--delimited", "--from-json"], &EXPR[..], &["-"]].concat(), text.as_bytes());
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(o.stdout, delimit(&[&g, &g]));
    // Pretty (one object per line) without --delimited, and it parses back too.
    let o = heapwire(&[&["decode", "--json"], &EXPR[..], &["-"]].concat(), &g);
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(text.lines().count() > 5, "{text}");
    let o = heapwire(&[&["encode", "--from-json"], &EXPR[..], &["-"]].concat(), text.as_bytes());
    assert_eq!(o.stdout, g, "{}", stderr(&o));
}

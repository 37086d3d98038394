//! Bytes per cycle of the objgraph core on the MSR expression tree (the paper's scaled
//! tree: n Operations, 2n+1 objects, 21n+12 wire bytes), both layouts, 64- and 128-bit
//! input memory, 256-bit output memory (`out=64|128|256` changes it), cycles from start to
//! done (allocation and member phases included). Every image is checked against the CPU
//! engine before its cycles are reported.
//!   cargo run --release -p heapwire-sim --example og_figures [-- n... [out=BITS]]

use std::path::Path;

use heapwire_testkit::scaled_tree::wire as chain;
use heapwire_cpu::objgraph::ObjDecoder;
use heapwire_cpu::DecodeOptions;
use heapwire_schema::{compile_files, LayoutOptions, PointerWidth};
use heapwire_sim::objgraph::{simulate, Options};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let ns: Vec<usize> = args.iter().filter_map(|a| a.parse().ok()).collect();
    let out_width = match args.iter().find_map(|a| a.strip_prefix("out=")) {
        Some(v) => v.parse().unwrap_or_else(|_| panic!("out={v}: expected 64, 128 or 256")),
        None => 256,
    };
    if let Some(bad) = args.iter().find(|a| a.parse::<usize>().is_err() && !a.starts_with("out=")) {
        panic!("unknown argument {bad:?}: expected tree sizes n and out=BITS");
    }
    let ns = if ns.is_empty() { vec![1, 8, 32, 127, 1000] } else { ns };
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/expression_tree/expr.proto");
    let schemas: Vec<_> = [PointerWidth::P32, PointerWidth::P64]
        .into_iter()
        .map(|pw| compile_files(std::slice::from_ref(&p), &[], LayoutOptions { pointer_width: pw, header_words: false }).unwrap())
        .collect();
    println!("OUT_WIDTH {out_width}");
    println!("| n | wire bytes | IN_WIDTH | cycles (32-bit layout) | cycles (64-bit layout) | bytes/cycle (32-bit / 64-bit) |");
    println!("|---|---|---|---|---|---|");
    for &n in &ns {
        let w = chain(n);
        for in_width in [64, 128] {
            let mut cyc = Vec::new();
            for s in &schemas {
                let root = s.message_index("expr.Node").unwrap();
                let mut img = Vec::new();
                ObjDecoder::new(s).decode(root, &w, &DecodeOptions { base: 0x1000, ..Default::default() }, &mut img).unwrap();
                let o = simulate(s, root, &w, &Options { base: 0x1000, in_width, out_width, ..Default::default() }).unwrap();
                assert_eq!(o.image, img, "n={n}: image differs from the CPU engine");
                cyc.push(o.cycles);
            }
            let bpc = |c: u64| w.len() as f64 / c as f64;
            println!("| {n} | {} | {in_width} | {} | {} | {:.2} / {:.2} |", w.len(), cyc[0], cyc[1], bpc(cyc[0]), bpc(cyc[1]));
        }
    }
}

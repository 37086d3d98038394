//! A loop to profile the objgraph decoders under `perf` (no C API, no baseline):
//! the paper's scaled expression tree with n Operation nodes, decoded `reps` times into
//! one buffer. Prints the median thread CPU ns per decode over 15 rounds.
//!   cargo run --release -p heapwire-cpu --example objgraph_profile -- N REPS [reference]
//!   perf record -g target/release/examples/objgraph_profile 1023 20000
use std::path::Path;

use heapwire_cpu::objgraph::{reference::ReferenceDecoder, ObjDecoder};
use heapwire_engine::Options;
use heapwire_schema::{compile_files, LayoutOptions, PointerWidth};

/// The tree of `bench/objgraph/bench.cpp`: Op(L, Op(L, ... L)), in prefix order.
fn tree(n: u32) -> Vec<u8> {
    let objects = 2 * n + 1;
    let mut w = objects.to_le_bytes().to_vec();
    // Prefix order: Op0, L0, Op1, L1, ..., Op(n-1), L(n-1), L(last).
    for k in 0..objects {
        w.extend_from_slice(&u32::from(k % 2 == 0 && k < 2 * n).to_le_bytes());
    }
    for k in 0..objects {
        if k % 2 == 0 && k < 2 * n {
            w.extend_from_slice(&(k + 1).to_le_bytes());
            w.extend_from_slice(&(k + 2).to_le_bytes());
            w.push((k / 2 % 3) as u8);
        } else {
            w.extend_from_slice(&(k as i32 % 10 + 1).to_le_bytes());
        }
    }
    w
}

/// This thread's CPU time in ns: a loaded machine's preemptions do not count.
fn cpu_ns() -> u64 {
    extern "C" {
        fn clock_gettime(clock: i32, ts: *mut [i64; 2]) -> i32;
    }
    const CLOCK_THREAD_CPUTIME_ID: i32 = 3;
    let mut ts = [0i64; 2];
    // SAFETY: `ts` is a valid timespec (two 64-bit words on the 64-bit Linux targets we run on).
    assert_eq!(unsafe { clock_gettime(CLOCK_THREAD_CPUTIME_ID, &mut ts) }, 0);
    ts[0] as u64 * 1_000_000_000 + ts[1] as u64
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let n: u32 = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(1023);
    let reps: usize = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(10000);
    let reference = args.get(3).is_some_and(|a| a == "reference");
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/expression_tree/expr.proto");
    let s = compile_files(&[p], &[], LayoutOptions { pointer_width: PointerWidth::P64, header_words: false }).expect("expr.proto compiles");
    let root = s.message_index("expr.Node").unwrap();
    let wire = tree(n);
    let mut buf = vec![0u64; (2 * n as usize + 1) * 4];
    let opts = Options { base: buf.as_ptr() as u64, type_words: (0..s.messages.len() as u64).collect(), ..Options::default() };
    let out = unsafe { std::slice::from_raw_parts_mut(buf.as_mut_ptr() as *mut u8, buf.len() * 8) };
    let mut fast = ObjDecoder::new(&s);
    let mut slow = ReferenceDecoder::new(&s);
    let mut times = Vec::new();
    for _ in 0..15 {
        let t = cpu_ns();
        for _ in 0..reps {
            let r = if reference { slow.decode_into(root, &wire, &opts, out) } else { fast.decode_into(root, &wire, &opts, out) };
            std::hint::black_box(r.expect("the tree decodes"));
        }
        times.push((cpu_ns() - t) as f64 / reps as f64);
    }
    times.sort_by(f64::total_cmp);
    let ns = times[times.len() / 2];
    println!(
        "n={n} objects={} wire={}B: {ns:.1} ns per decode, {:.2} ns per object, {:.0} MB/s of wire",
        2 * n + 1,
        wire.len(),
        ns / (2 * n + 1) as f64,
        wire.len() as f64 / ns * 1e3
    );
}

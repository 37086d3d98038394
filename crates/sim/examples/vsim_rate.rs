//! Requests per second of the simulated device (`VerilatedEngine`: one Verilated process
//! kept alive) against the per-request Icarus engine (`SimEngine`: one `vvp` process per
//! request), in the same run, on the social workloads' smallest and full-size messages
//! (`LoginRequest`, `StorePostRequest`; `bench/out/quick`, see `heapwire_testkit::workloads`).
//!
//! cargo run --release -p heapwire-sim --example vsim_rate [-- ROUNDS VSIM_REQS ICARUS_REQS]
//!
//! Each round times VSIM_REQS (default 2000) device requests and ICARUS_REQS (default
//! 10) Icarus requests over the workload's first messages; the medians of ROUNDS
//! (default 5) rounds are printed. Both engines' images are checked to be the CPU's.

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use heapwire_engine::framing::Delimited;
use heapwire_engine::{Engine, Options, Request, Wire};
use heapwire_sim::verilated::Config;
use heapwire_sim::{SimEngine, VerilatedEngine};
use heapwire_testkit::workloads;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

/// Requests per second of `n` requests through `e`, round-robin over `msgs`.
fn rate(e: &mut dyn Engine, mi: usize, msgs: &[Vec<u8>], n: usize, want: &[Vec<u8>]) -> f64 {
    let opts = Options::default();
    let mut out = Vec::new();
    let t = Instant::now();
    for k in 0..n {
        let i = k % msgs.len();
        e.decode(
            &Request {
                msg: mi,
                wire: Wire::Protobuf,
                input: &msgs[i],
                options: &opts,
            },
            &mut out,
        )
        .expect("decodes");
        assert_eq!(
            out,
            want[i],
            "{} image differs from the cpu engine's",
            e.name()
        );
    }
    n as f64 / t.elapsed().as_secs_f64()
}

fn main() {
    let a: Vec<usize> = std::env::args()
        .skip(1)
        .map(|x| x.parse().expect("a number"))
        .collect();
    let (rounds, vn, icn) = (
        a.first().copied().unwrap_or(5),
        a.get(1).copied().unwrap_or(2000),
        a.get(2).copied().unwrap_or(10),
    );
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let p = root.join("bench/schemas/social.proto");
    let schema = Arc::new(
        heapwire_schema::compile_files(&[p], &[root.join("bench/schemas")], Default::default())
            .expect("social.proto"),
    );
    let quick = root.join(workloads::QUICK_DIR);
    let mut dev = VerilatedEngine::new(schema.clone(), Config::default()).expect("config");
    let t = Instant::now();
    dev.start(Wire::Protobuf)
        .expect("the simulated device starts");
    eprintln!(
        "device ready in {:.1} s (build, or the cached program)",
        t.elapsed().as_secs_f64()
    );
    let mut icarus = SimEngine::new(schema.clone());
    let mut cpu = heapwire_cpu::CpuEngine::new(schema.clone());
    println!("| message | avg bytes | avg cycles | device req/s | icarus req/s | ratio |");
    println!("|---|---:|---:|---:|---:|---:|");
    for (file, ty) in [workloads::SOCIAL[4], workloads::SOCIAL[1]] {
        let data = std::fs::read(quick.join(file)).unwrap_or_else(|_| {
            panic!(
                "{} missing: {}",
                quick.join(file).display(),
                workloads::QUICK_HINT
            )
        });
        let mut stream = Delimited::new(&data[..]);
        let mut msgs = Vec::new();
        while msgs.len() < 100 {
            match stream.next_frame().expect("a delimited stream") {
                Some(m) => msgs.push(m.bytes.to_vec()),
                None => break,
            }
        }
        let mi = schema.message_index(ty).unwrap();
        let want: Vec<Vec<u8>> = msgs
            .iter()
            .map(|m| {
                let mut img = Vec::new();
                cpu.decode(
                    &Request {
                        msg: mi,
                        wire: Wire::Protobuf,
                        input: m,
                        options: &Options::default(),
                    },
                    &mut img,
                )
                .unwrap();
                img
            })
            .collect();
        rate(&mut icarus, mi, &msgs, 1, &want); // builds the Icarus simulators for these sizes
        let (mut dv, mut iv) = (Vec::new(), Vec::new());
        for _ in 0..rounds {
            dv.push(rate(&mut dev, mi, &msgs, vn, &want));
            iv.push(rate(&mut icarus, mi, &msgs, icn, &want));
        }
        let avg = msgs.iter().map(|m| m.len()).sum::<usize>() as f64 / msgs.len() as f64;
        let cycles: u64 = msgs
            .iter()
            .map(|m| {
                dev.decode(&Request { msg: mi, wire: Wire::Protobuf, input: m, options: &Options::default() }, &mut Vec::new()).unwrap();
                dev.last_cycles().unwrap()
            })
            .sum();
        let (d, i) = (median(dv), median(iv));
        let cycles = cycles as f64 / msgs.len() as f64;
        println!("| {} | {avg:.0} | {cycles:.0} | {d:.0} | {i:.1} | {:.0}x |", ty.rsplit('.').next().unwrap(), d / i);
    }
    assert_eq!(dev.spawns(Wire::Protobuf), 1);
}

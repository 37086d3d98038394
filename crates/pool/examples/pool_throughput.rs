//! Decode throughput on the application's thread against through the offload pool.
//!
//! ```text
//! cargo run --release -p heapwire-pool --example pool_throughput -- [--workers N] [--reps R]
//!     [--region BYTES] [--depth D] [--pin] [--dir bench/out/quick]
//! ```
//!
//! Input: the social workloads `bench/run.sh --quick` writes (`bench/out/quick`, all five
//! request types interleaved); without them, random social messages from the testkit.
//!
//! * `inline`: the application's thread decodes each message with `CpuEngine::decode_into`
//!   into one reused, 8-aligned buffer at that buffer's address.
//! * `pool`: the application's thread submits every message (`Block`); a second
//!   application thread receives each completion and releases the image at once.
//!
//! It prints messages and input megabytes per second for each, and for the pool the
//! CPU time the application's submitting thread spent (per message) against inline's.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use heapwire_cpu::CpuEngine;
use heapwire_engine::framing::Delimited;
use heapwire_engine::{Engine, Options, Request, Wire};
use heapwire_pool::{Backpressure, Job, Outcome, Pinning, Pool, PoolConfig};
use heapwire_schema::{CompiledSchema, LayoutOptions};
use heapwire_testkit::{protobuf_gen, workloads, Rng};

fn arg(args: &[String], name: &str) -> Option<String> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
}

/// This thread's CPU time in seconds.
fn thread_cpu() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid clock id and a timespec to write.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

/// (message index, bytes) for every message of the corpus.
fn corpus(schema: &CompiledSchema, dir: &Path) -> (Vec<(usize, Vec<u8>)>, &'static str) {
    let mut per_type = Vec::new();
    for (file, ty) in workloads::SOCIAL {
        let Ok(f) = std::fs::File::open(dir.join(file)) else {
            continue;
        };
        let msg = schema.message_index(ty).expect("social type");
        let mut d = Delimited::new(std::io::BufReader::new(f));
        let mut v = Vec::new();
        while let Ok(Some(fr)) = d.next_frame() {
            v.push((msg, fr.bytes.to_vec()));
        }
        per_type.push(v);
    }
    if !per_type.is_empty() {
        let mut out = Vec::new();
        let longest = per_type.iter().map(|v| v.len()).max().unwrap_or(0);
        for i in 0..longest {
            for v in &per_type {
                if let Some(m) = v.get(i) {
                    out.push(m.clone());
                }
            }
        }
        return (out, "the quick social workloads");
    }
    let mut r = Rng::new(1);
    let mut out = Vec::new();
    for k in 0..20_000 {
        let (_, ty) = workloads::SOCIAL[k % 5];
        let msg = schema.message_index(ty).unwrap();
        let mut m = Vec::new();
        let mut budget = 60;
        protobuf_gen::message(&mut r, schema, msg, 0, &mut budget, &mut m);
        out.push((msg, m));
    }
    (out, "random social messages (no workload files found)")
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let workers: usize = arg(&args, "--workers").map_or(1, |v| v.parse().expect("--workers N"));
    let reps: usize = arg(&args, "--reps").map_or(5, |v| v.parse().expect("--reps R"));
    let region: usize =
        arg(&args, "--region").map_or(4 << 20, |v| v.parse().expect("--region BYTES"));
    let depth: usize = arg(&args, "--depth").map_or(256, |v| v.parse().expect("--depth D"));
    let pin = args.iter().any(|a| a == "--pin");
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let dir = arg(&args, "--dir")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join(workloads::QUICK_DIR));
    let proto = root.join("bench/schemas/social.proto");
    let schema = Arc::new(
        heapwire_schema::load(
            &proto,
            &[proto.parent().unwrap().to_path_buf()],
            LayoutOptions::default(),
        )
        .unwrap(),
    );
    let (msgs, what) = corpus(&schema, &dir);
    let in_bytes: usize = msgs.iter().map(|(_, m)| m.len()).sum();
    let n = msgs.len() * reps;
    println!(
        "{} messages ({} input bytes) of {what}, {reps} repetitions",
        msgs.len(),
        in_bytes
    );

    // Inline: on this thread, into one reused buffer at its own address.
    let mut engine = CpuEngine::new(schema.clone());
    let mut buf = vec![0u64; region / 8];
    let out: &mut [u8] =
        unsafe { std::slice::from_raw_parts_mut(buf.as_mut_ptr() as *mut u8, region) };
    let options = Options {
        base: out.as_ptr() as u64,
        ..Options::default()
    };
    let (mut ok, mut bad) = (0u64, 0u64);
    let (t0, c0) = (Instant::now(), thread_cpu());
    for _ in 0..reps {
        for (msg, m) in &msgs {
            let req = Request {
                msg: *msg,
                wire: Wire::Protobuf,
                input: m,
                options: &options,
            };
            match engine.decode_into(&req, out) {
                Ok(_) => ok += 1,
                Err(_) => bad += 1,
            }
        }
    }
    let (inline_s, inline_cpu) = (t0.elapsed().as_secs_f64(), thread_cpu() - c0);
    report("inline", n, in_bytes * reps, inline_s, inline_cpu, ok, bad);

    // Through the pool.
    let s2 = schema.clone();
    let pool = Pool::new(
        PoolConfig {
            workers,
            region_bytes: region,
            depth,
            backpressure: Backpressure::Block,
            pinning: if pin { Pinning::Auto } else { Pinning::None },
            ..PoolConfig::default()
        },
        move |_| CpuEngine::new(s2.clone()),
    );
    let (t0, c0) = (Instant::now(), thread_cpu());
    let (ok, bad) = std::thread::scope(|s| {
        let rx = s.spawn(|| {
            let (mut ok, mut bad) = (0u64, 0u64);
            for _ in 0..n {
                let c = pool.recv().expect("a completion");
                match c.outcome {
                    Outcome::Image(img) => {
                        ok += 1;
                        drop(img);
                    }
                    _ => bad += 1,
                }
            }
            (ok, bad)
        });
        let mut tag = 0;
        for _ in 0..reps {
            for (msg, m) in &msgs {
                pool.submit(Job {
                    tag,
                    msg: *msg,
                    wire: Wire::Protobuf,
                    input: m.clone(),
                })
                .unwrap();
                tag += 1;
            }
        }
        rx.join().unwrap()
    });
    let (pool_s, pool_cpu) = (t0.elapsed().as_secs_f64(), thread_cpu() - c0);
    report(
        &format!(
            "pool ({workers} worker{})",
            if workers == 1 { "" } else { "s" }
        ),
        n,
        in_bytes * reps,
        pool_s,
        pool_cpu,
        ok,
        bad,
    );
    let st = pool.stats();
    println!(
        "pool: submit waits {}, region waits {}, pinning {:?}",
        st.submit_waits, st.region_waits, st.pinning
    );
    println!("(submitting thread's CPU time includes copying each input into its job)");
}

fn report(mode: &str, n: usize, bytes: usize, secs: f64, cpu: f64, ok: u64, bad: u64) {
    println!(
        "{mode:>16}: {:>10.0} msg/s {:>8.1} MB/s  ({ok} images, {bad} rejected; submitting thread CPU {:.0} ns/msg)",
        n as f64 / secs,
        bytes as f64 / secs / 1e6,
        cpu / n as f64 * 1e9
    );
}

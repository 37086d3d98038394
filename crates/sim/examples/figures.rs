//! Throughput of the simulated protobuf core: bytes/cycle per social workload (first N
//! messages of bench/out/quick/*.bin; run `python3 bench/gen_workloads.py --out
//! bench/out/quick --mb 0.5` or `bench/run.sh --quick` first).
//!   cargo run --release -p heapwire-sim --example figures -- [N] [hist] [w=BITS] [in=BITS] [no-out2] [tables]
//! (`hist`: also the cycles per (pass, state) of the core, per workload and in total;
//! `w=`: the output memory width, 64 (default), 128 or 256; `in=`: the input memory
//! width, 64 (default), 32 or 128; `no-out2`: the core's OUT2_WR=0, short strings copied
//! through the first write port; `tables`: the build with run-time-loaded tables, TABLES=1).
use std::collections::BTreeMap;
use std::path::Path;

use heapwire_engine::framing::Delimited;
use heapwire_testkit::workloads;
use heapwire_sim::protobuf::{simulate_with_histogram, Options, STATES};

fn print_hist(h: &BTreeMap<(u8, u8), u64>, total: u64) {
    let mut v: Vec<_> = h.iter().collect();
    v.sort_by(|a, b| b.1.cmp(a.1));
    for ((p, st), n) in v {
        let name = STATES.iter().find(|s| s.0 == *st).map_or_else(|| st.to_string(), |s| s.1.to_string());
        println!("    {} {:12} {:8} {:5.1}%", if *p == 0 { "pre  " } else { "write" }, name, n, 100.0 * *n as f64 / total.max(1) as f64);
    }
}

fn main() {
    let n: usize = std::env::args().nth(1).and_then(|v| v.parse().ok()).unwrap_or(20);
    let hist = std::env::args().skip(2).any(|a| a == "hist");
    let width = |key: &str| std::env::args().skip(2).find_map(|a| a.strip_prefix(key).and_then(|w| w.parse().ok())).unwrap_or(64);
    let (out_width, in_width) = (width("w="), width("in="));
    let out2_wr = !std::env::args().skip(2).any(|a| a == "no-out2");
    let tables = std::env::args().skip(2).any(|a| a == "tables");
    let opts = Options { out_width, in_width, out2_wr, tables, ..Default::default() };
    println!("{in_width}-bit input memory, {out_width}-bit output memory, second write port {}, tables {}", if out2_wr { "used" } else { "unused" },
        if tables { "loaded at run time (TABLES=1)" } else { "in ROMs" });
    let mut all = BTreeMap::new();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let p = root.join("bench/schemas/social.proto");
    let s = heapwire_schema::compile_files(std::slice::from_ref(&p), &[p.parent().unwrap().to_path_buf()], Default::default()).unwrap();
    let (mut tb, mut tc) = (0u64, 0u64);
    for (file, ty) in workloads::SOCIAL {
        let data = std::fs::read(root.join(workloads::QUICK_DIR).join(file))
            .unwrap_or_else(|e| panic!("{}/{file}: {e}: {}", workloads::QUICK_DIR, workloads::QUICK_HINT));
        let mi = s.message_index(ty).unwrap();
        let (mut b, mut c, mut k) = (0u64, 0u64, 0usize);
        let mut h = BTreeMap::new();
        let mut stream = Delimited::new(&data[..]);
        while k < n {
            let Some(m) = stream.next_frame().expect("a delimited workload") else { break };
            let len = m.bytes.len();
            let (r, histogram) = simulate_with_histogram(&s, mi, m.bytes, &opts).expect("core rejected a workload message");
            for &(ps, st, cy) in &histogram {
                *h.entry((ps, st)).or_insert(0u64) += cy;
                *all.entry((ps, st)).or_insert(0u64) += cy;
            }
            b += len as u64;
            c += r.cycles;
            k += 1;
        }
        println!("{file:28} {k:4} msgs {:8.1} B/msg {:8.1} cycles/msg {:6.3} bytes/cycle", b as f64 / k as f64, c as f64 / k as f64, b as f64 / c as f64);
        if hist {
            print_hist(&h, c);
        }
        tb += b;
        tc += c;
    }
    println!("social total: {tb} bytes, {tc} cycles, {:.3} bytes/cycle", tb as f64 / tc as f64);
    if hist {
        print_hist(&all, tc);
    }
}

//! Slot reloads on the `sim` device (issue 18 item 2 on the device): a 1-slot in-process
//! device (64 KiB in, 128 KiB out) installed alternately with social.proto and
//! proto2.proto (32-bit pointers, a header word per struct), each `DeviceHandle::install`
//! timed (`Reload`), one request decoded after each install. `inproc:sim`: the protobuf
//! core with run-time-loaded tables, each install loading the schema's table words over
//! AXI4-Lite into the running process (the cycles that took: the factory's pool);
//! `inproc:sim-rom`: the core built per schema (both programs from the build cache after
//! their first install), a new process per install. Medians; the first install of each
//! schema (a build or a cache lookup) is left out.
//!
//! cargo run --release -p heapwire-device --example sim_reload -- [RELOADS]

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use heapwire_device::host::{DeviceHandle, Job, OpenOptions, Schema};
use heapwire_engine::Wire;
use heapwire_schema::{LayoutOptions, PointerWidth};

fn schema(name: &str, rel: &str, layout: LayoutOptions) -> Arc<Schema> {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..").join(rel);
    Arc::new(Schema::new(name, heapwire_schema::load(&p, &[p.parent().unwrap().to_path_buf()], layout).expect("schema").into()))
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

fn main() {
    let n: usize = std::env::args().nth(1).map_or(40, |a| a.parse().expect("RELOADS"));
    let social = schema("social", "bench/schemas/social.proto", LayoutOptions::default());
    let proto2 = schema("proto2", "tests/differential/schemas/proto2.proto", LayoutOptions { pointer_width: PointerWidth::P32, header_words: true });
    let empty = |s: &Arc<Schema>| Job { schema: s.clone(), msg: 0, wire: Wire::Protobuf, base: 0, max_depth: 100, input: Vec::new() };
    for engine in ["sim", "sim-rom"] {
        let mut dev = DeviceHandle::open(&format!("inproc:{engine}?slots=1&in=64k&out=128k"), &OpenOptions { timeout: Duration::from_secs(600), ..Default::default() })
            .expect("device");
        // per schema (social, proto2): install ms, table-load cycles and ms
        let mut times = [Vec::new(), Vec::new()];
        let (mut cycles, mut load_ms) = ([Vec::new(), Vec::new()], [Vec::new(), Vec::new()]);
        for k in 0..n + 2 {
            let s = if k % 2 == 0 { &social } else { &proto2 };
            let r = dev.install(0, s).expect("install");
            let pool = dev.inproc().unwrap().with(|d| d.factory().sim_pool()).unwrap();
            dev.submit(empty(s)).unwrap();
            dev.next().unwrap().1.expect("an empty message decodes");
            if k >= 2 {
                times[k % 2].push(r.time.as_secs_f64() * 1e3);
                if let (true, Some(l)) = (engine == "sim", pool.last_load) {
                    cycles[k % 2].push(l.cycles as f64);
                    load_ms[k % 2].push(l.time.as_secs_f64() * 1e3);
                }
            }
        }
        let pool = dev.inproc().unwrap().with(|d| d.factory().sim_pool()).unwrap();
        for (i, name) in ["social", "proto2"].iter().enumerate() {
            print!("{engine}: {name}: {} installs, median {:.2} ms", times[i].len(), median(times[i].clone()));
            if !cycles[i].is_empty() {
                print!(" (its table load: {:.0} cycles, median {:.2} ms)", median(cycles[i].clone()), median(load_ms[i].clone()));
            }
            println!();
        }
        println!("{engine}: loadable core: {} process(es) started, {} table loads, {} program(s)", pool.spawns, pool.loads, pool.programs.len());
    }
}

//! The simulated device (`VerilatedEngine`: the generated cores built by Verilator, one
//! process per core alive across requests, fixed memories) against the CPU engine
//! through the engine door: identical images, or the same rejection kind and offset, at
//! several bases, with per-type header words; thousands of requests through one process;
//! an input longer than the input memory and an image larger than the output memory; the
//! process killed between requests; both cores inside their AXI bus wrapper; the
//! protobuf core with run-time-loaded tables serving schema after schema in one process.
//!
//! Skipped (with a message) when verilator is not installed, but failed under `CI=true`. Knobs: HEAPWIRE_VSIM_CASES
//! (random messages per schema, default 150), HEAPWIRE_VSIM_SEED.

mod common;
#[path = "common/protobuf.rs"]
mod protobuf;
use common::{env_num, root, Rng};
use heapwire_testkit::protobuf_gen::{message as gen_message, mutate};
use protobuf::{generate_social_workloads, read_delimited, schema};

use std::path::{Path, PathBuf};
use std::sync::Arc;

use heapwire_cpu::CpuEngine;
use heapwire_engine::{Engine, EngineRegisters, Error, Options, RejectKind, Rejection, Request, Wire};
use heapwire_schema::{CompiledSchema, LayoutOptions, PointerWidth};
use heapwire_sim::verilated::{Config, Pool};
use heapwire_sim::VerilatedEngine;
use heapwire_testkit::{scaled_tree, workloads};

/// The device's memories in these tests: small, so that the limits are cheap to reach.
const IN_BYTES: u64 = 64 << 10;
const OUT_BYTES: u64 = 128 << 10;

fn device(s: &Arc<CompiledSchema>) -> Option<VerilatedEngine> {
    device_on(s, false)
}

/// The device, with `bus`: each core inside its AXI bus wrapper (`Config::bus`).
fn device_on(s: &Arc<CompiledSchema>, bus: bool) -> Option<VerilatedEngine> {
    if !heapwire_testkit::tool_present("verilator", "scripts/setup.sh installs it") {
        return None;
    }
    Some(VerilatedEngine::new(s.clone(), Config { in_bytes: IN_BYTES, out_bytes: OUT_BYTES, bus, ..Default::default() }).unwrap())
}

/// Counts of what was compared, and the differences.
#[derive(Default)]
struct Tally {
    images: usize,
    rejections: usize,
    failures: Vec<String>,
}

impl Tally {
    fn check(&self, what: &str) {
        eprintln!("{what}: {} identical images, {} identical rejections, {} failures", self.images, self.rejections, self.failures.len());
        for f in self.failures.iter().take(10) {
            eprintln!("FAIL {f}");
        }
        assert!(self.failures.is_empty(), "{what}: {} differences from the CPU engine", self.failures.len());
    }
}

/// One request through both engines; `cpu_opts` are the CPU engine's (the device's
/// memory limits as options), `opts` the device's.
#[allow(clippy::too_many_arguments)]
fn compare(dev: &mut VerilatedEngine, cpu: &mut CpuEngine, msg: usize, wire: Wire, input: &[u8], opts: &Options, cpu_opts: &Options, label: &str, t: &mut Tally) {
    let (mut a, mut b) = (Vec::new(), Vec::new());
    let want = cpu.decode(&Request { msg, wire, input, options: cpu_opts }, &mut a);
    let got = dev.decode(&Request { msg, wire, input, options: opts }, &mut b);
    let diff = match (&want, &got) {
        (Ok(_), Ok(d)) if a == b && d.len == b.len() && d.cycles.is_some() => {
            t.images += 1;
            None
        }
        (Ok(_), Ok(_)) => {
            let at = a.iter().zip(&b).position(|(x, y)| x != y).unwrap_or(a.len().min(b.len()));
            Some(format!("images differ (cpu {} bytes, device {}, first difference at {at})", a.len(), b.len()))
        }
        (Err(Error::Rejected(x)), Err(Error::Rejected(y))) if x == y => {
            t.rejections += 1;
            None
        }
        (w, g) => Some(format!("cpu {}, device {}", verdict(w), verdict(g))),
    };
    // through the bus wrapper: its registers (read back over AXI4-Lite) say the same, and
    // its counters went up as the device's count (docs/device.md): one request, its input
    // bytes, the image's bytes or one rejection
    let diff = diff.or_else(|| {
        let regs = dev.last_registers();
        let want_regs = match (&got, dev.config().bus) {
            (_, false) => None,
            (Ok(d), true) => Some(EngineRegisters {
                status: 3, // done, and armed for the next message
                image_len: d.len as u32,
                time: d.cycles.unwrap_or(0),
                counted: [1, input.len() as u64, d.len as u64, 0, 0],
                ..Default::default()
            }),
            (Err(Error::Rejected(x)), true) if input.len() as u64 <= dev.config().in_bytes => Some(EngineRegisters {
                status: 4, // halted on the error
                err_kind: x.kind.code(),
                err_offset: x.offset,
                time: dev.last_cycles().unwrap_or(0),
                counted: [1, input.len() as u64, 0, 1, 0],
                ..Default::default()
            }),
            (Err(_), true) => None,
        };
        (regs != want_regs).then(|| format!("the bus wrapper's registers {regs:?}, expected {want_regs:?}"))
    });
    if let Some(d) = diff {
        let hex: String = input.iter().take(200).map(|b| format!("{b:02x}")).collect();
        t.failures.push(format!("{label} (base {:#x}): {d}\n    input ({} bytes): {hex}", opts.base, input.len()));
    }
}

fn verdict(r: &Result<heapwire_engine::Decoded, Error>) -> String {
    match r {
        Ok(d) => format!("ok ({} bytes)", d.len),
        Err(e) => e.to_string(),
    }
}

const BASES: [u64; 5] = [0, 8, 0x1000, 0x7fff_fff8, 0x1234_5678_9abc_def0];

fn social(header_words: bool) -> Arc<CompiledSchema> {
    let layout = LayoutOptions { pointer_width: PointerWidth::P64, header_words };
    Arc::new(schema("bench/schemas/social.proto", &["bench/schemas"], layout))
}

/// Random messages of every type of `s` and their mutations, the social workloads'
/// first messages (from `bench`, when given: `s` is social.proto), at the bases in turn;
/// with `words`, per-type header words that change every few requests. Returns the number
/// of requests.
#[allow(clippy::too_many_arguments)]
fn corpus(dev: &mut VerilatedEngine, s: &Arc<CompiledSchema>, name: &str, seed: u64, cases: u64, words: bool, bench: Option<&Path>, t: &mut Tally) -> usize {
    let mut cpu = CpuEngine::new(s.clone());
    let mut r = Rng(seed | 1);
    let roots: Vec<usize> = (0..s.messages.len()).filter(|&i| !s.messages[i].is_map_entry()).collect();
    let mut inputs: Vec<(usize, Vec<u8>)> = Vec::new();
    for _ in 0..cases {
        let mi = roots[r.below(roots.len() as u64) as usize];
        let mut msg = Vec::new();
        let mut budget = 40i64;
        gen_message(&mut r, s, mi, 0, &mut budget, &mut msg);
        let m = mutate(&mut r, &msg);
        inputs.push((mi, msg));
        inputs.push((mi, m));
    }
    for (file, ty) in workloads::SOCIAL.iter().filter(|_| bench.is_some()) {
        let bench = bench.unwrap();
        let data = std::fs::read(bench.join(file)).unwrap_or_else(|e| panic!("{file}: {e}"));
        let mi = s.message_index(ty).unwrap_or_else(|| panic!("{ty} not in social.proto"));
        inputs.extend(read_delimited(&data, 20).into_iter().map(|m| (mi, m)));
    }
    let mut opts = Options::default();
    for (k, (mi, input)) in inputs.iter().enumerate() {
        opts.base = BASES[k % BASES.len()];
        if words && k % 7 == 0 {
            let n = r.below(s.messages.len() as u64 + 1) as usize;
            opts.type_words = (0..n).map(|_| r.next()).collect();
        }
        compare(dev, &mut cpu, *mi, Wire::Protobuf, input, &opts, &opts, &format!("{name} #{k} {}", s.messages[*mi].full_name), t);
    }
    // a misaligned base: bad_base, from both
    let (mi, input) = &inputs[0];
    let odd = Options { base: 4, ..opts.clone() };
    compare(dev, &mut cpu, *mi, Wire::Protobuf, input, &odd, &odd, &format!("{name} misaligned base"), t);
    inputs.len() + 1
}

#[test]
fn protobuf_device_matches_cpu_engine_through_one_process() {
    let seed = env_num("HEAPWIRE_VSIM_SEED", 2718);
    let cases = env_num("HEAPWIRE_VSIM_CASES", 150);
    let mut t = Tally::default();
    let mut n = 0;
    // the social workloads' first messages, generated here by bench/gen_workloads.py
    let bench = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("verilated_device_bench_{}", std::process::id()));
    generate_social_workloads(&bench, 20);
    for (i, hw) in [false, true].into_iter().enumerate() {
        let s = social(hw);
        let Some(mut dev) = device(&s) else { return };
        dev.start(Wire::Protobuf).unwrap();
        let pid = dev.pid(Wire::Protobuf);
        let name = if hw { "social.proto (header words)" } else { "social.proto" };
        // the corpus several times over: thousands of requests through the one process
        for round in 0..if hw { 3 } else { 5 } {
            n += corpus(&mut dev, &s, name, seed + 31 * round + 1000 * i as u64, cases, hw, Some(&bench), &mut t);
        }
        assert_eq!(dev.spawns(Wire::Protobuf), 1, "{name}: the device's process was started more than once");
        assert_eq!(dev.pid(Wire::Protobuf), pid, "{name}: another process answered");
        assert!(dev.crashes(Wire::Protobuf).is_empty());
    }
    let _ = std::fs::remove_dir_all(&bench);
    eprintln!("{n} requests");
    t.check("protobuf device vs cpu");
    assert!(n >= 2000 && t.images > 500 && t.rejections > 100, "too few cases exercised");
}

#[test]
fn device_limits_are_the_cpu_engines_with_the_memory_sizes() {
    let s = social(false);
    let Some(mut dev) = device(&s) else { return };
    let mut cpu = CpuEngine::new(s.clone());
    let post = s.message_index("heapwire.bench.social.StorePostRequest").unwrap();
    // an input longer than the input memory: refused before the core
    let big = vec![0u8; IN_BYTES as usize + 1];
    let r = dev.decode(&Request { msg: post, wire: Wire::Protobuf, input: &big, options: &Options::default() }, &mut Vec::new());
    assert_eq!(r, Err(Error::Rejected(Rejection::new(RejectKind::Capacity, IN_BYTES))));
    // an image larger than the output memory: the CPU engine says image_too_large with
    // max_image_bytes = the output memory; the protobuf core says capacity, at the tag of
    // the repeated field whose new array does not fit (byte 0 here: the core checks a new
    // array's size, count x element size, when it makes the array, S_NE0). Images of
    // 8 bytes per input byte or two: ComposePostRequest's packed media_ids (field 5) of
    // one-byte varints, its media_types (field 6) of empty strings.
    let compose = s.message_index("heapwire.bench.social.ComposePostRequest").unwrap();
    let packed = |n: usize| {
        let mut v = vec![0x2a];
        heapwire_engine::framing::put_varint(&mut v, n as u64);
        v.resize(v.len() + n, 1);
        v
    };
    let strings = |n: usize| [0x32, 0x00].repeat(n);
    let limited = Options { max_image_bytes: OUT_BYTES, ..Default::default() };
    let (mut overflowed, mut fitted) = (0, 0);
    // an input that fills the input memory exactly: text (field 4) of 65,532 bytes
    let mut full = vec![0x22, 0xfc, 0xff, 0x03];
    full.resize(IN_BYTES as usize, b'a');
    let mut tail_cut = full.clone();
    tail_cut.truncate(full.len() - 1);
    for input in [full, tail_cut, packed(16_000), packed(16_380), packed(16_400), packed(20_000), strings(8_000), strings(8_300), strings(20_000), [strings(9_000), vec![0x08]].concat()] {
        let (mut a, mut b) = (Vec::new(), Vec::new());
        let want = cpu.decode(&Request { msg: compose, wire: Wire::Protobuf, input: &input, options: &limited }, &mut a);
        let got = dev.decode(&Request { msg: compose, wire: Wire::Protobuf, input: &input, options: &Options::default() }, &mut b);
        match (&want, &got) {
            (Err(Error::Rejected(w)), Err(Error::Rejected(g))) if w.kind == RejectKind::ImageTooLarge => {
                assert_eq!(g.kind, RejectKind::Capacity, "{} bytes: cpu {w}, device {g}", input.len());
                assert_eq!(g.offset, 0, "{} bytes: cpu {w}, device {g}", input.len());
                eprintln!("{} bytes over the output memory: cpu {w}, device {g}", input.len());
                overflowed += 1;
            }
            (Err(Error::Rejected(w)), Err(Error::Rejected(g))) => assert_eq!(w, g),
            (Ok(_), Ok(_)) => {
                assert!(a == b, "{} bytes: images differ", input.len());
                fitted += 1;
            }
            (w, g) => panic!("{} bytes: cpu {}, device {}", input.len(), verdict(w), verdict(g)),
        }
    }
    assert!(overflowed >= 4 && fitted >= 3, "{overflowed} inputs overflowed the output memory, {fitted} fitted");
    // a string's bytes at the output memory's edge: a packed array takes most of it, then
    // text (field 4) of exactly the bytes left fits (images equal); one byte more (8 more,
    // aligned) is capacity at the text's tag, which the core checks when it places the bytes
    let head = packed(9_500);
    let d = dev.decode(&Request { msg: compose, wire: Wire::Protobuf, input: &head, options: &Options::default() }, &mut Vec::new());
    let used = d.expect("the packed array alone fits").len as u64;
    assert!(used > 64 << 10 && used % 8 == 0, "{used} bytes");
    for (text, fits) in [(OUT_BYTES - used, true), (OUT_BYTES - used + 1, false), (OUT_BYTES - used - 7, true)] {
        let mut input = head.clone();
        input.push(0x22);
        heapwire_engine::framing::put_varint(&mut input, text);
        input.resize(input.len() + text as usize, b'a');
        assert!(input.len() as u64 <= IN_BYTES);
        let (mut a, mut b) = (Vec::new(), Vec::new());
        let want = cpu.decode(&Request { msg: compose, wire: Wire::Protobuf, input: &input, options: &limited }, &mut a);
        let got = dev.decode(&Request { msg: compose, wire: Wire::Protobuf, input: &input, options: &Options::default() }, &mut b);
        if fits {
            assert!(want.is_ok() && got.is_ok() && a == b, "text {text}: cpu {}, device {}", verdict(&want), verdict(&got));
        } else {
            assert!(matches!(&want, Err(Error::Rejected(w)) if w.kind == RejectKind::ImageTooLarge), "text {text}: cpu {}", verdict(&want));
            assert_eq!(got, Err(Error::Rejected(Rejection::new(RejectKind::Capacity, head.len() as u64))), "text {text}");
        }
    }
    // the protobuf core has no image-limit register: a lower limit is an engine error
    let low = Options { max_image_bytes: 100, ..Default::default() };
    let r = dev.decode(&Request { msg: post, wire: Wire::Protobuf, input: &[], options: &low }, &mut Vec::new());
    assert!(matches!(r, Err(Error::Engine(_))), "{r:?}");
    assert_eq!(dev.spawns(Wire::Protobuf), 1);
}

#[test]
fn killed_device_is_restarted_and_answers() {
    let s = social(false);
    let Some(mut dev) = device(&s) else { return };
    let mut cpu = CpuEngine::new(s.clone());
    let login = s.message_index("heapwire.bench.social.LoginRequest").unwrap();
    let mut r = Rng(99);
    let mut t = Tally::default();
    let opts = Options::default();
    for round in 0..3 {
        for _ in 0..20 {
            let mut msg = Vec::new();
            gen_message(&mut r, &s, login, 0, &mut 40i64, &mut msg);
            compare(&mut dev, &mut cpu, login, Wire::Protobuf, &msg, &opts, &opts, "login", &mut t);
        }
        if round < 2 {
            let pid = dev.pid(Wire::Protobuf).expect("running");
            let st = std::process::Command::new("kill").args(["-9", &pid.to_string()]).status().unwrap();
            assert!(st.success());
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    }
    assert_eq!(dev.spawns(Wire::Protobuf), 3);
    let crashes = dev.crashes(Wire::Protobuf);
    assert_eq!(crashes.len(), 2, "{crashes:?}");
    assert!(crashes[0].contains("signal: 9") || crashes[0].contains("SIGKILL"), "{}", crashes[0]);
    // killed by another thread while requests run (in one, or between two): the request
    // it interrupts is sent again to a new process and every answer is the CPU engine's
    let pid = dev.pid(Wire::Protobuf).expect("running");
    let killer = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(30));
        std::process::Command::new("kill").args(["-9", &pid.to_string()]).status().unwrap()
    });
    let compose = s.message_index("heapwire.bench.social.ComposePostRequest").unwrap();
    let mut big = vec![0x2a, 0x90, 0x4e]; // media_ids, 10,000 one-byte varints: an 80 KB image
    big.resize(big.len() + 10_000, 1);
    let start = std::time::Instant::now();
    while dev.spawns(Wire::Protobuf) == 3 && start.elapsed().as_secs() < 20 {
        compare(&mut dev, &mut cpu, compose, Wire::Protobuf, &big, &opts, &opts, "compose during the kill", &mut t);
    }
    assert!(killer.join().unwrap().success());
    compare(&mut dev, &mut cpu, compose, Wire::Protobuf, &big, &opts, &opts, "compose after the kill", &mut t);
    t.check("killed device");
    assert_eq!(dev.spawns(Wire::Protobuf), 4);
    assert_eq!(dev.crashes(Wire::Protobuf).len(), 3);
}

fn expr() -> Arc<CompiledSchema> {
    let p = root().join("examples/expression_tree/expr.proto");
    Arc::new(heapwire_schema::compile_files(&[p], &[], LayoutOptions::default()).expect("expr.proto compiles"))
}

#[test]
fn objgraph_device_matches_cpu_engine() {
    objgraph_vs_cpu(false);
}

/// Both cores inside their AXI bus wrapper (rtl/hw_axi_wrap.v): every request through the
/// device register map over AXI4-Lite, the input over AXI4-Stream, the image written by
/// the wrapper's AXI4 master; the same images and rejections as the CPU engine.
#[test]
fn bus_wrapped_device_matches_cpu_engine() {
    objgraph_vs_cpu(true);
    let bench = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("verilated_device_bus_{}", std::process::id()));
    generate_social_workloads(&bench, 20);
    // social.proto as crates/device's sim test has it (the same build, from the cache);
    // the type registers are written (through S_TYPE) though they do not show in its images
    let s = social(false);
    let Some(mut dev) = device_on(&s, true) else { return };
    let mut t = Tally::default();
    let n = corpus(&mut dev, &s, "social.proto (bus)", env_num("HEAPWIRE_VSIM_SEED", 2718) + 7, 30, true, Some(&bench), &mut t);
    let _ = std::fs::remove_dir_all(&bench);
    t.check("protobuf device on the bus vs cpu");
    assert_eq!(dev.spawns(Wire::Protobuf), 1);
    assert!(n >= 150 && t.images > 50 && t.rejections > 10, "too few cases exercised");
}

fn objgraph_vs_cpu(bus: bool) {
    let s = expr();
    let Some(mut dev) = device_on(&s, bus) else { return };
    let mut cpu = CpuEngine::new(s.clone());
    let op = s.message_index("expr.Operation").or_else(|| s.messages.iter().position(|m| m.full_name.ends_with("Operation"))).unwrap();
    let node = s.messages.iter().position(|m| m.full_name.ends_with("Node")).unwrap_or(op);
    let mut r = Rng(4242);
    let mut t = Tally::default();
    let mut k = 0;
    let mut inputs: Vec<Vec<u8>> = vec![scaled_tree::paper(), Vec::new(), vec![0; 4], scaled_tree::wire(3000)];
    for n in (1..=127).chain([300, 1000, 2000]) {
        let w = scaled_tree::wire(n);
        inputs.push(mutate(&mut r, &w));
        inputs.push(w);
    }
    for input in &inputs {
        for &root_msg in &[node, op] {
            let mut opts = Options { base: BASES[k % BASES.len()], ..Default::default() };
            if k % 3 == 0 {
                opts.type_words = (0..s.messages.len()).map(|_| r.next()).collect();
            }
            let cpu_opts = Options { max_image_bytes: OUT_BYTES, ..opts.clone() };
            compare(&mut dev, &mut cpu, root_msg, Wire::Objgraph, input, &opts, &cpu_opts, &format!("tree #{k}"), &mut t);
            k += 1;
        }
    }
    // an image larger than the output memory: image_too_large, as the CPU engine with
    // max_image_bytes = the output memory says
    let big = scaled_tree::wire(3000);
    let r = cpu.decode(&Request { msg: op, wire: Wire::Objgraph, input: &big, options: &Options { max_image_bytes: OUT_BYTES, ..Default::default() } }, &mut Vec::new());
    assert!(matches!(r, Err(Error::Rejected(Rejection { kind: RejectKind::ImageTooLarge, .. }))), "{r:?}");
    // a request's own image limit, below the output memory
    let small = Options { max_image_bytes: 1000, ..Default::default() };
    compare(&mut dev, &mut cpu, op, Wire::Objgraph, &scaled_tree::wire(100), &small, &small, "limit 1000", &mut t);
    t.check("objgraph device vs cpu");
    assert_eq!(dev.spawns(Wire::Objgraph), 1);
    assert!(t.images > 100 && t.rejections > 20);
}

/// The protobuf core with run-time-loaded tables (`Config::tables`): engines for social.proto,
/// then proto2.proto at 32-bit pointers with header words (another message set and pointer
/// width), then social.proto again, made one after another with one pool, are served by
/// one process of one program (no second verilation, no second process): each loads its
/// tables over AXI4-Lite into the process the one before gave back, and every image and
/// rejection is the CPU engine's. A second engine alive at once gets a second process of
/// the same program; a schema beyond the build's sizes falls back to its own ROM build.
#[test]
fn loadable_core_serves_schema_after_schema_in_one_process() {
    if !heapwire_testkit::tool_present("verilator", "scripts/setup.sh installs it") {
        return;
    }
    let cfg = Config { in_bytes: IN_BYTES, out_bytes: OUT_BYTES, bus: true, tables: true, ..Default::default() };
    let pool = Pool::default();
    let a = social(false);
    let layout = LayoutOptions { pointer_width: PointerWidth::P32, header_words: true };
    let b = Arc::new(schema("tests/differential/schemas/proto2.proto", &["tests/differential/schemas"], layout));
    let scalars3 = Arc::new(schema("tests/differential/schemas/scalars3.proto", &["tests/differential/schemas"], LayoutOptions::default()));
    let fallback = VerilatedEngine::with_pool(scalars3, cfg.clone(), pool.clone()).unwrap();
    let why = fallback.tables_fallback().expect("scalars3 has 33 count slots: beyond the loadable build");
    assert!(why.contains("count slots") && why.contains("hw.p3."), "{why}");
    drop(fallback);
    let cases = env_num("HEAPWIRE_VSIM_CASES", 150) / 3;
    let seed = env_num("HEAPWIRE_VSIM_SEED", 2718);
    let mut t = Tally::default();
    let (mut pid, mut program) = (None, None);
    for (k, (name, s)) in [("social.proto", &a), ("proto2.proto (32-bit, header words)", &b), ("social.proto again", &a)].into_iter().enumerate() {
        let mut dev = VerilatedEngine::with_pool(s.clone(), cfg.clone(), pool.clone()).unwrap();
        assert!(dev.tables_fallback().is_none(), "{name}: {:?}", dev.tables_fallback());
        let n = corpus(&mut dev, s, &format!("{name} (loaded tables)"), seed + k as u64, cases, true, None, &mut t);
        assert!(n > 2 * cases as usize);
        let (p, exe) = (dev.pid(Wire::Protobuf), dev.program(Wire::Protobuf).unwrap());
        assert_eq!(*pid.get_or_insert(p), p, "{name}: served by another process");
        assert_eq!(*program.get_or_insert(exe.clone()), exe, "{name}: another program");
        let st = pool.stats();
        let load = st.last_load.unwrap();
        eprintln!("{name}: {} table words loaded in {} cycles, {:?}", load.words, load.cycles, load.time);
    }
    t.check("the loaded-tables device vs cpu");
    assert!(t.images > 100 && t.rejections > 20, "too few cases exercised");
    let st = pool.stats();
    assert_eq!((st.spawns, st.loads, st.programs.len()), (1, 3, 1), "{st:?}");
    // two engines alive at once: a second process of the same program, its own tables
    let mut one = VerilatedEngine::with_pool(a.clone(), cfg.clone(), pool.clone()).unwrap();
    let mut two = VerilatedEngine::with_pool(b.clone(), cfg.clone(), pool.clone()).unwrap();
    let mut t = Tally::default();
    corpus(&mut one, &a, "social.proto beside proto2.proto", seed + 7, 10, false, None, &mut t);
    corpus(&mut two, &b, "proto2.proto beside social.proto", seed + 8, 10, false, None, &mut t);
    corpus(&mut one, &a, "social.proto beside proto2.proto, again", seed + 9, 10, false, None, &mut t);
    t.check("two loaded-tables devices at once vs cpu");
    assert_ne!(one.pid(Wire::Protobuf), two.pid(Wire::Protobuf));
    let st = pool.stats();
    assert_eq!((st.spawns, st.loads, st.programs.len()), (2, 4, 1), "social's process kept its tables, proto2 loaded into a new one: {st:?}");
}

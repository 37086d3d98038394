//! The device runtime end to end: every result equal to the CPU engine's local decode
//! (image byte for byte, or the same rejection), in process and over UDP and TCP, through
//! injected faults and a restart; slots reloaded; the register path; bad requests.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use heapwire_cpu::CpuEngine;
use heapwire_device::host::{DeviceHandle, Image, Job, JobError, OpenOptions, Schema};
use heapwire_device::link::{self, Faults, ServerConfig, Transport};
use heapwire_device::model::{Config, CpuFactory, Device, EngineFactory, Go};
use heapwire_device::regs;
use heapwire_device::serve::DeviceService;
use heapwire_engine::{Decoded, Engine, EngineRegisters, Error, Options, Rejection, Request, Wire};
use heapwire_schema::{CompiledSchema, LayoutOptions};
use heapwire_testkit::{protobuf_gen, scaled_tree, Rng};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn load(rel: &str, layout: LayoutOptions) -> Arc<CompiledSchema> {
    let p = root().join(rel);
    Arc::new(heapwire_schema::load(&p, &[p.parent().unwrap().to_path_buf()], layout).expect("schema"))
}

fn unit() -> Arc<Schema> {
    Arc::new(Schema::new("unit", load("crates/cpu/testdata/unit.proto", LayoutOptions::default())))
}

fn expr() -> Arc<Schema> {
    Arc::new(Schema::new("expr", load("examples/expression_tree/expr.proto", LayoutOptions::default())))
}

/// One input of the corpus and what local decode gives for it.
struct Case {
    schema: Arc<Schema>,
    msg: u32,
    wire: Wire,
    base: u64,
    input: Vec<u8>,
    want: Result<Vec<u8>, JobError>,
}

fn local(schema: &Arc<CompiledSchema>, msg: usize, wire: Wire, base: u64, input: &[u8]) -> Result<Vec<u8>, JobError> {
    let mut e = CpuEngine::new(schema.clone());
    let opts = Options { base, ..Options::default() };
    let mut out = Vec::new();
    match e.decode(&Request { msg, wire, input, options: &opts }, &mut out) {
        Ok(_) => Ok(out),
        Err(Error::Rejected(r)) => Err(JobError::Rejected(r)),
        Err(Error::Engine(m)) => panic!("local decode failed: {m}"),
    }
}

/// Protobuf messages of every type of unit.proto (valid and mutated) and objgraph trees
/// (valid and mutated), tens of bytes to `big` bytes, at several bases.
fn corpus(n: usize, big: usize, seed: u64) -> Vec<Case> {
    let (u, x) = (unit(), expr());
    let mut r = Rng::new(seed);
    let mut out = Vec::new();
    let tree = x.compiled.message_index("expr.Node").unwrap() as u32;
    for k in 0..n {
        let base = [0u64, 8, 0x1000, 0x7f00_0000_0000][k % 4];
        let (schema, msg, wire, input) = if k % 3 == 2 {
            let mut w = scaled_tree::wire(1 + r.below(40) as usize);
            if k % 2 == 0 {
                let i = r.below(w.len() as u64) as usize;
                w[i] ^= 1 << r.below(8);
            }
            (x.clone(), tree, Wire::Objgraph, w)
        } else {
            let msg = r.below(u.compiled.messages.len() as u64) as usize;
            let mut m = Vec::new();
            let mut budget = 40;
            protobuf_gen::message(&mut r, &u.compiled, msg, 0, &mut budget, &mut m);
            if k % 2 == 1 {
                m = protobuf_gen::mutate(&mut r, &m);
            }
            (u.clone(), msg as u32, Wire::Protobuf, m)
        };
        out.push(Case { want: local(&schema.compiled, msg as usize, wire, base, &input), schema, msg, wire, base, input });
    }
    // large ones: a long objgraph tree and a protobuf message with a long bytes field
    if big > 0 {
        let w = scaled_tree::wire(big / 21);
        out.push(Case { want: local(&x.compiled, tree as usize, Wire::Objgraph, 0, &w), schema: x.clone(), msg: tree, wire: Wire::Objgraph, base: 0, input: w });
        let node = u.compiled.message_index("unit.Node").unwrap();
        let mut m = vec![0x7a]; // field 15 (bytes), length-delimited
        heapwire_engine::framing::put_varint(&mut m, big as u64);
        m.extend((0..big).map(|i| i as u8));
        out.push(Case { want: local(&u.compiled, node, Wire::Protobuf, 8, &m), schema: u.clone(), msg: node as u32, wire: Wire::Protobuf, base: 8, input: m });
    }
    out
}

fn job(c: &Case) -> Job {
    Job { schema: c.schema.clone(), msg: c.msg, wire: c.wire, base: c.base, max_depth: 100, input: c.input.clone() }
}

fn check(label: &str, c: &Case, got: Result<Image, JobError>) {
    match (&c.want, got) {
        (Ok(w), Ok(g)) => assert!(*w == g.bytes, "{label}: image differs ({} vs {} bytes)", g.bytes.len(), w.len()),
        (Err(w), Err(g)) => assert_eq!(*w, g, "{label}: rejection"),
        (w, g) => panic!("{label}: local decode {:?}, device {:?}", w.as_ref().map(|v| v.len()), g.map(|i| i.bytes.len())),
    }
}

/// Streams `order` (indices into `cases`) through `dev` with the window full; checks
/// each result in order.
fn stream(dev: &mut DeviceHandle, cases: &[Case], order: impl Iterator<Item = usize>, label: &str) -> usize {
    let mut sent = std::collections::VecDeque::new();
    let mut n = 0;
    for i in order {
        let t = dev.submit(job(&cases[i])).expect("submit");
        sent.push_back((t, i));
        while dev.outstanding() > 32 {
            let (t, r) = dev.next().expect("next");
            let (want_t, i) = sent.pop_front().unwrap();
            assert_eq!(t, want_t, "{label}: results out of order");
            check(&format!("{label} case {i}"), &cases[i], r);
            n += 1;
        }
    }
    while let Some((want_t, i)) = sent.pop_front() {
        let (t, r) = dev.next().expect("next");
        assert_eq!(t, want_t);
        check(&format!("{label} case {i}"), &cases[i], r);
        n += 1;
    }
    n
}

#[test]
fn in_process_device_gives_local_decode_results() {
    let cases = corpus(600, 64 << 10, 1);
    let mut dev = DeviceHandle::open("inproc:cpu?slots=2", &OpenOptions::default()).unwrap();
    let h = dev.header().clone();
    assert_eq!((h.slots, h.engine, h.version), (2, regs::EngineKind::Cpu as u32, regs::VERSION));
    assert!(h.caps & regs::Caps::WRITE_GO != 0 && h.in_bytes > 0 && h.out_bytes > 0);
    let n = stream(&mut dev, &cases, 0..cases.len(), "inproc");
    assert_eq!(n, cases.len());
    let counters: std::collections::HashMap<_, _> = dev.counters().unwrap().into_iter().collect();
    assert_eq!(counters["requests"], cases.len() as u64);
    assert_eq!(counters["rejections"], cases.iter().filter(|c| c.want.is_err()).count() as u64);
    assert_eq!(counters["bytes_in"], cases.iter().map(|c| c.input.len() as u64).sum::<u64>());
    assert_eq!(counters["reloads"], 2);
    let slots = dev.slot_info().unwrap();
    let mut names: Vec<_> = slots.iter().map(|s| s.name.as_str()).collect();
    names.sort();
    assert_eq!(names, ["expr", "unit"]);
    assert!(slots.iter().all(|s| s.state == regs::SLOT_READY));
    assert_eq!(slots.iter().find(|s| s.name == "unit").unwrap().checksum, unit().checksum);
}

#[test]
fn one_slot_is_reloaded_between_schemas_and_requests_stay_in_order() {
    let cases = corpus(240, 0, 2);
    let mut dev = DeviceHandle::open("inproc:cpu?slots=1", &OpenOptions { inflight: 4, ..Default::default() }).unwrap();
    // schemas alternate in the input; the scheduler batches a turn per schema
    let n = stream(&mut dev, &cases, 0..cases.len(), "one slot");
    assert_eq!(n, cases.len());
    let reloads = dev.reloads().len();
    assert!(reloads >= 2, "{reloads} reloads");
    assert!(reloads <= cases.len() / 3, "{reloads} reloads for {} requests: no batching", cases.len());
    assert!(dev.reloads().iter().all(|r| r.bytes == unit().table.len() || r.bytes == expr().table.len()));
}

#[test]
fn the_register_path_gives_what_write_and_go_gives() {
    let cases = corpus(60, 0, 3);
    let mut dev = DeviceHandle::open("inproc:cpu?slots=2", &OpenOptions::default()).unwrap();
    dev.install(0, &unit()).unwrap();
    dev.install(1, &expr()).unwrap();
    for (i, c) in cases.iter().enumerate() {
        let slot = (c.wire == Wire::Objgraph) as u32;
        let r = dev.run_by_registers(slot, c.msg, c.wire, c.base, &c.input).unwrap();
        check(&format!("registers case {i}"), c, r);
    }
    // read-only and missing registers are refused by name
    let e = dev.write_regs(regs::H_SLOTS, &[9]).unwrap_err().to_string();
    assert!(e.contains("read-only"), "{e}");
    let e = dev.read_regs(0x0F00, 1).unwrap_err().to_string();
    assert!(e.contains("no register at 0xf00"), "{e}");
}

#[test]
fn bad_requests_get_clear_errors() {
    let mut dev = DeviceHandle::open("inproc:cpu?slots=1&in=4k&out=64k", &OpenOptions::default()).unwrap();
    let u = unit();
    let node = u.compiled.message_index("unit.Node").unwrap() as u32;
    // larger than the input memory: refused, nothing sent
    let t = dev.submit(Job { schema: u.clone(), msg: node, wire: Wire::Protobuf, base: 0, max_depth: 100, input: vec![0; 5000] }).unwrap();
    let (_, r) = dev.next().unwrap();
    match r {
        Err(JobError::Device { code: 70, text }) => assert!(text.contains("5000 bytes") && text.contains("4096"), "{text}"),
        r => panic!("ticket {t}: {r:?}"),
    }
    // a 4 KB string fits the 64 KB output memory
    let mut m = vec![0x7a];
    heapwire_engine::framing::put_varint(&mut m, 4000);
    m.extend(std::iter::repeat_n(b'x', 4000));
    let t = dev.submit(Job { schema: u.clone(), msg: node, wire: Wire::Protobuf, base: 0, max_depth: 100, input: m.clone() }).unwrap();
    let (t2, r) = dev.next().unwrap();
    assert_eq!(t, t2);
    assert!(r.is_ok(), "{r:?}");
    // a message index the schema does not have
    dev.install(0, &u).unwrap();
    let r = dev.run_by_registers(0, 999, Wire::Protobuf, 0, &m).unwrap();
    assert!(matches!(r, Err(JobError::Device { code: 68, ref text }) if text.contains("message index out of range")), "{r:?}");
    // an empty slot, a missing slot
    let mut dev2 = DeviceHandle::open("inproc:cpu?slots=2", &OpenOptions::default()).unwrap();
    let r = dev2.run_by_registers(1, 0, Wire::Protobuf, 0, &m).unwrap();
    assert!(matches!(r, Err(JobError::Device { code: 67, ref text }) if text == "slot holds no schema"), "{r:?}");
    let e = dev2.install(7, &u).unwrap_err().to_string();
    assert!(e.contains("slot 7 does not exist"), "{e}");
    // a misaligned base is the engine's rejection, as in local decode
    let t = dev.submit(Job { schema: u.clone(), msg: node, wire: Wire::Protobuf, base: 4, max_depth: 100, input: m }).unwrap();
    let (_, r) = dev.next().unwrap();
    assert!(matches!(r, Err(JobError::Rejected(ref x)) if x.kind == heapwire_engine::RejectKind::BadBase), "ticket {t}: {r:?}");
    // URIs
    for (uri, want) in [("inproc:cpu?slots=0", "at least one slot"), ("inproc:cpu?x=1", "unknown option 'x'"), ("ftp://x", "udp://HOST:PORT"), ("inproc:gpu", "engine 'gpu'")] {
        let e = DeviceHandle::open(uri, &OpenOptions::default()).err().expect(uri).to_string();
        assert!(e.contains(want), "{uri}: {e}");
    }
}

#[test]
fn type_registers_set_the_header_words() {
    let layout = LayoutOptions { header_words: true, ..LayoutOptions::default() };
    let s = Arc::new(Schema::new("unit-hw", load("crates/cpu/testdata/unit.proto", layout)));
    let node = s.compiled.message_index("unit.Node").unwrap();
    let words: Vec<u64> = (0..s.compiled.messages.len() as u64).map(|i| 0xABCD_0000_0000 + i * 16).collect();
    let mut r = Rng::new(9);
    let mut dev = DeviceHandle::open("inproc:cpu?slots=1", &OpenOptions::default()).unwrap();
    dev.set_type_words(&s, &words).unwrap();
    for k in 0..20 {
        let mut m = Vec::new();
        let mut budget = 30;
        protobuf_gen::message(&mut r, &s.compiled, node, 0, &mut budget, &mut m);
        let mut e = CpuEngine::new(s.compiled.clone());
        let opts = Options { base: 0x1000, type_words: words.clone(), ..Options::default() };
        let mut want = Vec::new();
        let want = e.decode(&Request { msg: node, wire: Wire::Protobuf, input: &m, options: &opts }, &mut want).map(|_| want);
        dev.submit(Job { schema: s.clone(), msg: node as u32, wire: Wire::Protobuf, base: 0x1000, max_depth: 100, input: m }).unwrap();
        let (_, got) = dev.next().unwrap();
        match (want, got) {
            (Ok(w), Ok(g)) => assert_eq!(w, g.bytes, "case {k}"),
            (Err(Error::Rejected(w)), Err(JobError::Rejected(g))) => assert_eq!(w, g, "case {k}"),
            (w, g) => panic!("case {k}: {w:?} vs {g:?}"),
        }
    }
    // the words were written to the slot's registers
    let w = dev.read_regs(regs::slot_reg(0, regs::S_TYPE) + 2 * node as u32, 2).unwrap();
    assert_eq!(w[0] as u64 | (w[1] as u64) << 32, words[node]);
}

fn server(transport: Transport, faults: Faults, addr: Option<std::net::SocketAddr>) -> (link::Server, Arc<DeviceService>) {
    let svc = Arc::new(DeviceService::new(Device::new(Config { slots: 2, ..Config::default() }, Box::new(CpuFactory))));
    let s2 = svc.clone();
    // loopback: retransmit after milliseconds, not the defaults' tens
    let mut cfg = ServerConfig { faults, rto: Duration::from_millis(5), max_rto: Duration::from_millis(200), ..ServerConfig::default() };
    if let Some(a) = addr {
        cfg.listen = a;
    }
    let srv = link::serve(transport, cfg, Arc::new(move |m: &[u8]| s2.handle(m))).expect("serve");
    (srv, svc)
}

fn faults(seed: u64) -> Faults {
    Faults { drop: 0.10, dup: 0.05, reorder: 0.05, corrupt: 0.01, seed }
}

#[test]
fn udp_device_through_faults_answers_every_request_once_in_order() {
    // CI: 100,000 requests (HEAPWIRE_DEVICE_REQUESTS to change), tens of bytes to 1 MiB
    let total = heapwire_testkit::env_num("HEAPWIRE_DEVICE_REQUESTS", 100_000) as usize;
    let cases = corpus(400, 1 << 20, 4);
    let (srv, svc) = server(Transport::Udp, faults(11), None);
    let uri = format!("udp://{}", srv.local_addr());
    let opts = OpenOptions { inflight: 32, timeout: Duration::from_secs(60), rto: Duration::from_millis(3), ..Default::default() };
    let mut dev = DeviceHandle::open(&uri, &opts).unwrap();
    let big = [cases.len() - 2, cases.len() - 1];
    // the small cases round and round, the two 1 MiB ones now and then
    let order = (0..total).map(|k| if k % 20_000 == 19_999 { big[(k / 20_000) % 2] } else { k % (cases.len() - 2) });
    let n = stream(&mut dev, &cases, order, "udp");
    assert_eq!(n, total);
    let requests = svc.with(|d| d.counters().0[0]);
    assert_eq!(requests, total as u64, "the device ran {requests} requests for {total}: some ran twice or never");
    let st = srv.stats();
    assert!(st.dropped_bad_crc > 0, "corruption was injected and must have been caught: {st:?}");
    drop(dev);
    srv.stop();
}

#[test]
fn tcp_device_gives_local_decode_results() {
    let cases = corpus(300, 1 << 20, 5);
    let (srv, _svc) = server(Transport::Tcp, Faults::default(), None);
    let mut dev = DeviceHandle::open(&format!("tcp://{}", srv.local_addr()), &OpenOptions::default()).unwrap();
    assert_eq!(stream(&mut dev, &cases, 0..cases.len(), "tcp"), cases.len());
    srv.stop();
}

#[test]
fn a_restarted_device_loses_its_slots_and_the_host_reloads_them() {
    let cases = corpus(200, 0, 6);
    let (srv, _) = server(Transport::Udp, Faults::default(), None);
    let addr = srv.local_addr();
    let mut dev = DeviceHandle::open(&format!("udp://{addr}"), &OpenOptions { timeout: Duration::from_secs(20), ..Default::default() }).unwrap();
    let mut answered = 0;
    let mut srv = Some(srv);
    for (k, c) in cases.iter().enumerate() {
        dev.submit(job(c)).unwrap();
        if k == 80 {
            // killed mid-stream with requests in flight, a new device (empty slots) on the same port
            srv.take().unwrap().stop();
            srv = Some(server(Transport::Udp, Faults::default(), Some(addr)).0);
        }
        while dev.outstanding() > 8 {
            let (t, r) = dev.next().expect("every request is answered or fails clearly");
            check(&format!("restart case {t}"), &cases[t as usize], r);
            answered += 1;
        }
    }
    while dev.outstanding() > 0 {
        let (t, r) = dev.next().unwrap();
        check(&format!("restart case {t}"), &cases[t as usize], r);
        answered += 1;
    }
    assert_eq!(answered, cases.len());
    assert!(dev.reloads().len() >= 3, "the slots were reloaded after the restart: {:?}", dev.reloads());
}

/// The `sim` device's results are the `cpu` device's, case by case; returns how many were
/// rejections.
fn same_results(sim: Vec<Result<Image, JobError>>, cpu: Vec<Result<Image, JobError>>) -> usize {
    assert_eq!(sim.len(), cpu.len());
    let mut rejected = 0;
    for (k, (s, c)) in sim.into_iter().zip(cpu).enumerate() {
        match (s, c) {
            (Ok(s), Ok(c)) => assert!(s.bytes == c.bytes, "case {k}: images differ"),
            (Err(s), Err(c)) => {
                assert_eq!(s, c, "case {k}");
                rejected += 1;
            }
            (s, c) => panic!("case {k}: sim {:?}, cpu {:?}", s.map(|i| i.bytes.len()), c.map(|i| i.bytes.len())),
        }
    }
    rejected
}

#[test]
fn sim_and_cpu_devices_give_identical_results() {
    if !heapwire_testkit::tool_present("verilator", "scripts/setup.sh installs it") {
        return;
    }
    // the memories of crates/sim's device tests: their simulator builds are reused
    let social = Arc::new(Schema::new("social", load("bench/schemas/social.proto", LayoutOptions::default())));
    let x = expr();
    let tree = x.compiled.message_index("expr.Node").unwrap() as u32;
    let mut r = Rng::new(12);
    let mut jobs = Vec::new();
    for k in 0..300 {
        let base = [0u64, 8, 0x1000, 0x7f00_0000_0000][k % 4];
        if k % 4 == 3 {
            let mut w = scaled_tree::wire(1 + r.below(60) as usize);
            if k % 8 == 7 {
                let i = r.below(w.len() as u64) as usize;
                w[i] ^= 1 << r.below(8);
            }
            jobs.push(Job { schema: x.clone(), msg: tree, wire: Wire::Objgraph, base, max_depth: 100, input: w });
        } else {
            let msgs: Vec<usize> = (0..social.compiled.messages.len()).filter(|&m| !social.compiled.messages[m].is_map_entry()).collect();
            let msg = msgs[r.below(msgs.len() as u64) as usize];
            let mut m = Vec::new();
            let mut budget = 60;
            protobuf_gen::message(&mut r, &social.compiled, msg, 0, &mut budget, &mut m);
            if k % 3 == 1 {
                m = protobuf_gen::mutate(&mut r, &m);
            }
            jobs.push(Job { schema: social.clone(), msg: msg as u32, wire: Wire::Protobuf, base, max_depth: 100, input: m });
        }
    }
    // the results, then the counters and the last request's verdict registers (on the sim
    // device these come from the bus wrappers' AXI4-Lite registers)
    type Registers = (Vec<(&'static str, u64)>, Vec<u32>);
    let run = |uri: &str| -> (Vec<Result<Image, JobError>>, Registers) {
        let mut dev = DeviceHandle::open(uri, &OpenOptions { timeout: Duration::from_secs(600), ..Default::default() }).unwrap();
        let mut out = Vec::new();
        for j in &jobs {
            let (schema, input) = (j.schema.clone(), j.input.clone());
            dev.submit(Job { schema, input, msg: j.msg, wire: j.wire, base: j.base, max_depth: j.max_depth }).unwrap();
            if dev.outstanding() > 8 {
                out.push(dev.next().unwrap().1);
            }
        }
        while dev.outstanding() > 0 {
            out.push(dev.next().unwrap().1);
        }
        let verdict = dev.read_regs(regs::C_STATUS, 1).unwrap().into_iter().chain(dev.read_regs(regs::C_ERR_KIND, 4).unwrap()).collect();
        (out, (dev.counters().unwrap(), verdict))
    };
    let (sim, sim_regs) = run("inproc:sim?slots=2&in=64k&out=128k");
    let (cpu, cpu_regs) = run("inproc:cpu?slots=2&in=64k&out=128k");
    assert_eq!(sim_regs, cpu_regs, "counters, STATUS, ERR_KIND, ERR_OFFSET, IMAGE_LEN: sim device (bus wrappers' registers) vs cpu");
    let rejected = same_results(sim, cpu);
    assert!(rejected > 10 && rejected < 200, "{rejected} of 300 rejected");
}

/// An engine with a register block of its own, as the `sim` engine's bus wrappers have:
/// every request answered with `answer` (an image of that many bytes, or the rejection)
/// and the registers `regs`.
struct RegisterEngine {
    regs: EngineRegisters,
    answer: Result<usize, Rejection>,
}

impl Engine for RegisterEngine {
    fn name(&self) -> &'static str {
        "registers"
    }
    fn check(&self, _: usize, _: Wire) -> Result<(), String> {
        Ok(())
    }
    fn decode(&mut self, _: &Request<'_>, out: &mut Vec<u8>) -> Result<Decoded, Error> {
        let n = self.answer.clone()?;
        out.clear();
        out.resize(n, 0xAB);
        Ok(Decoded { len: n, cycles: Some(self.regs.time) })
    }
    fn last_registers(&self) -> Option<EngineRegisters> {
        Some(self.regs)
    }
}

struct RegisterFactory(EngineRegisters, Result<usize, Rejection>);

impl EngineFactory for RegisterFactory {
    fn kind(&self) -> regs::EngineKind {
        regs::EngineKind::Sim
    }
    fn make(&self, _: Arc<CompiledSchema>) -> Result<Box<dyn Engine + Send>, String> {
        Ok(Box::new(RegisterEngine { regs: self.0, answer: self.1.clone() }))
    }
}

#[test]
fn an_engine_with_registers_supplies_the_verdict_and_counter_registers() {
    let table = heapwire_schema::table_file::write(&unit().compiled);
    let device = |regs: EngineRegisters, answer: Result<usize, Rejection>| {
        let mut dev = Device::new(Config::default(), Box::new(RegisterFactory(regs, answer)));
        let sum = heapwire_device::checksum(&table);
        assert!(dev.install_chunk(0, "unit", table.len() as u32, sum, 0, &table).unwrap());
        dev
    };
    let go = Go { max_depth: 100, ..Go::default() };
    let read = |dev: &Device, r: u32| dev.read_reg(r).unwrap();
    // an image: the counters are what the registers say the request added (not the
    // device's own count: 10 input bytes here, 1000 in the registers)
    let ok = EngineRegisters { status: regs::Status::DONE, image_len: 6, time: 77, counted: [1, 1000, 6, 0, 2], ..Default::default() };
    let mut dev = device(ok, Ok(6));
    for _ in 0..2 {
        let (out, image) = dev.write_go(&go, &[0; 10]);
        assert_eq!((out.err, out.image_len, out.time, image.len()), (0, 6, 77, 6), "{out:?}");
    }
    assert_eq!(read(&dev, regs::C_STATUS), regs::Status::DONE);
    assert_eq!(read(&dev, regs::C_TIME), 77);
    let counters: Vec<u32> = [regs::N_REQUESTS, regs::N_BYTES_IN, regs::N_BYTES_OUT, regs::N_REJECTIONS, regs::N_PROTOCOL_ERRORS]
        .into_iter()
        .map(|r| read(&dev, r))
        .collect();
    assert_eq!(counters, [2, 2000, 12, 0, 4]);
    // a rejection: kind, offset and the error bit from the registers
    let kind = heapwire_engine::RejectKind::Truncated;
    let rej = EngineRegisters { status: regs::Status::ERROR, err_kind: kind.code(), err_offset: 9, time: 5, counted: [1, 10, 0, 1, 0], ..Default::default() };
    let mut dev = device(rej, Err(Rejection::new(kind, 9)));
    dev.write_go(&go, &[0; 10]);
    assert_eq!(read(&dev, regs::C_STATUS), regs::Status::DONE | regs::Status::ERROR);
    assert_eq!((read(&dev, regs::C_ERR_KIND), read(&dev, regs::C_ERR_OFFSET)), (kind.code(), 9));
    assert_eq!(read(&dev, regs::N_REJECTIONS), 1);
    // registers that disagree with the engine's answer: an engine error (77), nothing counted
    for (regs, answer) in [(ok, Err(Rejection::new(kind, 9))), (rej, Ok(6)), (EngineRegisters { image_len: 5, ..ok }, Ok(6))] {
        let mut dev = device(regs, answer.clone());
        let (out, _) = dev.write_go(&go, &[0; 10]);
        assert_eq!(out.err, 77, "{regs:?} / {answer:?}: {}", out.text);
        assert!(out.text.contains("disagree"), "{}", out.text);
        assert_eq!(read(&dev, regs::N_REQUESTS), 0);
    }
}

#[test]
fn register_reads_beside_a_full_window_do_not_wait_for_it() {
    let cases = corpus(20, 0, 7);
    let (srv, _) = server(Transport::Udp, Faults::default(), None);
    let opts = OpenOptions { inflight: 4, ..Default::default() };
    let mut dev = DeviceHandle::open(&format!("udp://{}", srv.local_addr()), &opts).unwrap();
    for c in cases.iter().take(4) {
        dev.submit(job(c)).unwrap();
    }
    assert_eq!(dev.outstanding(), 4);
    // a register read and a type-register write with the window full
    let n = dev.counters().unwrap();
    assert_eq!(n[0].0, "requests");
    dev.set_type_words(&cases[0].schema, &[]).unwrap();
    for c in cases.iter().take(4) {
        let (t, r) = dev.next().unwrap();
        check(&format!("case {t}"), c, r);
    }
    srv.stop();
}

/// The `sim` device reloads a slot with another schema without verilating again: with one
/// slot, social.proto, then proto2.proto at 32-bit pointers with header words (another
/// message set and pointer width), then social.proto again; each install loads the
/// schema's tables over AXI4-Lite into the process the slot's previous engine gave back
/// (one process of one program for all three: the factory's pool says so), and every
/// image and rejection is the `inproc:cpu` device's.
#[test]
fn sim_device_reloads_a_slot_into_the_running_core() {
    if !heapwire_testkit::tool_present("verilator", "scripts/setup.sh installs it") {
        return;
    }
    let social = Arc::new(Schema::new("social", load("bench/schemas/social.proto", LayoutOptions::default())));
    let layout = LayoutOptions { pointer_width: heapwire_schema::PointerWidth::P32, header_words: true };
    let proto2 = Arc::new(Schema::new("proto2", load("tests/differential/schemas/proto2.proto", layout)));
    let mut r = Rng::new(18);
    let phases: Vec<Vec<Job>> = [&social, &proto2, &social]
        .iter()
        .map(|s| {
            let roots: Vec<usize> = (0..s.compiled.messages.len()).filter(|&m| !s.compiled.messages[m].is_map_entry()).collect();
            (0..40)
                .map(|k| {
                    let msg = roots[r.below(roots.len() as u64) as usize];
                    let mut m = Vec::new();
                    let mut budget = 40;
                    protobuf_gen::message(&mut r, &s.compiled, msg, 0, &mut budget, &mut m);
                    if k % 3 == 1 {
                        m = protobuf_gen::mutate(&mut r, &m);
                    }
                    Job { schema: (*s).clone(), msg: msg as u32, wire: Wire::Protobuf, base: [0u64, 8, 0x1000][k % 3], max_depth: 100, input: m }
                })
                .collect()
        })
        .collect();
    let run = |uri: &str| -> (Vec<Result<Image, JobError>>, DeviceHandle) {
        let mut dev = DeviceHandle::open(uri, &OpenOptions { timeout: Duration::from_secs(600), ..Default::default() }).unwrap();
        let mut out = Vec::new();
        for phase in &phases {
            for j in phase {
                let (schema, input) = (j.schema.clone(), j.input.clone());
                dev.submit(Job { schema, input, msg: j.msg, wire: j.wire, base: j.base, max_depth: j.max_depth }).unwrap();
            }
            // the phase done before the next schema's requests go out: one install each
            while dev.outstanding() > 0 {
                out.push(dev.next().unwrap().1);
            }
        }
        (out, dev)
    };
    let (sim, sim_dev) = run("inproc:sim?slots=1&in=64k&out=128k");
    let (cpu, _) = run("inproc:cpu?slots=1&in=64k&out=128k");
    let rejected = same_results(sim, cpu);
    assert!(rejected > 5 && rejected < 100, "{rejected} of 120 rejected");
    let reloads = sim_dev.reloads();
    assert_eq!(reloads.len(), 3, "{reloads:?}");
    let pool = sim_dev.inproc().unwrap().with(|d| d.factory().sim_pool()).expect("the sim engine's pool");
    eprintln!("sim device reloads: {reloads:?}; the loadable core: {pool:?}");
    // one process of one program served all three installs, each loading its tables
    assert_eq!((pool.spawns, pool.loads, pool.programs.len()), (1, 3, 1), "{pool:?}");
}

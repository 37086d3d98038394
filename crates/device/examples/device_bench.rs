//! The device's measurements on loopback (issue 15, "Measurements"; BENCHMARKS.md,
//! "The device"): the MSR paper's round-trip method (section 6.2) and the PCIe paper's
//! reconfiguration throughput (section 3.3), against plain-socket floors.
//!
//!   cargo run --release -p heapwire-device --example device_bench -- [--out DIR] [--quick]
//!
//! 1. Round-trip CDFs, one request in flight, recorded in HDR histograms: a plain UDP echo
//!    and a plain TCP echo (std sockets; request = the input's bytes, reply = the image's
//!    bytes) against the device over UDP, over TCP and in process (`inproc:cpu`), for the
//!    smallest social request (a LoginRequest) and a full-size ComposePostRequest.
//! 2. Median round trip of a burst of k = 1..16 requests sent back to back and all
//!    answered (the paper's Fig. 17), with the least-squares slope in µs per extra
//!    request in flight.
//! 3. Throughput of large inputs (protobuf with one long bytes field; a long objgraph
//!    tree) through the device against the same bytes echoed over plain TCP.
//! 4. Slot reloads: a 1-slot device loaded alternately with two schemas (and with
//!    generated schemas of growing table size), time and MB/s per reload.
//!
//! Writes CSVs under DIR (default bench/out/device) for bench/device/plot.py and prints
//! the tables BENCHMARKS.md quotes.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use heapwire_device::host::{DeviceHandle, Job, OpenOptions, Schema};
use heapwire_device::link::{self, ServerConfig, Transport};
use heapwire_device::model::{Config, CpuFactory, Device};
use heapwire_device::serve::DeviceService;
use heapwire_engine::framing::put_varint;
use heapwire_engine::Wire;
use heapwire_schema::LayoutOptions;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn schema(name: &str, path: &Path) -> Arc<Schema> {
    let c = heapwire_schema::load(path, &[path.parent().unwrap().to_path_buf()], LayoutOptions::default())
        .unwrap_or_else(|e| panic!("{}: {e:?}", path.display()));
    Arc::new(Schema::new(name, Arc::new(c)))
}

fn hist() -> Histogram<u64> {
    // nanoseconds, 1 ns .. 100 s, 3 significant digits
    Histogram::new_with_bounds(1, 100_000_000_000, 3).unwrap()
}

fn us(ns: u64) -> f64 {
    ns as f64 / 1e3
}

// ---------------------------------------------------------------- wire messages

fn tag(out: &mut Vec<u8>, field: u32, wt: u32) {
    put_varint(out, ((field << 3) | wt) as u64);
}

fn string(out: &mut Vec<u8>, field: u32, s: &[u8]) {
    tag(out, field, 2);
    put_varint(out, s.len() as u64);
    out.extend_from_slice(s);
}

fn varint(out: &mut Vec<u8>, field: u32, v: u64) {
    tag(out, field, 0);
    put_varint(out, v);
}

/// The smallest social request: LoginRequest {req_id, username, password}.
fn login() -> Vec<u8> {
    let mut m = Vec::new();
    varint(&mut m, 1, 1);
    string(&mut m, 2, b"alice");
    string(&mut m, 3, b"pw");
    m
}

/// A full-size ComposePostRequest: every field set, an 800-character text, four media,
/// two carrier entries; about a kilobyte, so the request fits one link datagram.
fn compose_post() -> Vec<u8> {
    let mut m = Vec::new();
    varint(&mut m, 1, 0x1234_5678_9abc);
    string(&mut m, 2, b"username_000421");
    varint(&mut m, 3, 421);
    let text: Vec<u8> = (0..800).map(|i| b"lorem ipsum dolor sit amet @user_17 http://x.y/z "[i % 49]).collect();
    string(&mut m, 4, &text);
    let mut packed = Vec::new();
    for id in [9_001_u64, 9_002, 9_003, 9_004] {
        put_varint(&mut packed, id);
    }
    string(&mut m, 5, &packed);
    for t in ["png", "jpeg", "gif", "mp4"] {
        string(&mut m, 6, t.as_bytes());
    }
    varint(&mut m, 7, 1);
    for (k, v) in [("trace-id", "4bf92f3577b34da6a3ce929d0e0e4736"), ("span-id", "00f067aa0ba902b7")] {
        let mut e = Vec::new();
        string(&mut e, 1, k.as_bytes());
        string(&mut e, 2, v.as_bytes());
        string(&mut m, 8, &e);
    }
    m
}

/// unit.Node with one bytes field (15) of `n` bytes.
fn big_bytes(n: usize) -> Vec<u8> {
    let mut m = vec![0x7a];
    put_varint(&mut m, n as u64);
    m.extend((0..n).map(|i| (i * 7) as u8));
    m
}

// ---------------------------------------------------------------- plain echo floors

/// Request: [u32 reply length][padding to the request's size]; reply: that many bytes.
fn udp_echo_server() -> SocketAddr {
    let s = UdpSocket::bind("127.0.0.1:0").unwrap();
    let a = s.local_addr().unwrap();
    std::thread::spawn(move || {
        let mut buf = vec![0u8; 65536];
        let reply = vec![0x5au8; 65536];
        loop {
            let Ok((n, from)) = s.recv_from(&mut buf) else { continue };
            if n < 4 {
                continue;
            }
            let len = (u32::from_le_bytes(buf[..4].try_into().unwrap()) as usize).min(65507);
            let _ = s.send_to(&reply[..len], from);
        }
    });
    a
}

struct UdpEcho {
    s: UdpSocket,
    req: Vec<u8>,
    buf: Vec<u8>,
    lost: u64,
}

impl UdpEcho {
    fn new(server: SocketAddr, req_len: usize, reply_len: usize) -> UdpEcho {
        let s = UdpSocket::bind("127.0.0.1:0").unwrap();
        s.connect(server).unwrap();
        s.set_read_timeout(Some(Duration::from_millis(200))).unwrap();
        let mut req = vec![0xa5u8; req_len.max(4)];
        req[..4].copy_from_slice(&(reply_len as u32).to_le_bytes());
        UdpEcho { s, req, buf: vec![0; 65536], lost: 0 }
    }
    fn burst(&mut self, k: usize) {
        for _ in 0..k {
            self.s.send(&self.req).unwrap();
        }
        for _ in 0..k {
            if self.s.recv(&mut self.buf).is_err() {
                self.lost += 1;
            }
        }
    }
}

/// Request: [u32 length][u32 reply length][length bytes]; reply: reply-length bytes.
fn tcp_echo_server() -> SocketAddr {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let a = l.local_addr().unwrap();
    std::thread::spawn(move || {
        for c in l.incoming() {
            let Ok(mut c) = c else { continue };
            c.set_nodelay(true).unwrap();
            std::thread::spawn(move || {
                let mut buf = Vec::new();
                let mut reply = Vec::new();
                let mut h = [0u8; 8];
                while c.read_exact(&mut h).is_ok() {
                    let len = u32::from_le_bytes(h[..4].try_into().unwrap()) as usize;
                    let rlen = u32::from_le_bytes(h[4..].try_into().unwrap()) as usize;
                    buf.resize(len, 0);
                    if c.read_exact(&mut buf).is_err() {
                        return;
                    }
                    reply.resize(rlen, 0x5a);
                    if c.write_all(&reply).is_err() {
                        return;
                    }
                }
            });
        }
    });
    a
}

struct TcpEcho {
    s: TcpStream,
    req: Vec<u8>,
    buf: Vec<u8>,
}

impl TcpEcho {
    fn new(server: SocketAddr, req_len: usize, reply_len: usize) -> TcpEcho {
        let s = TcpStream::connect(server).unwrap();
        s.set_nodelay(true).unwrap();
        let mut req = Vec::with_capacity(8 + req_len);
        req.extend_from_slice(&(req_len as u32).to_le_bytes());
        req.extend_from_slice(&(reply_len as u32).to_le_bytes());
        req.resize(8 + req_len, 0xa5);
        TcpEcho { s, req, buf: vec![0; reply_len] }
    }
    fn burst(&mut self, k: usize) {
        for _ in 0..k {
            self.s.write_all(&self.req).unwrap();
        }
        for _ in 0..k {
            self.s.read_exact(&mut self.buf).unwrap();
        }
    }
}

// ---------------------------------------------------------------- the device

struct Servers {
    udp: link::Server,
    tcp: link::Server,
}

fn device_server(t: Transport, slots: u32) -> link::Server {
    let svc = Arc::new(DeviceService::new(Device::new(Config { slots, ..Config::default() }, Box::new(CpuFactory))));
    link::serve(t, ServerConfig::default(), Arc::new(move |m: &[u8]| svc.handle(m))).expect("serve")
}

fn open(uri: &str, inflight: usize) -> DeviceHandle {
    DeviceHandle::open(uri, &OpenOptions { inflight, ..OpenOptions::default() }).unwrap_or_else(|e| panic!("{uri}: {e}"))
}

#[derive(Clone)]
struct Msg {
    label: &'static str,
    schema: Arc<Schema>,
    msg: u32,
    wire: Wire,
    input: Vec<u8>,
}

impl Msg {
    fn job(&self) -> Job {
        Job { schema: self.schema.clone(), msg: self.msg, wire: self.wire, base: 0x1000, max_depth: 100, input: self.input.clone() }
    }
}

/// A named way to send a burst of k requests and wait for their k answers.
type Series = (&'static str, Box<dyn FnMut(usize)>);

/// Sends k requests back to back, then takes the k results.
fn device_burst(dev: &mut DeviceHandle, m: &Msg, k: usize) -> usize {
    for _ in 0..k {
        dev.submit(m.job()).unwrap();
    }
    let mut image = 0;
    for _ in 0..k {
        let (_, r) = dev.next().unwrap();
        image = r.unwrap_or_else(|e| panic!("{}: {e}", m.label)).bytes.len();
    }
    image
}

fn timed(n: usize, mut f: impl FnMut()) -> Histogram<u64> {
    let mut h = hist();
    for _ in 0..n {
        let t0 = Instant::now();
        f();
        h.record(t0.elapsed().as_nanos().max(1) as u64).unwrap();
    }
    h
}

/// Least squares y = a + b x: (a, b).
fn fit(xs: &[f64], ys: &[f64]) -> (f64, f64) {
    let n = xs.len() as f64;
    let (mx, my) = (xs.iter().sum::<f64>() / n, ys.iter().sum::<f64>() / n);
    let sxy: f64 = xs.iter().zip(ys).map(|(x, y)| (x - mx) * (y - my)).sum();
    let sxx: f64 = xs.iter().map(|x| (x - mx) * (x - mx)).sum();
    let b = sxy / sxx;
    (my - b * mx, b)
}

struct Out {
    dir: PathBuf,
}

impl Out {
    fn file(&self, name: &str, header: &str) -> std::io::BufWriter<std::fs::File> {
        let mut f = std::io::BufWriter::new(std::fs::File::create(self.dir.join(name)).unwrap());
        writeln!(f, "{header}").unwrap();
        f
    }
}

fn main() {
    let mut out_dir = root().join("bench/out/device");
    let mut quick = false;
    let mut only: Option<String> = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--out" => out_dir = PathBuf::from(args.next().expect("--out DIR")),
            "--quick" => quick = true,
            "--only" => only = Some(args.next().expect("--only rtt|inflight|throughput|reload")),
            _ => {
                eprintln!("usage: device_bench [--out DIR] [--quick] [--only rtt|inflight|throughput|reload]");
                std::process::exit(2);
            }
        }
    }
    std::fs::create_dir_all(&out_dir).unwrap();
    let out = Out { dir: out_dir.clone() };
    let scale = if quick { 5 } else { 1 };
    let section = |name: &str| only.as_deref().is_none_or(|o| o == name);

    let social = schema("social", &root().join("bench/schemas/social.proto"));
    let unit = schema("unit", &root().join("crates/cpu/testdata/unit.proto"));
    let expr = schema("expr", &root().join("examples/expression_tree/expr.proto"));
    let idx = |s: &Schema, n: &str| s.compiled.message_index(n).unwrap_or_else(|| panic!("{n}")) as u32;
    let social_msg = |label: &'static str, input: Vec<u8>| Msg {
        label,
        schema: social.clone(),
        msg: idx(&social, &format!("heapwire.bench.social.{label}")),
        wire: Wire::Protobuf,
        input,
    };
    let small = social_msg("LoginRequest", login());
    let full = social_msg("ComposePostRequest", compose_post());

    let servers = Servers { udp: device_server(Transport::Udp, 4), tcp: device_server(Transport::Tcp, 4) };
    let uris = [
        ("device-udp", format!("udp://{}", servers.udp.local_addr())),
        ("device-tcp", format!("tcp://{}", servers.tcp.local_addr())),
        ("device-inproc", "inproc:cpu".to_string()),
    ];
    let (udp_echo, tcp_echo) = (udp_echo_server(), tcp_echo_server());
    println!("# heapwire device measurements on loopback ({} core(s) available to this process)", std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0));

    // ------------------------------------------------------------ 1. round-trip CDFs
    // The series run interleaved, a block of samples each in turn, so that the machine's
    // noise (other jobs on its two cores) falls on all of them alike.
    let rounds = 80 / scale;
    let block = 500;
    let mut images = std::collections::HashMap::new();
    for m in [&small, &full] {
        images.insert(m.label, device_burst(&mut open("inproc:cpu", 1), m, 1));
    }
    let runners = |m: &Msg, with_inproc: bool, inflight: usize| -> Vec<Series> {
        let image = images[m.label];
        let mut v: Vec<Series> = Vec::new();
        let mut ue = UdpEcho::new(udp_echo, m.input.len(), image);
        v.push(("udp-echo", Box::new(move |k| ue.burst(k))));
        let mut te = TcpEcho::new(tcp_echo, m.input.len(), image);
        v.push(("tcp-echo", Box::new(move |k| te.burst(k))));
        for (name, uri) in uris.iter().take(if with_inproc { 3 } else { 2 }) {
            let mut dev = open(uri, inflight);
            let mm = m.clone();
            v.push((name, Box::new(move |k| {
                device_burst(&mut dev, &mm, k);
            })));
        }
        v
    };
    if section("rtt") {
        let mut cdf = out.file("rtt_cdf.csv", "series,msg,percentile,us");
        let mut summ = out.file("rtt_summary.csv", "series,msg,input_bytes,image_bytes,samples,min_us,p50_us,p90_us,p99_us,max_us");
        println!("\n## Round trips, one request in flight ({} samples each, interleaved in blocks of {block})\n", rounds * block);
        println!("| message | input B | image B | series | min µs | median µs | p90 µs | p99 µs | median / plain echo |");
        println!("|---|---:|---:|---|---:|---:|---:|---:|---:|");
        for m in [&small, &full] {
            let image = images[m.label];
            let mut series = runners(m, true, 1);
            let mut hs: Vec<Histogram<u64>> = series.iter().map(|_| hist()).collect();
            for (_, f) in series.iter_mut() {
                (0..block).for_each(|_| f(1));
            }
            for _ in 0..rounds {
                for ((_, f), h) in series.iter_mut().zip(hs.iter_mut()) {
                    h.add(timed(block, || f(1))).unwrap();
                }
            }
            let med = |i: usize| hs[i].value_at_quantile(0.5) as f64;
            for (i, ((name, _), h)) in series.iter().zip(&hs).enumerate() {
                let mut q = 0.0f64;
                while q <= 1.0 {
                    writeln!(cdf, "{name},{},{:.4},{:.3}", m.label, q * 100.0, us(h.value_at_quantile(q))).unwrap();
                    q += if q < 0.9 { 0.005 } else { 0.001 };
                }
                writeln!(cdf, "{name},{},100,{:.3}", m.label, us(h.max())).unwrap();
                writeln!(
                    summ,
                    "{name},{},{},{image},{},{:.3},{:.3},{:.3},{:.3},{:.3}",
                    m.label,
                    m.input.len(),
                    h.len(),
                    us(h.min()),
                    us(h.value_at_quantile(0.5)),
                    us(h.value_at_quantile(0.9)),
                    us(h.value_at_quantile(0.99)),
                    us(h.max())
                )
                .unwrap();
                let vs = match *name {
                    "device-udp" => format!("{:.2}x UDP echo", med(i) / med(0)),
                    "device-tcp" => format!("{:.2}x TCP echo", med(i) / med(1)),
                    _ => String::new(),
                };
                println!(
                    "| {} | {} | {image} | {name} | {:.1} | {:.1} | {:.1} | {:.1} | {vs} |",
                    m.label,
                    m.input.len(),
                    us(h.min()),
                    us(h.value_at_quantile(0.5)),
                    us(h.value_at_quantile(0.9)),
                    us(h.value_at_quantile(0.99))
                );
            }
        }
    }

    // ------------------------------------------------------------ 2. requests in flight
    if section("inflight") {
        let rounds = 15 / scale;
        let bursts = 200;
        let mut inf = out.file("inflight.csv", "series,msg,inflight,median_us,p90_us");
        let mut slopes = out.file("inflight_fit.csv", "series,msg,intercept_us,slope_us_per_request");
        println!("\n## Median round trip of k requests in flight (k sent back to back, until all are answered; {} bursts per k, interleaved)\n", rounds * bursts);
        println!("| message | series | k=1 µs | k=8 µs | k=16 µs | slope µs / request | intercept µs |");
        println!("|---|---|---:|---:|---:|---:|---:|");
        for m in [&small, &full] {
            let mut series = runners(m, false, 16);
            let mut hs: Vec<Vec<Histogram<u64>>> = series.iter().map(|_| (0..16).map(|_| hist()).collect()).collect();
            for (_, f) in series.iter_mut() {
                (0..bursts).for_each(|_| f(16));
            }
            for _ in 0..rounds {
                for k in 1..=16usize {
                    for ((_, f), h) in series.iter_mut().zip(hs.iter_mut()) {
                        h[k - 1].add(timed(bursts, || f(k))).unwrap();
                    }
                }
            }
            for ((name, _), h) in series.iter().zip(&hs) {
                let xs: Vec<f64> = (1..=16).map(|k| k as f64).collect();
                let ys: Vec<f64> = h.iter().map(|h| us(h.value_at_quantile(0.5))).collect();
                for (k, h) in h.iter().enumerate() {
                    writeln!(inf, "{name},{},{},{:.3},{:.3}", m.label, k + 1, us(h.value_at_quantile(0.5)), us(h.value_at_quantile(0.9))).unwrap();
                }
                let (a, b) = fit(&xs, &ys);
                writeln!(slopes, "{name},{},{a:.3},{b:.3}", m.label).unwrap();
                println!("| {} | {name} | {:.1} | {:.1} | {:.1} | {b:.2} | {a:.1} |", m.label, ys[0], ys[7], ys[15]);
            }
        }
    }

    // ------------------------------------------------------------ 3. large inputs
    if section("throughput") {
        let node = idx(&unit, "unit.Node");
        let tree = idx(&expr, "expr.Node");
        let mut large: Vec<Msg> = [64usize << 10, 256 << 10, 1 << 20]
            .iter()
            .map(|&n| Msg { label: "bytes", schema: unit.clone(), msg: node, wire: Wire::Protobuf, input: big_bytes(n) })
            .collect();
        large.push(Msg { label: "objgraph", schema: expr.clone(), msg: tree, wire: Wire::Objgraph, input: heapwire_testkit::scaled_tree::wire(50_000) });
        let mut tp = out.file("throughput.csv", "series,input,input_bytes,image_bytes,reps,median_us,mb_s");
        println!("\n## Large inputs, one request in flight (MB/s = input bytes / median round trip; MB = 10^6 B)\n");
        println!("| input | input B | image B | plain TCP echo MB/s | device TCP MB/s | device UDP MB/s | in process MB/s | TCP / echo | UDP / echo |");
        println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|");
        let mut devs: Vec<(&str, DeviceHandle)> = uris.iter().map(|(n, u)| (*n, open(u, 1))).collect();
        for m in &large {
            let image = device_burst(&mut devs[2].1, m, 1);
            let rounds = 8 / scale.min(4);
            let per = ((24usize << 20) / m.input.len()).clamp(8, 200) / scale / rounds;
            let per = per.max(2);
            let label = format!("{} {} KiB", m.label, m.input.len() >> 10);
            let mut te = TcpEcho::new(tcp_echo, m.input.len(), image);
            te.burst(2);
            for (_, dev) in devs.iter_mut() {
                device_burst(dev, m, 2);
            }
            // [tcp echo, device-udp, device-tcp, device-inproc], interleaved
            let mut hs: Vec<Histogram<u64>> = (0..4).map(|_| hist()).collect();
            for _ in 0..rounds {
                hs[0].add(timed(per, || te.burst(1))).unwrap();
                for (i, (_, dev)) in devs.iter_mut().enumerate() {
                    hs[i + 1]
                        .add(timed(per, || {
                            device_burst(dev, m, 1);
                        }))
                        .unwrap();
                }
            }
            let mbs: Vec<f64> = hs.iter().map(|h| m.input.len() as f64 / us(h.value_at_quantile(0.5))).collect();
            for (i, name) in ["tcp-echo", "device-udp", "device-tcp", "device-inproc"].iter().enumerate() {
                writeln!(tp, "{name},{label},{},{image},{},{:.3},{:.1}", m.input.len(), hs[i].len(), us(hs[i].value_at_quantile(0.5)), mbs[i]).unwrap();
            }
            println!(
                "| {label} | {} | {image} | {:.0} | {:.0} | {:.0} | {:.0} | {:.2} | {:.2} |",
                m.input.len(),
                mbs[0],
                mbs[2],
                mbs[1],
                mbs[3],
                mbs[2] / mbs[0],
                mbs[1] / mbs[0]
            );
        }
    }

    // ------------------------------------------------------------ 4. slot reloads
    if section("reload") {
        // two real schemas, and generated ones whose table files grow to a megabyte
        let gm1 = schema("gm1", &root().join("bench/schemas/google_message1.proto"));
        let mut pairs: Vec<(Arc<Schema>, Arc<Schema>)> = vec![(social.clone(), gm1.clone())];
        for n in [100usize, 400, 1600] {
            pairs.push((generated(&out_dir, n, 'a'), generated(&out_dir, n, 'b')));
        }
        let udp1 = device_server(Transport::Udp, 1);
        let tcp1 = device_server(Transport::Tcp, 1);
        let reload_uris = [
            ("inproc", "inproc:cpu?slots=1".to_string()),
            ("udp", format!("udp://{}", udp1.local_addr())),
            ("tcp", format!("tcp://{}", tcp1.local_addr())),
        ];
        let mut rl = out.file("reload.csv", "transport,schema,table_bytes,reloads,median_us,p90_us,mb_s");
        println!("\n## Slot reloads: a 1-slot device loaded alternately with two schemas (table sent in 32 KiB chunks, one round trip each)\n");
        println!("| schema | table B | table parse only µs | in process µs | MB/s | UDP µs | MB/s | TCP µs | MB/s |");
        println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|");
        let mut parse = out.file("table_parse.csv", "schema,table_bytes,median_us,mb_s");
        let mut devs: Vec<DeviceHandle> = reload_uris.iter().map(|(_, u)| open(u, 1)).collect();
        for (a, b) in &pairs {
            let reps = (if a.table.len() > 256 << 10 { 40 } else { 300 }) / scale;
            // [transport][a, b], transports interleaved
            let mut hs: Vec<[Histogram<u64>; 2]> = (0..3).map(|_| [hist(), hist()]).collect();
            for i in 0..reps + 2 {
                for (t, dev) in devs.iter_mut().enumerate() {
                    let ra = dev.install(0, a).unwrap();
                    let rb = dev.install(0, b).unwrap();
                    if i >= 2 {
                        hs[t][0].record(ra.time.as_nanos().max(1) as u64).unwrap();
                        hs[t][1].record(rb.time.as_nanos().max(1) as u64).unwrap();
                    }
                }
            }
            for (j, s) in [a, b].into_iter().enumerate() {
                // what the device does with a whole table besides moving it: parse and check it
                let hp = timed(reps.min(50), || {
                    heapwire_schema::table_file::read(&s.table).expect("table");
                });
                let pmed = us(hp.value_at_quantile(0.5));
                writeln!(parse, "{},{},{pmed:.3},{:.2}", s.name, s.table.len(), s.table.len() as f64 / pmed).unwrap();
                let mut cells = format!(" {pmed:.1} |");
                for (t, (tname, _)) in reload_uris.iter().enumerate() {
                    let h = &hs[t][j];
                    let med = us(h.value_at_quantile(0.5));
                    let mb = s.table.len() as f64 / med;
                    writeln!(rl, "{tname},{},{},{},{med:.3},{:.3},{mb:.2}", s.name, s.table.len(), h.len(), us(h.value_at_quantile(0.9))).unwrap();
                    cells += &format!(" {med:.1} | {mb:.1} |");
                }
                println!("| {} | {} |{cells}", s.name, s.table.len());
            }
        }
        drop(devs);
        drop(parse);
        let st = udp1.stats();
        println!(
            "\n(1-slot UDP device's link: {} requests, {} frames in, {} out, {} retransmits, {} duplicates dropped, {} over cap)",
            st.requests, st.frames_in, st.frames_out, st.retransmits, st.dropped_duplicate, st.dropped_over_cap
        );
        udp1.stop();
        tcp1.stop();
    }
    let st = servers.udp.stats();
    println!(
        "\n(4-slot UDP device's link: {} requests, {} frames in, {} out, {} retransmits, {} duplicates dropped, {} over cap)",
        st.requests, st.frames_in, st.frames_out, st.retransmits, st.dropped_duplicate, st.dropped_over_cap
    );
    servers.udp.stop();
    servers.tcp.stop();
    println!("\nCSVs in {}", out_dir.display());
}

/// A generated schema of `n` messages of 24 fields each (scalars, strings, bytes,
/// repeated and message-typed fields; no maps, which would add a type each), written
/// under `dir`; `tag` makes two different tables of one size.
fn generated(dir: &Path, n: usize, tag: char) -> Arc<Schema> {
    let kinds = ["int64", "string", "repeated int32", "bytes", "double", "fixed64", "bool", "sint32", "repeated string", "uint32", "float"];
    let mut p = format!("syntax = \"proto3\";\npackage gen{tag}{n};\n");
    for i in 0..n {
        p += &format!("message M{i} {{\n  M{} next = 1;\n", (i + 1) % n);
        for f in 2..=24 {
            p += &format!("  {} f{f}{tag} = {f};\n", kinds[(i + f) % kinds.len()]);
        }
        p += "}\n";
    }
    let path = dir.join(format!("gen_{tag}{n}.proto"));
    std::fs::write(&path, p).unwrap();
    schema(&format!("gen{n}{tag}"), &path)
}

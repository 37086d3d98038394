//! The device part of the C ABI (`hw_device_*`) from Rust, against devices served over UDP
//! in this test: a stream of protobuf and object-graph inputs (valid and mutated) through
//! injected faults and slot reloads, every result equal to `hw_decode`'s; a lost link
//! (`HW_LINK`, the handle refusing later calls); a shared key. `tests/c/test_capi.c`
//! (run by `tests/c_abi.rs`) covers the same calls from C.

use std::ffi::{c_char, c_void, CStr, CString};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use heapwire::*;
use heapwire_device::link::{self, Faults, Key, ServerConfig, Transport};
use heapwire_device::model::{Config, CpuFactory, Device};
use heapwire_device::serve::DeviceService;
use heapwire_schema::LayoutOptions;
use heapwire_testkit::{protobuf_gen, scaled_tree, Rng};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn server(slots: u32, faults: Faults, key: Option<Key>) -> (link::Server, Arc<DeviceService>) {
    let svc = Arc::new(DeviceService::new(Device::new(Config { slots, ..Config::default() }, Box::new(CpuFactory))));
    let s2 = svc.clone();
    let cfg = ServerConfig { faults, key, rto: Duration::from_millis(5), max_rto: Duration::from_millis(200), ..ServerConfig::default() };
    let srv = link::serve(Transport::Udp, cfg, Arc::new(move |m: &[u8]| s2.handle(m))).expect("serve");
    (srv, svc)
}

fn schema(rel: &str) -> *mut HwSchema {
    let p = CString::new(repo().join(rel).to_str().unwrap()).unwrap();
    let mut err = [0 as c_char; 256];
    let h = unsafe { hw_open(p.as_ptr(), std::ptr::null(), 0, 64, 0, err.as_mut_ptr(), err.len()) };
    assert!(!h.is_null(), "{rel}: {:?}", unsafe { CStr::from_ptr(err.as_ptr()) });
    h
}

fn open(uri: &str, opts: &HwDeviceOptions) -> Result<*mut HwDevice, (i32, String)> {
    let u = CString::new(uri).unwrap();
    let mut d = std::ptr::null_mut();
    let mut err = [0 as c_char; 512];
    let rc = unsafe { hw_device_open(u.as_ptr(), opts, &mut d, err.as_mut_ptr(), err.len()) };
    let text = unsafe { CStr::from_ptr(err.as_ptr()) }.to_string_lossy().into_owned();
    if rc == 0 {
        assert!(!d.is_null());
        Ok(d)
    } else {
        assert!(d.is_null());
        Err((rc, text))
    }
}

fn last_error(d: *const HwDevice) -> String {
    unsafe { CStr::from_ptr(hw_device_last_error(d)) }.to_string_lossy().into_owned()
}

fn opts(inflight: u32, timeout_ms: u32) -> HwDeviceOptions {
    HwDeviceOptions { inflight, timeout_ms, key_file: std::ptr::null() }
}

/// One input: schema handle, wire, type, bytes, base.
struct Input {
    s: *mut HwSchema,
    wire: u32,
    msg: i32,
    bytes: Vec<u8>,
    base: u64,
}

/// `hw_decode` of an input: (code, offset, image).
fn local(i: &Input) -> (i32, u64, Vec<u8>) {
    let mut out = vec![0u64; 1 << 15];
    let (mut n, mut e) = (0usize, HwError::default());
    let rc = unsafe {
        hw_decode(i.s, i.wire, i.msg, i.bytes.as_ptr(), i.bytes.len(), i.base, out.as_mut_ptr() as *mut c_void, out.len() * 8, &mut n, &mut e)
    };
    let bytes: Vec<u8> = out.iter().flat_map(|w| w.to_le_bytes()).take(n).collect();
    (rc, e.offset, bytes)
}

/// Submits every input with up to `window` outstanding and checks each result, in order,
/// against `hw_decode`. Returns the number rejected.
fn stream(d: *mut HwDevice, inputs: &[Input], window: usize) -> usize {
    let mut tickets = std::collections::VecDeque::new();
    let mut out = vec![0u64; 1 << 15];
    let mut rejected = 0;
    let mut receive = |tickets: &mut std::collections::VecDeque<(u64, usize)>| {
        let (want_t, k) = tickets.pop_front().unwrap();
        let (mut t, mut n, mut e) = (u64::MAX, 0usize, HwError::default());
        let rc = unsafe { hw_device_next(d, &mut t, out.as_mut_ptr() as *mut c_void, out.len() * 8, &mut n, &mut e) };
        assert_eq!(t, want_t, "input {k}: results out of order ({})", last_error(d));
        let (lrc, loff, limg) = local(&inputs[k]);
        assert_eq!((rc, e.offset), (lrc, loff), "input {k}: device {} vs local: {}", last_error(d), unsafe { CStr::from_ptr(hw_last_error(inputs[k].s)) }.to_string_lossy());
        let img: Vec<u8> = out.iter().flat_map(|w| w.to_le_bytes()).take(n).collect();
        assert!(img == limg, "input {k}: image differs ({} vs {} bytes)", img.len(), limg.len());
        rejected += (rc != 0) as usize;
    };
    for (k, i) in inputs.iter().enumerate() {
        let (mut t, mut e) = (0u64, HwError::default());
        let rc = unsafe { hw_device_submit(d, i.s, i.wire, i.msg, i.bytes.as_ptr(), i.bytes.len(), i.base, &mut t, &mut e) };
        assert_eq!(rc, 0, "submit {k}: {}", last_error(d));
        tickets.push_back((t, k));
        while tickets.len() > window {
            receive(&mut tickets);
        }
    }
    while !tickets.is_empty() {
        receive(&mut tickets);
    }
    rejected
}

/// Protobuf messages of every type of unit.proto and object-graph trees, valid and
/// mutated, at several bases.
fn corpus(n: usize, unit: *mut HwSchema, expr: *mut HwSchema, seed: u64) -> Vec<Input> {
    let p = repo().join("crates/cpu/testdata/unit.proto");
    let compiled = heapwire_schema::load(&p, &[], LayoutOptions::default()).unwrap();
    let tree = unsafe { hw_type(expr, c"expr.Node".as_ptr()) };
    let mut r = Rng::new(seed);
    (0..n)
        .map(|k| {
            let base = [0u64, 8, 0x1000, 0x7f00_0000_0000][k % 4];
            if k % 3 == 2 {
                let mut w = scaled_tree::wire(1 + r.below(30) as usize);
                if k % 2 == 0 {
                    let i = r.below(w.len() as u64) as usize;
                    w[i] ^= 1 << r.below(8);
                }
                Input { s: expr, wire: HW_WIRE_OBJGRAPH, msg: tree, bytes: w, base }
            } else {
                let msg = r.below(compiled.messages.len() as u64) as usize;
                let mut m = Vec::new();
                let mut budget = 40;
                protobuf_gen::message(&mut r, &compiled, msg, 0, &mut budget, &mut m);
                if k % 2 == 1 {
                    m = protobuf_gen::mutate(&mut r, &m);
                }
                Input { s: unit, wire: HW_WIRE_PROTOBUF, msg: msg as i32, bytes: m, base }
            }
        })
        .collect()
}

#[test]
fn udp_device_through_faults_gives_hw_decode_results() {
    let n = heapwire_testkit::env_num("HEAPWIRE_CAPI_DEVICE_REQUESTS", 600) as usize;
    // one slot: the two schemas take turns in it
    let (srv, svc) = server(1, Faults { drop: 0.10, dup: 0.05, reorder: 0.05, corrupt: 0.01, seed: 7 }, None);
    let (unit, expr) = (schema("crates/cpu/testdata/unit.proto"), schema("examples/expression_tree/expr.proto"));
    unsafe {
        assert_eq!(hw_set_register(expr, hw_type(expr, c"expr.Literal".as_ptr()), 0x1111), 0);
        assert_eq!(hw_set_register(expr, hw_type(expr, c"expr.Operation".as_ptr()), 0x2222), 0);
    }
    let inputs = corpus(n, unit, expr, 3);
    let d = open(&format!("udp://{}", srv.local_addr()), &opts(8, 60_000)).expect("open");
    let mut info = HwDeviceInfo::default();
    assert_eq!(unsafe { hw_device_header(d, &mut info) }, 0);
    assert_eq!((info.slots, info.version), (1, 1));
    let rejected = stream(d, &inputs, 8);
    assert!(rejected > n / 10 && rejected < n, "{rejected} of {n} rejected: the corpus lacks valid or rejected inputs");
    let mut st = HwDeviceStats::default();
    assert_eq!(unsafe { hw_device_counters(d, &mut st) }, 0);
    assert_eq!((st.requests, st.rejections), (n as u64, rejected as u64), "every request ran once");
    assert!(st.reloads >= 2, "{st:?}");
    assert_eq!(svc.with(|dev| dev.counters().0[0]), n as u64);
    assert_eq!(unsafe { hw_device_close(d) }, 0);
    unsafe {
        hw_close(unit);
        hw_close(expr);
    }
    srv.stop();
}

#[test]
fn a_lost_link_is_hw_link_and_the_handle_refuses_later_calls() {
    let (srv, _) = server(2, Faults::default(), None);
    let addr = srv.local_addr();
    let unit = schema("crates/cpu/testdata/unit.proto");
    let node = unsafe { hw_type(unit, c"unit.Node".as_ptr()) };
    let d = open(&format!("udp://{addr}"), &opts(4, 400)).expect("open");
    let input = [0x08u8, 0x2a];
    let mut out = [0u64; 64];
    let (mut t, mut n, mut e) = (0u64, 0usize, HwError::default());
    unsafe {
        assert_eq!(hw_device_submit(d, unit, HW_WIRE_PROTOBUF, node, input.as_ptr(), 2, 0, &mut t, &mut e), 0);
        assert_eq!(hw_device_next(d, &mut t, out.as_mut_ptr() as *mut c_void, 512, &mut n, &mut e), 0);
        assert!(n > 0);
        srv.stop();
        // the request goes out (or fails to) and no answer comes within the timeout
        let rc = hw_device_submit(d, unit, HW_WIRE_PROTOBUF, node, input.as_ptr(), 2, 0, &mut t, &mut e);
        let rc = if rc == 0 { hw_device_next(d, &mut t, out.as_mut_ptr() as *mut c_void, 512, &mut n, &mut e) } else { rc };
        assert_eq!(rc, HW_LINK, "{}", last_error(d));
        assert_eq!(e.code, HW_LINK);
        assert!(last_error(d).starts_with("link:"), "{}", last_error(d));
        let mut info = HwDeviceInfo::default();
        assert_eq!(hw_device_header(d, &mut info), HW_LINK);
        assert!(last_error(d).contains("failed earlier"), "{}", last_error(d));
        assert_eq!(hw_device_close(d), 0);
    }
    // nothing listening: open fails with HW_LINK and the text
    let (rc, text) = open(&format!("udp://{addr}"), &opts(1, 300)).expect_err("no device there");
    assert_eq!(rc, HW_LINK, "{text}");
    assert!(text.starts_with("link:"), "{text}");
    unsafe { hw_close(unit) };
}

#[test]
fn a_shared_key_from_a_file() {
    let key = Key::from_bytes(*b"0123456789abcdef0123").unwrap();
    let (srv, _) = server(1, Faults::default(), Some(key));
    let dir = std::env::temp_dir().join(format!("heapwire_capi_key_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("link.key");
    std::fs::write(&file, "3031323334353637383961626364656630313233\n").unwrap();
    let path = CString::new(file.to_str().unwrap()).unwrap();
    let uri = format!("udp://{}", srv.local_addr());
    let d = open(&uri, &HwDeviceOptions { key_file: path.as_ptr(), ..opts(0, 0) }).expect("open with the key");
    let mut info = HwDeviceInfo::default();
    assert_eq!(unsafe { hw_device_header(d, &mut info) }, 0);
    assert_eq!(info.slots, 1);
    assert_eq!(unsafe { hw_device_close(d) }, 0);
    // without it the device does not answer
    let (rc, text) = open(&uri, &opts(1, 300)).expect_err("no key");
    assert_eq!(rc, HW_LINK, "{text}");
    // a key file too short
    std::fs::write(&file, "short").unwrap();
    let (rc, text) = open(&uri, &HwDeviceOptions { key_file: path.as_ptr(), ..opts(0, 0) }).expect_err("short key");
    assert_eq!(rc, HW_BAD_ARGUMENT);
    assert!(text.contains("key_file") && text.contains("16"), "{text}");
    std::fs::remove_dir_all(&dir).ok();
    srv.stop();
}

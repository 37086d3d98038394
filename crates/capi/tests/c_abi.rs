//! Runs `tests/c/test_capi.c`: compiled with `cc -std=c11 -Wall -Wextra -Werror` against
//! `include/heapwire.h` and the generated `unit.gen.h`, linked with this build's
//! `libheapwire.a`. It decodes, encodes, prints and parses JSON through the C ABI on
//! both wires, and checks the protobuf image byte for byte against the one the Rust
//! engine writes here, rejections (code, offset, text), too-small buffers (`needed`) and
//! bad arguments; then the device calls (`hw_device_*`) against `inproc:cpu` and against
//! devices this test serves over UDP and TCP, each result checked against `hw_decode`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use std::time::Duration;

use heapwire_device::link::{self, ServerConfig, Transport};
use heapwire_device::model::{Config, CpuFactory, Device};
use heapwire_device::serve::DeviceService;
use heapwire_engine::{Engine, Options, Request, Wire};
use heapwire_schema::{LayoutOptions, PointerWidth};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `libheapwire.a` of the profile this test was built in (cargo builds the library's
/// static form with its rlib, into the test binary's directory).
fn static_lib() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let deps = exe.parent().unwrap();
    [deps.join("libheapwire.a"), deps.parent().unwrap().join("libheapwire.a")]
        .into_iter()
        .find(|p| p.exists())
        .unwrap_or_else(|| panic!("libheapwire.a not found beside {}", exe.display()))
}

/// unit.Node: i32=-7, s="héllo", leaf{id=3,name="x"}, packed_ints=[1,2,300],
/// strs=["a","bc"], c_str="z" (the values test_capi.c reads back).
const NODE: &[u8] = &[
    0x08, 0xf9, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, // i32 = -7
    0x72, 0x06, b'h', 0xc3, 0xa9, b'l', b'l', b'o', // s
    0x92, 0x01, 0x05, 0x08, 0x03, 0x12, 0x01, b'x', // leaf
    0xa2, 0x01, 0x04, 0x01, 0x02, 0xac, 0x02, // packed_ints
    0xaa, 0x01, 0x01, b'a', 0xaa, 0x01, 0x02, b'b', b'c', // strs
    0xc2, 0x01, 0x01, b'z', // c_str (oneof)
];

fn run_c_test(dir: &Path) -> std::process::Output {
    let unit = repo().join("crates/cpu/testdata/unit.proto");
    let schema = heapwire_schema::compile_files(std::slice::from_ref(&unit), &[], LayoutOptions { pointer_width: PointerWidth::P64, header_words: false }).unwrap();
    std::fs::write(dir.join("unit.gen.h"), heapwire_emit::c_header(&schema, "unit")).unwrap();
    std::fs::write(dir.join("unit.hwsc"), heapwire_schema::table_file::write(&schema)).unwrap();
    std::fs::write(dir.join("node.pb"), NODE).unwrap();
    let schema = Arc::new(schema);
    let mut engine = heapwire_cpu::CpuEngine::new(schema.clone());
    let options = Options { base: 0x10000, ..Options::default() };
    let req = Request { msg: schema.message_index("unit.Node").unwrap(), wire: Wire::Protobuf, input: NODE, options: &options };
    let mut image = Vec::new();
    engine.decode(&req, &mut image).unwrap();
    std::fs::write(dir.join("node.img"), &image).unwrap();

    let exe = dir.join("test_capi");
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let out = Command::new(&cc)
        .args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-O1", "-o"])
        .arg(&exe)
        .arg("-I")
        .arg(repo().join("crates/capi/include"))
        .arg("-I")
        .arg(dir)
        .arg(repo().join("crates/capi/tests/c/test_capi.c"))
        .arg(static_lib())
        .args(["-lpthread", "-ldl", "-lm"])
        .output()
        .unwrap_or_else(|e| panic!("{cc}: {e}"));
    assert!(out.status.success(), "{cc} failed:\n{}", String::from_utf8_lossy(&out.stderr));
    // the device part against a device in process and one over UDP, started here
    let (udp, tcp) = (served(Transport::Udp), served(Transport::Tcp));
    let uris = ["inproc:cpu".to_string(), format!("udp://{}", udp.local_addr()), format!("tcp://{}", tcp.local_addr())];
    let run = Command::new(&exe).arg(&unit).arg(repo().join("examples/expression_tree/expr.proto")).arg(dir).args(&uris).output().unwrap();
    udp.stop();
    tcp.stop();
    run
}

/// A device (cpu engine, 2 slots) served on loopback.
fn served(transport: Transport) -> link::Server {
    let svc = Arc::new(DeviceService::new(Device::new(Config { slots: 2, ..Config::default() }, Box::new(CpuFactory))));
    let cfg = ServerConfig { rto: Duration::from_millis(5), max_rto: Duration::from_millis(200), ..ServerConfig::default() };
    link::serve(transport, cfg, Arc::new(move |m: &[u8]| svc.handle(m))).expect("serve")
}

#[test]
fn c_program_exercises_the_abi() {
    let dir = std::env::temp_dir().join(format!("heapwire_capi_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let run = run_c_test(&dir);
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(run.status.success(), "test_capi failed ({}):\n{stdout}\n{}", run.status, String::from_utf8_lossy(&run.stderr));
    let last = stdout.lines().last().unwrap_or("");
    assert!(last.starts_with("test_capi: all ") && last.ends_with(" checks passed"), "{stdout}");
    let n: usize = last.split_whitespace().nth(2).unwrap().parse().unwrap();
    assert!(n >= 500, "only {n} checks ran:\n{stdout}");
    std::fs::remove_dir_all(&dir).ok();
}

//! `heapwire device serve`, `device info` and `submit`: a server started here, and
//! `submit` giving exactly what local `decode` gives (images, JSON, rejection lines, exit
//! codes), through injected faults, over UDP and TCP, and in process.

mod common;
use common::{delimit, heapwire, repo, stderr};

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

use heapwire_testkit::{protobuf_gen, Rng};

/// A `heapwire device serve` on a free loopback port; killed when dropped.
struct Server {
    child: Child,
    uri: String,
}

impl Server {
    fn start(args: &[&str]) -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_heapwire"))
            .args(["device", "serve", "--listen", "127.0.0.1:0"])
            .args(args)
            .current_dir(repo())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stderr.take().unwrap()).read_line(&mut line).unwrap();
        let uri = line
            .split_whitespace()
            .find(|w| w.starts_with("udp://") || w.starts_with("tcp://"))
            .unwrap_or_else(|| panic!("no address in '{line}'"))
            .to_string();
        Server { child, uri }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

const UNIT: [&str; 4] = ["--schema", "crates/cpu/testdata/unit.proto", "--type", "unit.Node"];

/// Random unit.Node messages, some mutated, as one delimited stream each, stopping at
/// the first message local decode rejects (so a stream exercises both endings).
fn streams() -> Vec<Vec<u8>> {
    let s = heapwire_schema::load(&repo().join(UNIT[1]), &[], Default::default()).unwrap();
    let node = s.message_index("unit.Node").unwrap();
    let mut r = Rng::new(77);
    (0..6)
        .map(|k| {
            let msgs: Vec<Vec<u8>> = (0..40)
                .map(|i| {
                    let mut m = Vec::new();
                    let mut budget = 30;
                    protobuf_gen::message(&mut r, &s, node, 0, &mut budget, &mut m);
                    if k % 2 == 1 && i == 30 {
                        m = protobuf_gen::mutate(&mut r, &m);
                    }
                    m
                })
                .collect();
            delimit(&msgs.iter().map(|m| m.as_slice()).collect::<Vec<_>>())
        })
        .collect()
}

/// `submit` (with `extra` and `only_submit`) against `decode` (with `extra`).
fn same_as_decode(uri: &str, extra: &[&str], only_submit: &[&str], input: &[u8]) {
    let mut local: Vec<&str> = vec!["decode"];
    local.extend(UNIT);
    local.extend(extra);
    let mut remote: Vec<&str> = vec!["submit", "--device", uri];
    remote.extend(UNIT);
    remote.extend(extra);
    remote.extend(only_submit);
    let (l, r) = (heapwire(&local, input), heapwire(&remote, input));
    assert_eq!(l.status.code(), r.status.code(), "{extra:?}: exit codes; decode said {}, submit said {}", stderr(&l), stderr(&r));
    assert!(l.stdout == r.stdout, "{extra:?} on {uri}: output differs ({} vs {} bytes)", l.stdout.len(), r.stdout.len());
    assert_eq!(stderr(&l), stderr(&r), "{extra:?}: rejection lines");
}

#[test]
fn submit_through_faults_gives_what_decode_gives() {
    let srv = Server::start(&["--fault", "drop=0.1,dup=0.05,reorder=0.05,corrupt=0.01"]);
    for (k, s) in streams().iter().enumerate() {
        same_as_decode(&srv.uri, &["--delimited", "--base", "0x10000"], &[], s);
        same_as_decode(&srv.uri, &["--delimited", "--json"], &["--inflight", &(1 + k * 5).to_string()], s);
    }
    // one message, its rejection at the same byte
    same_as_decode(&srv.uri, &["--base", "8"], &[], b"\x08\x05\x72\x09abc");
    let o = heapwire(&["device", "info", &srv.uri], b"");
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8(o.stdout).unwrap();
    for want in ["engine cpu", "slots 4", "slot 0: unit (table", "protocol_errors 0"] {
        assert!(text.contains(want), "'{want}' not in\n{text}");
    }
    let count = |name: &str| -> u64 {
        text.lines().find_map(|l| l.strip_prefix(name)?.trim().parse().ok()).unwrap_or_else(|| panic!("no {name} in\n{text}"))
    };
    // (streams stop at their first rejected message)
    assert!(count("rejections ") >= 1 && count("requests ") >= 40, "{text}");
}

#[test]
fn submit_over_tcp_and_in_process() {
    let srv = Server::start(&["--transport", "tcp", "--slots", "1"]);
    let s = &streams()[1];
    same_as_decode(&srv.uri, &["--delimited"], &[], s);
    same_as_decode("inproc:", &["--delimited", "--base", "4096"], &[], s);
    same_as_decode("inproc:cpu?slots=1&in=64k", &["--delimited", "--json"], &["--inflight", "8"], s);
}

#[test]
fn keys_bad_uris_and_oversized_inputs_are_refused_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let key = dir.path().join("key");
    std::fs::write(&key, b"0123456789abcdef0123456789abcdef").unwrap();
    let other = dir.path().join("other");
    std::fs::write(&other, b"fedcba9876543210fedcba9876543210").unwrap();
    let srv = Server::start(&["--key-file", key.to_str().unwrap()]);
    let msg = b"\x08\x05";
    let mut args: Vec<&str> = vec!["submit", "--device", &srv.uri, "--key-file", key.to_str().unwrap()];
    args.extend(UNIT);
    let o = heapwire(&args, msg);
    assert!(o.status.success(), "{}", stderr(&o));
    // the wrong key: dropped by the server, so the link gives up with a clear error
    let mut args: Vec<&str> = vec!["submit", "--device", &srv.uri, "--key-file", other.to_str().unwrap(), "--timeout", "1"];
    args.extend(UNIT);
    let o = heapwire(&args, msg);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("link"), "{}", stderr(&o));
    // a URI no device has, an input larger than the device's memory
    let mut args: Vec<&str> = vec!["submit", "--device", "ftp://x"];
    args.extend(UNIT);
    let o = heapwire(&args, msg);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("udp://HOST:PORT"), "{}", stderr(&o));
    let mut args: Vec<&str> = vec!["submit", "--device", "inproc:cpu?in=1k"];
    args.extend(UNIT);
    let mut big = b"\x7a\x88\x08".to_vec();
    big.extend([0u8; 1032]);
    let o = heapwire(&args, &big);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("does not fit the device's input memory (1024 bytes)"), "{}", stderr(&o));
    // a bad fault spec
    let o = heapwire(&["device", "serve", "--fault", "drop=2"], b"");
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--fault"), "{}", stderr(&o));
}

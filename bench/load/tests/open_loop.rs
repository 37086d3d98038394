//! The open-loop schedule and the accounting, against a stub server whose behaviour
//! each test chooses: latencies count from the scheduled send time, and every request
//! ends exactly once as ok, error or timeout.

mod common;

use std::time::{Duration, Instant};

use bytes::Bytes;
use common::{Action, StubServer};
use heapwire_load::{run, Corpus, LoadConfig, Mix, Rpc};
use tonic::Status;

fn config(addr: std::net::SocketAddr, mix: &str, rate: f64, duration_ms: u64, timeout_ms: u64) -> LoadConfig {
    LoadConfig {
        target: addr.to_string(),
        rate,
        duration: Duration::from_millis(duration_ms),
        timeout: Duration::from_millis(timeout_ms),
        connections: 2,
        threads: 1,
        max_in_flight: 10_000,
        mix: Mix::parse(mix).unwrap(),
        seed: 1,
        progress: false,
    }
}

fn requests(bodies: &[&'static [u8]]) -> Vec<Bytes> {
    bodies.iter().map(|b| Bytes::from_static(b)).collect()
}

#[test]
fn every_request_ends_once_as_ok_error_or_timeout() {
    let server = StubServer::start(|path, body| match &body[..] {
        b"fail" => Action::Fail(Status::invalid_argument(format!("refused at {path}"))),
        b"stall" => Action::Stall,
        _ => Action::Reply,
    });
    // One rpc, its three requests cycled in order: exactly a third of each kind.
    let corpus = Corpus::from_requests([(Rpc::Login, requests(&[b"ok", b"fail", b"stall"]))]);
    let cfg = config(server.addr, "login=1", 300.0, 1000, 250);
    let report = run(&cfg, &corpus).unwrap();
    let t = report.record.total;
    assert_eq!((t.sent, t.ok, t.errors, t.timeouts), (300, 100, 100, 100));
    assert_eq!(server.received(), 300, "the server saw every request");
    assert_eq!(report.record.by_status.get("OK"), Some(&100));
    assert_eq!(report.record.by_status.get("INVALID_ARGUMENT"), Some(&100));
    assert_eq!(report.record.per_rpc[Rpc::Login.index()], t);
    assert!(report.record.error_examples[0].contains("INVALID_ARGUMENT: refused at /heapwire.social.v1.Social/Login"));
    assert_eq!(report.record.latency.len(), 100, "only ok replies have latencies");
    // Timeouts are declared at the deadline, not before.
    let elapsed = report.elapsed.as_secs_f64();
    assert!(elapsed >= 0.99 + 0.25 - 0.01, "last answer after the last deadline, got {elapsed}");

    let j = report.json();
    assert_eq!(j["sent"], 300);
    assert_eq!(j["ok"].as_u64().unwrap() + j["errors"].as_u64().unwrap() + j["timeouts"].as_u64().unwrap(), 300);
    let timeline = j["timeline"].as_array().unwrap();
    assert_eq!(timeline.len(), 1);
    assert_eq!(timeline[0]["sent"], 300);
    let cdf = j["cdf"].as_array().unwrap();
    assert!(cdf.len() > 3);
    let last = cdf.last().unwrap();
    assert_eq!(last[1].as_f64().unwrap(), 1.0);
    assert!(cdf.windows(2).all(|w| w[0][0].as_f64() <= w[1][0].as_f64() && w[0][1].as_f64() <= w[1][1].as_f64()));
}

#[test]
fn latency_counts_from_the_scheduled_time_when_the_server_stalls() {
    // The server holds every request until `gate`, then answers at once. A request
    // scheduled at t waits gate - t: open loop keeps sending meanwhile, and the wait
    // shows in each of their latencies (a closed-loop tool would show one slow request).
    let gate = Instant::now() + Duration::from_millis(500);
    let server = StubServer::start(move |_, _| {
        if Instant::now() < gate {
            Action::HoldUntil(gate)
        } else {
            Action::Reply
        }
    });
    let corpus = Corpus::from_requests([(Rpc::ComposePost, requests(&[b"post"]))]);
    let cfg = config(server.addr, "compose_post=1", 200.0, 1500, 3000);
    let t0 = Instant::now();
    let report = run(&cfg, &corpus).unwrap();
    let before_gate = gate.saturating_duration_since(t0).as_secs_f64();
    let t = report.record.total;
    assert_eq!((t.sent, t.ok), (300, 300), "{}", report.summary());
    let h = &report.record.latency;
    // Requests scheduled more than 150 ms before the gate waited more than 150 ms; the
    // schedule starts at most ~`before_gate` before it, so about 200/s * (before_gate - 0.15 s).
    let waited = h.count_between(150_000_000, u64::MAX);
    let expected = 200.0 * (before_gate - 0.15 - 0.05); // 50 ms for connecting and the lead
    assert!(waited as f64 >= expected * 0.8, "{waited} requests waited > 150 ms, expected about {expected:.0}");
    assert!(h.max() >= 300_000_000, "max latency {} ns", h.max());
    // The ones scheduled after the gate are answered quickly.
    assert!(h.value_at_quantile(0.5) < 100_000_000, "p50 {} ns", h.value_at_quantile(0.5));
}

#[test]
fn the_mix_is_offered_in_its_proportions() {
    let server = StubServer::start(|_, _| Action::Reply);
    let corpus = Corpus::from_requests(Rpc::ALL.map(|r| (r, vec![Bytes::from(r.name())])));
    let cfg = config(server.addr, "compose_post=3,store_post=1", 1000.0, 1000, 1000);
    let report = run(&cfg, &corpus).unwrap();
    let posts = report.record.per_rpc[Rpc::ComposePost.index()];
    let stores = report.record.per_rpc[Rpc::StorePost.index()];
    assert_eq!(posts.sent + stores.sent, 1000);
    assert!((680..=820).contains(&posts.sent), "compose_post {} of 1000", posts.sent);
    assert_eq!(report.record.per_rpc[Rpc::Login.index()].sent, 0);
    assert_eq!(posts.ok + stores.ok, 1000, "{}", report.summary());
}

#[test]
fn the_in_flight_cap_holds_requests_back_and_counts_the_wait() {
    // Every request takes 100 ms; 400/s with at most 10 in flight sustains only 100/s,
    // so requests leave late, and the wait is in their latency and their deadline.
    let server = StubServer::start(|_, _| Action::HoldUntil(Instant::now() + Duration::from_millis(100)));
    let corpus = Corpus::from_requests([(Rpc::Login, requests(&[b"x"]))]);
    let cfg = LoadConfig { max_in_flight: 10, ..config(server.addr, "login=1", 400.0, 500, 400) };
    let report = run(&cfg, &corpus).unwrap();
    let t = report.record.total;
    assert_eq!(t.sent, 200);
    assert_eq!(t.sent, t.ok + t.errors + t.timeouts);
    assert_eq!(t.errors, 0);
    assert!(t.timeouts > 0, "the late ones miss their deadlines: {}", report.summary());
    assert!(report.record.lag.max() >= 100_000_000, "lag max {} ns", report.record.lag.max());
    assert!(report.record.latency.max() >= 200_000_000, "latency max {} ns", report.record.latency.max());
}

#[test]
fn a_closed_port_is_a_clear_error() {
    let corpus = Corpus::from_requests([(Rpc::Login, requests(&[b"x"]))]);
    // Bind and drop a listener for a port that is (very likely) closed now.
    let addr = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let err = run(&config(addr, "login=1", 10.0, 100, 100), &corpus).unwrap_err();
    assert!(err.starts_with(&format!("cannot connect to http://{addr}")), "{err}");
    let err = run(&config(addr, "store_post=1", 10.0, 100, 100), &corpus).unwrap_err();
    assert!(err.contains("no store_post requests"), "{err}");
}

#[test]
fn a_missing_corpus_file_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let err = Corpus::load(dir.path(), &Mix::parse("login=1").unwrap(), None).unwrap_err();
    assert!(err.contains("social_login.bin") && err.contains("gen_workloads.py"), "{err}");
    std::fs::write(dir.path().join("social_login.bin"), [9, 1, 2]).unwrap();
    let err = Corpus::load(dir.path(), &Mix::parse("login=1").unwrap(), None).unwrap_err();
    assert!(err.contains("byte offset 0 declares 9 bytes but only 2 remain"), "{err}");
}

#[test]
fn the_command_line_prints_a_summary_and_writes_json() {
    let server = StubServer::start(|_, _| Action::Reply);
    let dir = tempfile::tempdir().unwrap();
    // Two delimited requests per rpc, as gen_workloads.py writes them.
    for rpc in Rpc::ALL {
        std::fs::write(dir.path().join(rpc.corpus_file()), [3, b'a', b'b', b'c', 1, b'd']).unwrap();
    }
    let json = dir.path().join("report.json");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_social_load"))
        .args(["--target", &server.addr.to_string(), "--rate", "200", "--duration", "1s", "--timeout", "500ms"])
        .args(["--connections", "2", "--corpus"])
        .arg(dir.path())
        .arg("--json")
        .arg(&json)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "stdout:\n{stdout}\nstderr:\n{stderr}");
    assert!(stdout.contains("requests    sent 200  ok 200  errors 0  timeouts 0"), "{stdout}");
    assert!(stdout.contains("latency     p50 ") && stdout.contains("p99.9 "), "{stdout}");
    assert!(stdout.contains("status      OK 200"), "{stdout}");
    let j: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(j["ok"], 200);
    assert_eq!(j["mix"], heapwire_load::Mix::parse(Mix::DEFAULT).unwrap().to_string());
    assert!(j["latency_us"]["p99"].as_f64().unwrap() > 0.0);
    assert_eq!(j["per_rpc"]["compose_post"]["avg_request_bytes"], 2.0);

    let bad = std::process::Command::new(env!("CARGO_BIN_EXE_social_load"))
        .args(["--target", "127.0.0.1:1", "--rate", "10", "--mix", "login=0"])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("--mix mix 'login=0': every weight is 0"));
}

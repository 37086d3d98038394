//! Scale-out behind a gRPC load balancer: three `social_service` processes behind
//! Debian's nginx (`grpc_pass` to an upstream of the three) on loopback. Load goes
//! through nginx; one service process is killed (SIGKILL) mid-run. Every request must
//! end as ok, a gRPC error or a timeout in the generator's accounting (none vanished),
//! and the two survivors must keep serving.
//!
//! Needs nginx (scripts/setup.sh installs it; the test says SKIPPED where it is missing)
//! and a built `social_service` (`cargo build --release -p heapwire-social-service`;
//! scripts/test.sh builds it before the Rust tests).

use std::io::{BufRead, BufReader, Read};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use serde_json::Value;

const RATE: u64 = 300;
const SECONDS: u64 = 6;
/// When the victim dies, from the start of the load.
const KILL_AFTER: Duration = Duration::from_millis(2500);

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap()
}

fn find_nginx() -> Option<PathBuf> {
    let candidates = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .unwrap_or_default()
        .into_iter()
        .chain([PathBuf::from("/usr/sbin"), PathBuf::from("/sbin")]);
    candidates.map(|d| d.join("nginx")).find(|p| p.is_file())
}

/// `social_service` next to this test's executable's profile directory (target/release),
/// or where HEAPWIRE_SOCIAL_SERVICE says.
fn find_social_service() -> PathBuf {
    if let Some(p) = std::env::var_os("HEAPWIRE_SOCIAL_SERVICE") {
        return PathBuf::from(p);
    }
    let exe = std::env::current_exe().unwrap();
    let profile_dir = exe.parent().and_then(Path::parent).unwrap();
    let bin = profile_dir.join("social_service");
    assert!(
        bin.is_file(),
        "{} is not built: run `cargo build --release -p heapwire-social-service` first",
        bin.display()
    );
    bin
}

/// A directory with the five request streams: bench/out/quick when the workload
/// generator has filled it, else a small set generated here.
fn corpus(tmp: &Path) -> PathBuf {
    let root = workspace_root();
    let files = ["compose_post", "store_post", "compose_media", "register_user", "login"];
    let quick = root.join("bench/out/quick");
    if files.iter().all(|f| quick.join(format!("social_{f}.bin")).is_file()) {
        return quick;
    }
    let out = tmp.join("corpus");
    let venv_python = root.join(".venv/bin/python3");
    let python = if venv_python.is_file() { venv_python } else { PathBuf::from("python3") };
    let only: Vec<String> = files.iter().map(|f| format!("social_{f}")).collect();
    let status = Command::new(&python)
        .arg(root.join("bench/gen_workloads.py"))
        .arg("--out")
        .arg(&out)
        .args(["--count", "100", "--only", &only.join(",")])
        .stdout(Stdio::null())
        .status()
        .unwrap_or_else(|e| panic!("cannot run {} bench/gen_workloads.py: {e}", python.display()));
    assert!(status.success(), "bench/gen_workloads.py failed ({status})");
    out
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// A child process killed (and reaped) when dropped, so a failing test leaves nothing.
struct Proc(Child);

impl Proc {
    /// Waits up to `limit` for the process to exit; its exit status and stdout.
    fn wait_stdout(mut self, limit: Duration, what: &str) -> (std::process::ExitStatus, String) {
        let mut stdout = self.0.stdout.take().expect("stdout piped");
        let reader = thread::spawn(move || {
            let mut s = String::new();
            let _ = stdout.read_to_string(&mut s);
            s
        });
        let deadline = Instant::now() + limit;
        let status = loop {
            if let Some(status) = self.0.try_wait().unwrap() {
                break status;
            }
            assert!(Instant::now() < deadline, "{what} still running after {limit:?}");
            thread::sleep(Duration::from_millis(20));
        };
        (status, reader.join().unwrap())
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

struct Service {
    proc: Proc,
    addr: SocketAddr,
    stats: PathBuf,
}

fn start_service(bin: &Path, args: &[&str], stats: PathBuf) -> Service {
    let mut child = Command::new(bin)
        .args(["--listen", "127.0.0.1:0"])
        .args(args)
        .arg("--stats-out")
        .arg(&stats)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {}: {e}", bin.display()));
    let stdout = child.stdout.take().unwrap();
    let proc = Proc(child);
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let mut lines = BufReader::new(stdout).lines();
        if let Some(Ok(line)) = lines.next() {
            let _ = tx.send(line);
        }
        for _ in lines {} // keep the pipe drained
    });
    let line = rx
        .recv_timeout(Duration::from_secs(20))
        .unwrap_or_else(|_| panic!("social_service {args:?} printed no `listening on` line in 20 s"));
    let addr = line
        .strip_prefix("listening on ")
        .and_then(|a| a.parse().ok())
        .unwrap_or_else(|| panic!("social_service printed '{line}', expected `listening on ADDR`"));
    Service { proc, addr, stats }
}

/// SIGTERM, then the service's statistics (it writes them on the way out).
fn stop_service(mut s: Service) -> Value {
    // SAFETY: kill(2) on our own child's pid.
    unsafe { libc::kill(s.proc.0.id() as libc::pid_t, libc::SIGTERM) };
    let deadline = Instant::now() + Duration::from_secs(10);
    while s.proc.0.try_wait().unwrap().is_none() {
        assert!(Instant::now() < deadline, "social_service did not exit within 10 s of SIGTERM");
        thread::sleep(Duration::from_millis(20));
    }
    let text = std::fs::read_to_string(&s.stats)
        .unwrap_or_else(|e| panic!("{}: {e} (no --stats-out after SIGTERM)", s.stats.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}: {text}", s.stats.display()))
}

fn nginx_config(prefix: &Path, port: u16, backends: &[SocketAddr]) -> String {
    let p = prefix.display();
    let servers: String = backends
        .iter()
        .map(|a| format!("    server {a} max_fails=1 fail_timeout=30s;\n"))
        .collect();
    // One process (no master) in the foreground, everything under the test's prefix.
    format!(
        "daemon off;
master_process off;
worker_processes 1;
pid {p}/nginx.pid;
error_log {p}/error.log warn;
events {{ worker_connections 1024; }}
http {{
  access_log off;
  client_body_temp_path {p}/client_body;
  proxy_temp_path {p}/proxy;
  fastcgi_temp_path {p}/fastcgi;
  uwsgi_temp_path {p}/uwsgi;
  scgi_temp_path {p}/scgi;
  upstream social {{
{servers}    keepalive 16;
  }}
  server {{
    listen 127.0.0.1:{port} http2;
    location / {{
      grpc_pass grpc://social;
      grpc_connect_timeout 1s;
      grpc_next_upstream error timeout;
    }}
  }}
}}
"
    )
}

fn wait_for_port(port: u16, what: &str, log: &Path) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            Instant::now() < deadline,
            "{what} not listening on port {port} after 10 s; {}:\n{}",
            log.display(),
            std::fs::read_to_string(log).unwrap_or_default()
        );
        thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn three_services_behind_nginx_survive_losing_one() {
    let Some(nginx) = find_nginx() else {
        eprintln!("SKIPPED three_services_behind_nginx_survive_losing_one: nginx is not installed (Debian: apt-get install nginx; scripts/setup.sh does)");
        return;
    };
    let service_bin = find_social_service();
    let tmp = tempfile::tempdir().unwrap();
    let corpus = corpus(tmp.path());

    // Three stateless replicas of the one service, each a different build of it.
    let variants: [&[&str]; 3] = [
        &["--codec", "heapwire", "--mode", "inline", "--app-threads", "1"],
        &["--codec", "heapwire", "--mode", "pool", "--pool-cores", "0", "--workers", "1", "--app-threads", "1"],
        &["--codec", "prost", "--mode", "inline", "--app-threads", "1"],
    ];
    let mut services: Vec<Option<Service>> = variants
        .iter()
        .enumerate()
        .map(|(i, args)| Some(start_service(&service_bin, args, tmp.path().join(format!("stats{i}.json")))))
        .collect();
    let backends: Vec<SocketAddr> = services.iter().map(|s| s.as_ref().unwrap().addr).collect();

    let prefix = tmp.path().join("nginx");
    std::fs::create_dir_all(&prefix).unwrap();
    let port = free_port();
    let conf = prefix.join("nginx.conf");
    std::fs::write(&conf, nginx_config(&prefix, port, &backends)).unwrap();
    let error_log = prefix.join("error.log");
    let _nginx = Proc(
        Command::new(&nginx)
            .arg("-p")
            .arg(&prefix)
            .arg("-c")
            .arg(&conf)
            .arg("-e")
            .arg(&error_log)
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", nginx.display())),
    );
    wait_for_port(port, "nginx", &error_log);

    let report_path = tmp.path().join("load.json");
    let load_start = Instant::now();
    let load = Proc(
        Command::new(env!("CARGO_BIN_EXE_social_load"))
            .args(["--target", &format!("127.0.0.1:{port}")])
            .args(["--rate", &RATE.to_string(), "--duration", &format!("{SECONDS}s"), "--timeout", "2s"])
            .args(["--connections", "2", "--quiet", "--corpus"])
            .arg(&corpus)
            .arg("--json")
            .arg(&report_path)
            .stdout(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    thread::sleep(KILL_AFTER);
    let victim = services[1].take().unwrap();
    drop(victim.proc); // SIGKILL: the process dies with whatever it had in flight
    let killed_at = load_start.elapsed();

    let (status, summary) = load.wait_stdout(Duration::from_secs(60), "social_load");
    assert!(status.success(), "social_load failed ({status}):\n{summary}");
    let report: Value = serde_json::from_slice(&std::fs::read(&report_path).unwrap()).unwrap();
    let n = |v: &Value| v.as_u64().unwrap();
    let (sent, ok, errors, timeouts) = (n(&report["sent"]), n(&report["ok"]), n(&report["errors"]), n(&report["timeouts"]));

    // None vanished: every scheduled request was sent and ended exactly one way.
    assert_eq!(sent, RATE * SECONDS, "{summary}");
    assert_eq!(sent, ok + errors + timeouts, "{summary}");
    // Failures are confined to what the victim held when it died; every failed
    // request carries a gRPC status or timed out.
    let statuses = report["by_status"].as_object().unwrap();
    let status_total: u64 = statuses.values().map(n).sum();
    assert_eq!(status_total, ok + errors, "{summary}");
    assert!(ok + 50 >= sent, "{summary}\nnginx error log:\n{}", std::fs::read_to_string(&error_log).unwrap_or_default());

    // The survivors kept serving: every request scheduled from a second after the kill
    // on succeeded, and only the two survivors can have answered them.
    let after_kill_from = killed_at.as_secs() as usize + 1;
    let timeline = report["timeline"].as_array().unwrap();
    let later: Vec<&Value> = timeline.iter().skip(after_kill_from).collect();
    assert!(!later.is_empty(), "the load ended before the kill");
    let later_sent: u64 = later.iter().map(|s| n(&s["sent"])).sum();
    let later_ok: u64 = later.iter().map(|s| n(&s["ok"])).sum();
    assert_eq!(later_ok, later_sent, "requests failed after the kill:\n{summary}");

    let survivors: Vec<Value> = [0, 2].map(|i| stop_service(services[i].take().unwrap())).into();
    let served: Vec<u64> = survivors.iter().map(|s| n(&s["served_total"])).collect();
    assert!(served.iter().all(|s| *s > 0), "a survivor served nothing: {served:?}");
    assert!(served.iter().sum::<u64>() >= later_ok, "survivors served {served:?} < {later_ok} ok after the kill");
    // ... and the victim was in the rotation before it died.
    assert!(served.iter().sum::<u64>() < ok, "the victim served nothing: survivors {served:?} of {ok} ok");
    eprintln!(
        "scale-out: sent {sent}, ok {ok}, errors {errors} {statuses:?}, timeouts {timeouts}; victim killed at {:.1} s; survivors served {served:?}",
        killed_at.as_secs_f64()
    );
}

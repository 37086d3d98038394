//! The `social_service` binary as scripts use it: `listening on ADDR` on stdout when
//! ready, requests served, a clean exit on SIGTERM with the statistics written, and
//! usage errors with exit status 2.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use heapwire_social_service::client::RawClient;
use heapwire_social_service::pb::{req, rpc};
use heapwire_social_service::schema::Rpc;
use prost::Message;

const BIN: &str = env!("CARGO_BIN_EXE_social_service");

/// Waits for the child for up to `limit`; its exit status.
fn wait(child: &mut std::process::Child, limit: Duration) -> std::process::ExitStatus {
    let t = Instant::now();
    loop {
        if let Some(st) = child.try_wait().unwrap() {
            return st;
        }
        if t.elapsed() > limit {
            let _ = child.kill();
            panic!("social_service did not exit within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn run(mode: &str, signal: i32) {
    let stats = std::env::temp_dir().join(format!("social_service_cli_{}_{mode}.json", std::process::id()));
    let mut child = Command::new(BIN)
        .args(["--listen", "127.0.0.1:0", "--codec", "heapwire", "--mode", mode, "--stats-out"])
        .arg(&stats)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    let addr = line.trim().strip_prefix("listening on ").unwrap_or_else(|| panic!("first line: {line:?}")).to_string();
    assert!(addr.starts_with("127.0.0.1:") && !addr.ends_with(":0"), "{addr}");

    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(async {
        let ch = tonic::transport::Endpoint::from_shared(format!("http://{addr}")).unwrap().connect().await.unwrap();
        let mut c = RawClient::new(ch);
        let reg = req::RegisterUserRequest { req_id: 1, username: "ann".into(), password: "pw".into(), user_id: 7, ..Default::default() };
        let r = rpc::RegisterUserReply::decode(&c.call(Rpc::RegisterUser, reg.encode_to_vec()).await.unwrap()[..]).unwrap();
        assert_eq!(r, rpc::RegisterUserReply { req_id: 1, user_id: 7, created: true });
        let login = req::LoginRequest { req_id: 2, username: "ann".into(), password: "pw".into(), ..Default::default() };
        let r = rpc::LoginReply::decode(&c.call(Rpc::Login, login.encode_to_vec()).await.unwrap()[..]).unwrap();
        assert!(r.ok && r.token.len() == 16, "{r:?}");
        let st = c.call(Rpc::Login, vec![0x0a, 0x05, b'a']).await.unwrap_err();
        assert_eq!((st.code(), st.message()), (tonic::Code::InvalidArgument, "rejected: length_past_end at byte 1"));
    });
    drop(rt);
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, signal) };
    let st = wait(&mut child, Duration::from_secs(15));
    assert!(st.success(), "exit status {st:?}");
    let json = std::fs::read_to_string(&stats).unwrap();
    let _ = std::fs::remove_file(&stats);
    for want in ["\"RegisterUser\": 1", "\"Login\": 1", "\"served_total\": 2", "\"rejected\": 1", "\"INVALID_ARGUMENT\": 1", "\"app\": {\"seconds\": "] {
        assert!(json.contains(want), "{want} in {json}");
    }
    if mode == "pool" {
        assert!(json.contains("\"pool\": {\"seconds\": "), "{json}");
    }
}

#[test]
fn serves_and_stops_on_sigterm_with_statistics() {
    run("pool", libc::SIGTERM);
}

#[test]
fn serves_and_stops_on_sigint_with_statistics() {
    run("inline", libc::SIGINT);
}

#[test]
fn usage_errors_exit_2_with_a_message() {
    for (args, says) in [
        (&["--codec", "prost", "--mode", "pool"][..], "only --mode inline"),
        (&["--mode", "inline", "--pool-cores", "1"][..], "--pool-cores 1 needs --mode pool"),
        (&["--mode", "pool", "--pool-cores", "4096"][..], "leaves no core for the application"),
        (&["--mode", "device", "--device", "nowhere:x"][..], "--device nowhere:x"),
        (&["--listen", "256.0.0.1:1"][..], "--listen 256.0.0.1:1"),
        (&["--codec", "json"][..], "invalid value 'json'"),
    ] {
        let out = Command::new(BIN).args(args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
        assert!(out.stdout.is_empty(), "{args:?}: nothing on stdout");
    }
}

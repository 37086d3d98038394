//! Running the `heapwire` binary from the integration tests.

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Runs `heapwire ARGS` in the repository root with `stdin` as its input.
pub fn heapwire(args: &[&str], stdin: &[u8]) -> Output {
    use std::io::Write;
    let mut c = Command::new(env!("CARGO_BIN_EXE_heapwire"))
        .args(args)
        .current_dir(repo())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // a command that exits before reading its input (a usage error) closes the pipe first
    if let Err(e) = c.stdin.take().unwrap().write_all(stdin) {
        assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe, "writing heapwire's input: {e}");
    }
    c.wait_with_output().unwrap()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// `msgs` as a varint-delimited stream.
pub fn delimit(msgs: &[&[u8]]) -> Vec<u8> {
    let mut out = Vec::new();
    for m in msgs {
        heapwire_engine::framing::put_delimited(&mut out, m);
    }
    out
}

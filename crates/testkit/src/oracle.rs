//! The official protobuf library as a test oracle: the project's own Python (`.venv`,
//! made by `scripts/setup.sh` from the pinned `requirements.txt`), never whatever
//! `python3` a machine happens to have. A missing or different oracle fails the test
//! that asked for it, with what to do; it never turns the check into a pass.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The workspace root (this crate lives in `crates/testkit`).
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().expect("workspace root")
}

/// The exact `protobuf` version `requirements.txt` pins.
pub fn pinned_protobuf() -> String {
    let req = repo_root().join("requirements.txt");
    let text = std::fs::read_to_string(&req).unwrap_or_else(|e| panic!("{}: {e}", req.display()));
    text.lines()
        .find_map(|l| l.trim().strip_prefix("protobuf=="))
        .unwrap_or_else(|| panic!("{}: no `protobuf==VERSION` pin", req.display()))
        .trim()
        .to_string()
}

/// The project's Python with the pinned official library; panics (failing the test)
/// when it is missing or holds another version.
pub fn python() -> PathBuf {
    let py = repo_root().join(".venv/bin/python3");
    let setup = "run scripts/setup.sh (it makes .venv with the pinned requirements.txt)";
    assert!(py.is_file(), "the official protobuf library is needed and {} is missing: {setup}", py.display());
    let out = Command::new(&py)
        .args(["-c", "import google.protobuf, grpc_tools.protoc; print(google.protobuf.__version__)"])
        .output()
        .unwrap_or_else(|e| panic!("{}: {e}: {setup}", py.display()));
    assert!(out.status.success(), "{}: protobuf or grpcio-tools missing ({}): {setup}", py.display(), String::from_utf8_lossy(&out.stderr).trim());
    let have = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let want = pinned_protobuf();
    assert_eq!(have, want, "{} has protobuf {have}, requirements.txt pins {want}: {setup}", py.display());
    py
}

/// A FileDescriptorSet (imports included) of `file` compiled by the official compiler
/// that ships with the pinned grpcio-tools, at a temporary path the caller removes.
pub fn descriptor_set(file: &Path, include: &Path) -> PathBuf {
    // Unique per call: tests of one process run in parallel.
    static CALLS: AtomicUsize = AtomicUsize::new(0);
    let name = file.file_name().and_then(|n| n.to_str()).unwrap_or("schema");
    let n = CALLS.fetch_add(1, Ordering::Relaxed);
    let out = std::env::temp_dir().join(format!("heapwire-oracle-{}-{n}-{name}.pb", std::process::id()));
    let st = Command::new(python())
        .args(["-m", "grpc_tools.protoc", "--include_imports"])
        .arg(format!("-I{}", include.display()))
        .arg(format!("--descriptor_set_out={}", out.display()))
        .arg(file)
        .status()
        .expect("python -m grpc_tools.protoc");
    assert!(st.success(), "the official compiler refused {}", file.display());
    out
}

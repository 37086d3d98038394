//! Any text as a .proto file: compiled or rejected with an error, never a panic or a
//! stack overflow; a compiled schema survives the table file round trip.
#![cfg_attr(fuzzing, no_main)]

/// The target's check of one input (also replayed by `cargo test`, see
/// crates/cli/tests/fuzz_regressions.rs).
pub fn check(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let dir = std::env::temp_dir().join(format!("heapwire-fuzz-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&dir);
    let path = dir.join("f.proto");
    std::fs::write(&path, text).unwrap();
    if let Ok(s) = heapwire_schema::compile_files(&[path], &[dir], Default::default()) {
        let bytes = heapwire_schema::table_file::write(&s);
        let back = heapwire_schema::table_file::read(&bytes).expect("own table file reads back");
        assert_eq!(back, s);
    }
}

#[cfg(fuzzing)]
libfuzzer_sys::fuzz_target!(|data: &[u8]| check(data));

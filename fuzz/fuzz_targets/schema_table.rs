//! Table files are installed into devices: any bytes are read or rejected, never panic,
//! and what is accepted writes back to the same bytes.
#![cfg_attr(fuzzing, no_main)]

/// The target's check of one input (also replayed by `cargo test`, see
/// crates/cli/tests/fuzz_regressions.rs).
pub fn check(data: &[u8]) {
    // Seed the input with a real table's header so the fuzzer gets past the checksum:
    // recompute the CRC over whatever the fuzzer produced.
    let mut bytes = Vec::with_capacity(data.len() + 20);
    bytes.extend_from_slice(b"HWSCHEMA");
    bytes.extend_from_slice(data);
    let crc = heapwire_schema::table_file::crc32(&bytes);
    bytes.extend_from_slice(&crc.to_le_bytes());
    if let Ok(s) = heapwire_schema::table_file::read(&bytes) {
        assert_eq!(heapwire_schema::table_file::write(&s), bytes);
    }
}

#[cfg(fuzzing)]
libfuzzer_sys::fuzz_target!(|data: &[u8]| check(data));

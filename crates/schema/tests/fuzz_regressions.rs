//! Replays every input the fuzzers ever found (fuzz/regressions/schema_table/): each
//! must be read or rejected cleanly, and what is read must write back identically.


#[test]
fn schema_table_regressions() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/regressions/schema_table");
    let mut n = 0;
    for e in std::fs::read_dir(&dir).expect("regressions folder") {
        let data = std::fs::read(e.unwrap().path()).unwrap();
        // Framed exactly as the fuzz target frames its input.
        let mut bytes = b"HWSCHEMA".to_vec();
        bytes.extend_from_slice(&data);
        let crc = heapwire_schema::table_file::crc32(&bytes);
        bytes.extend_from_slice(&crc.to_le_bytes());
        if let Ok(s) = heapwire_schema::table_file::read(&bytes) {
            assert_eq!(heapwire_schema::table_file::write(&s), bytes);
        }
        n += 1;
    }
    assert!(n > 0, "no regression inputs found in {}", dir.display());
}

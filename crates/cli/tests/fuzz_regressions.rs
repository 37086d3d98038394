//! Replays every input the fuzzers ever kept (`fuzz/regressions/<target>/`, see
//! scripts/fuzz.sh) through that target's own check, compiled here from the target's
//! source, so `cargo test` keeps every fixed crash fixed. A folder that names no target
//! fails the test rather than being skipped.
// Each target includes fuzz/fuzz_targets/common.rs for itself, as cargo-fuzz builds it.
#![allow(clippy::duplicate_mod)]

#[path = "../../../fuzz/fuzz_targets/decode_protobuf.rs"]
mod decode_protobuf;
#[path = "../../../fuzz/fuzz_targets/device_ops.rs"]
mod device_ops;
#[path = "../../../fuzz/fuzz_targets/link_frame.rs"]
mod link_frame;
#[path = "../../../fuzz/fuzz_targets/objgraph_decode.rs"]
mod objgraph_decode;
#[path = "../../../fuzz/fuzz_targets/roundtrip.rs"]
mod roundtrip;
#[path = "../../../fuzz/fuzz_targets/schema_proto.rs"]
mod schema_proto;
#[path = "../../../fuzz/fuzz_targets/schema_table.rs"]
mod schema_table;

/// The check of the fuzz target named `name` (a folder of fuzz/regressions).
fn target(name: &str) -> Option<fn(&[u8])> {
    Some(match name {
        "decode_protobuf" => decode_protobuf::check,
        "device_ops" => device_ops::check,
        "link_frame" => link_frame::check,
        "objgraph_decode" => objgraph_decode::check,
        "roundtrip" => roundtrip::check,
        "schema_proto" => schema_proto::check,
        "schema_table" => schema_table::check,
        _ => return None,
    })
}

#[test]
fn every_fuzz_regression_replays() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/regressions");
    let mut replayed = 0;
    for dir in std::fs::read_dir(&root).unwrap_or_else(|e| panic!("{}: {e}", root.display())) {
        let dir = dir.unwrap().path();
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        let check = target(&name).unwrap_or_else(|| panic!("fuzz/regressions/{name}: no fuzz target of that name"));
        for f in std::fs::read_dir(&dir).unwrap() {
            let f = f.unwrap().path();
            let data = std::fs::read(&f).unwrap();
            // A panic names the input.
            let r = std::panic::catch_unwind(|| check(&data));
            assert!(r.is_ok(), "{} fails its fuzz target's check again", f.display());
            replayed += 1;
        }
    }
    assert!(replayed > 0, "no regression inputs under {}", root.display());
}

#[test]
fn every_fuzz_target_is_replayed() {
    // A target added to fuzz/Cargo.toml must be added here too, or its regressions
    // would fail as unknown.
    let manifest = std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/Cargo.toml")).unwrap();
    for line in manifest.lines() {
        if let Some(name) = line.strip_prefix("name = \"").and_then(|l| l.strip_suffix('"')) {
            if name != "heapwire-fuzz" {
                assert!(target(name).is_some(), "fuzz target {name} is not replayed by this test");
            }
        }
    }
}

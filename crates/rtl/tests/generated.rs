//! The committed example core `rtl/gen/unit_core.gen.v` (linted by scripts/test_rtl.sh)
//! must be what the generator writes today. Regenerate with
//! `cargo run -p heapwire-rtl --example gencore -- crates/cpu/testdata/unit.proto /tmp/g && cp /tmp/g/schema_core.gen.v rtl/gen/unit_core.gen.v`.

use std::path::Path;

#[test]
fn committed_example_core_is_fresh() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let p = root.join("crates/cpu/testdata/unit.proto");
    let s = heapwire_schema::compile_files(&[p.clone()], &[p.parent().unwrap().to_path_buf()], Default::default()).unwrap();
    let want = heapwire_rtl::generate(&s, "schema");
    let have = std::fs::read_to_string(root.join("rtl/gen/unit_core.gen.v")).unwrap();
    assert!(have == want, "rtl/gen/unit_core.gen.v is stale: regenerate it (see this test's header)");
}

#[test]
fn generated_core_names_every_field() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let p = root.join("bench/schemas/social.proto");
    let s = heapwire_schema::compile_files(&[p.clone()], &[p.parent().unwrap().to_path_buf()], Default::default()).unwrap();
    heapwire_rtl::check_supported(&s).unwrap();
    let v = heapwire_rtl::generate(&s, "social");
    let n: usize = s.messages.iter().map(|m| m.fields.len()).sum();
    assert_eq!(v.matches("f_hit = 1'b1;").count(), n);
    assert!(v.contains("module heapwire_core"));
}

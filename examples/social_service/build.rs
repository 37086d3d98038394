//! Build-time code from `proto/social_service.proto` (imports `bench/schemas/social.proto`):
//!
//! * for the tonic+prost baseline: prost message structs and tonic's server and client,
//!   the way a Rust user writes a gRPC service today (protox parses the schema, so no
//!   protoc is needed; tonic-prost-build generates the Rust);
//! * for heapwire: the compiled schema as a table file (`social_service.hwsc`, embedded
//!   by `schema.rs`) and the generated read-only Rust views over its images
//!   (`social_service_views.gen.rs`), both from the same file.
use std::path::PathBuf;

fn main() {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let proto_dir = manifest.join("proto");
    let schemas_dir = manifest.join("../../bench/schemas");
    let service = proto_dir.join("social_service.proto");
    for p in [&service, &schemas_dir.join("social.proto")] {
        println!("cargo:rerun-if-changed={}", p.display());
    }
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("OUT_DIR is set by cargo"));

    let fds = protox::compile([&service], [&proto_dir, &schemas_dir]).expect("protox: compiling social_service.proto");
    tonic_prost_build::configure()
        .build_client(true)
        .build_server(true)
        .compile_fds(fds)
        .expect("tonic-prost-build: generating the prost baseline");

    let layout = heapwire_schema::LayoutOptions::default();
    let compiled = heapwire_schema::compile_files(&[service], &[proto_dir, schemas_dir], layout)
        .expect("heapwire: compiling social_service.proto");
    std::fs::write(out.join("social_service.hwsc"), heapwire_schema::table_file::write(&compiled)).expect("writing the table file");
    // Wrapped in a module so the generated file's inner attributes stay at a module's start.
    let views = format!("pub mod views {{\n{}\n}}\n", heapwire_emit::rust_views(&compiled));
    std::fs::write(out.join("social_service_views.gen.rs"), views).expect("writing the Rust views");
}

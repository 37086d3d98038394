//! Generates prost message structs for the bench schemas at build time.
//! The schemas are parsed by protox (a protobuf compiler in Rust), so no
//! protoc is needed; prost-build turns the descriptor set into Rust.
use std::path::PathBuf;

const SCHEMAS: &[&str] = &[
    "social.proto",
    "google_message1.proto",
    "google_message2.proto",
    "every_kind.proto",
];

fn main() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../schemas");
    for s in SCHEMAS {
        println!("cargo:rerun-if-changed={}", dir.join(s).display());
    }
    let fds = protox::compile(SCHEMAS, [&dir]).expect("protox: compiling bench schemas");
    prost_build::Config::new()
        .compile_fds(fds)
        .expect("prost-build: generating Rust for bench schemas");
}

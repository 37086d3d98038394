// Schemas the fuzz targets decode against, compiled once per process.
use std::path::PathBuf;
use std::sync::OnceLock;

use heapwire_schema::{compile_files, CompiledSchema, LayoutOptions};

pub fn schemas() -> &'static [(CompiledSchema, usize)] {
    static S: OnceLock<Vec<(CompiledSchema, usize)>> = OnceLock::new();
    S.get_or_init(|| {
        let root = repo_root();
        let mut v = Vec::new();
        for (dir, file, ty) in [
            ("crates/cpu/testdata", "unit.proto", "unit.Node"),
            ("crates/cpu/testdata", "unit2.proto", "unit2.Req"),
            ("bench/schemas", "social.proto", "heapwire.bench.social.StorePostRequest"),
        ] {
            let d = root.join(dir);
            let s = compile_files(&[d.join(file)], &[d], LayoutOptions::default()).expect("fuzz schema");
            let i = s.message_index(ty).expect("fuzz type");
            v.push((s, i));
        }
        v
    })
}

/// The repository root, from the fuzz crate or from a test crate that includes the
/// targets (crates/cli/tests/fuzz_regressions.rs).
pub fn repo_root() -> PathBuf {
    let mut p = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    while !p.join("fuzz/fuzz_targets").is_dir() {
        assert!(p.pop(), "no repository root above {}", env!("CARGO_MANIFEST_DIR"));
    }
    p
}

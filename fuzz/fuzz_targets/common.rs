// Schemas the fuzz targets decode against, compiled once per process.
use std::path::PathBuf;
use std::sync::OnceLock;

use heapwire_schema::{compile_files, CompiledSchema, LayoutOptions};

pub fn schemas() -> &'static [(CompiledSchema, usize)] {
    static S: OnceLock<Vec<(CompiledSchema, usize)>> = OnceLock::new();
    S.get_or_init(|| {
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
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

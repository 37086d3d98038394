//! The committed example cores `rtl/gen/unit_core.gen.v` (protobuf, for
//! `crates/cpu/testdata/unit.proto`) and `rtl/gen/expr_og_core.gen.v` (objgraph, for
//! `examples/expression_tree/expr.proto`, 64-bit layout), which scripts/test_rtl.sh lints
//! and scripts/synth.sh synthesizes, must be what the generators write today.
//! Regenerate both with `HEAPWIRE_REGEN=1 cargo test -p heapwire-emit --test verilog committed`.

use std::path::{Path, PathBuf};

use heapwire_emit::verilog::{objgraph, protobuf};
use heapwire_schema::{compile_files, CompiledSchema, LayoutOptions};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn schema(rel: &str) -> CompiledSchema {
    let p = root().join(rel);
    compile_files(std::slice::from_ref(&p), &[p.parent().unwrap().to_path_buf()], LayoutOptions::default()).unwrap()
}

/// `rtl/gen/<file>` holds `want`, or is rewritten to with HEAPWIRE_REGEN set.
fn check_fresh(file: &str, want: &str) {
    let p = root().join("rtl/gen").join(file);
    if std::env::var_os("HEAPWIRE_REGEN").is_some() {
        std::fs::write(&p, want).unwrap();
    }
    let have = std::fs::read_to_string(&p).unwrap_or_default();
    assert!(have == want, "rtl/gen/{file} is stale: regenerate it (see this test's header)");
}

#[test]
fn committed_example_core_is_fresh() {
    check_fresh("unit_core.gen.v", &protobuf::generate(&schema("crates/cpu/testdata/unit.proto"), "schema"));
}

#[test]
fn committed_example_og_core_is_fresh() {
    check_fresh("expr_og_core.gen.v", &objgraph::generate(&schema("examples/expression_tree/expr.proto"), "expr"));
}

#[test]
fn generated_core_names_every_field() {
    let s = schema("bench/schemas/social.proto");
    protobuf::check_supported(&s).unwrap();
    let v = protobuf::generate(&s, "social");
    let n: usize = s.messages.iter().map(|m| m.fields.len()).sum();
    assert_eq!(v.matches("rp = rp | (").count(), n, "one row per field");
    assert!(v.contains("module heapwire_core"));
}

/// The ports of module `name` in generated Verilog `v` (the names in its port list).
fn ports<'a>(v: &'a str, name: &str) -> Vec<&'a str> {
    let start = v.find(&format!("module {name} #(")).expect("the wrapper module");
    let list = &v[start..];
    let list = &list[list.find(") (").expect("its port list") + 3..];
    let list = &list[..list.find(");").unwrap()];
    list.split([',', '\n']).filter_map(|d| d.split_whitespace().last()).filter(|n| !n.starts_with("//")).collect()
}

#[test]
fn testbenches_connect_every_port_of_the_wrappers() {
    use heapwire_emit::testbench::{self, Memories};
    let m = Memories { in_aw: 10, out_aw: 12, in_width: 64, out_width: 256 };
    let s = schema("examples/expression_tree/expr.proto");
    let pb = testbench::protobuf::testbench(&testbench::protobuf::Params {
        memories: m,
        max_depth: 100,
        inst_bits: 12,
        cnt_bits: 13,
        st_bits: 13,
        one_pass: true,
        out2_wr: true,
        tables: false,
    });
    let og = testbench::objgraph::testbench(&s, &testbench::objgraph::Params { memories: m, obj_bits: 8 });
    if std::env::var_os("HEAPWIRE_SHOW_TB").is_some() {
        println!("{pb}\n{og}");
    }
    for (tb, v, module) in [(&pb, protobuf::generate(&s, "expr"), "heapwire_core"), (&og, objgraph::generate(&s, "expr"), "heapwire_og_core")] {
        let ports = ports(&v, module);
        assert!(ports.len() > 20, "{module}: {ports:?}");
        for p in ports {
            assert_eq!(tb.matches(&format!(".{p}(")).count(), 1, "{module}: port {p} connected once");
        }
    }
}

/// The direct span rule of the run-time-loaded field table (docs/hardware.md "Run-time-loaded
/// tables"), and the load sizes docs/hardware.md and BENCHMARKS.md quote.
#[test]
fn loadable_tables_layout_and_sizes() {
    use protobuf::{direct_span, table_image, TableLimits};
    assert_eq!(direct_span(&[1, 2, 3]), 3);
    assert_eq!(direct_span(&[3, 1, 2, 2047, 536870911]), 3, "sparse numbers go to overflow keys");
    assert_eq!(direct_span(&[18]), 18, "up to 16 holes besides twice the fields");
    assert_eq!(direct_span(&[19]), 0);
    assert_eq!(direct_span(&[]), 0);
    let diff = |f: &str| -> CompiledSchema {
        let p = root().join("tests/differential/schemas").join(f);
        compile_files(std::slice::from_ref(&p), &[p.parent().unwrap().to_path_buf()], LayoutOptions::default()).unwrap()
    };
    let limits = TableLimits::default();
    for (s, words) in [(schema("bench/schemas/social.proto"), 276), (diff("scalars3.proto"), 859), (diff("proto2.proto"), 342)] {
        assert_eq!(table_image(&s, &limits).unwrap().len(), words, "{}: table words (docs quote them)", s.messages[0].full_name);
    }
}

/// `write_core` removes an optional output (the table image, the objgraph core) that an
/// earlier run left when this schema does not get it, and writes both when it does.
#[test]
fn write_core_leaves_no_stale_optional_outputs() {
    let dir = std::env::temp_dir().join(format!("heapwire-emit-stale-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // 70 sparse field numbers: more overflow keys than the default 64, and no classes
    let fields: String = (1..=70).map(|i| format!("  int32 f{i} = {};\n", 100_000 + i * 1000)).collect();
    let proto = dir.join("sparse.proto");
    std::fs::write(&proto, format!("syntax = \"proto3\";\npackage sp;\nmessage M {{\n{fields}}}\n")).unwrap();
    let sparse = compile_files(std::slice::from_ref(&proto), std::slice::from_ref(&dir), LayoutOptions::default()).unwrap();
    let (tables, og) = (dir.join("x_core_tables.gen.hex"), dir.join("x_og_core.gen.v"));
    std::fs::write(&tables, "stale").unwrap();
    std::fs::write(&og, "stale").unwrap();
    heapwire_emit::verilog::write_core(&sparse, "x", &dir).unwrap();
    assert!(dir.join("x_core.gen.v").exists());
    assert!(!tables.exists(), "a table image the schema does not fit was left behind");
    assert!(!og.exists(), "an objgraph core for a schema without classes was left behind");
    heapwire_emit::verilog::write_core(&schema("bench/schemas/social.proto"), "x", &dir).unwrap();
    assert!(tables.exists(), "the table image is written when the schema fits");
    heapwire_emit::verilog::write_core(&schema("examples/expression_tree/expr.proto"), "x", &dir).unwrap();
    assert!(og.exists(), "the objgraph core is written for a schema with classes");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The names in rtl/<core>.f (the list the scripts and testbenches read), in order.
fn file_list(core: &str) -> Vec<String> {
    let path = root().join("rtl").join(format!("{core}.f"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with("//")).map(String::from).collect()
}

#[test]
fn embedded_sources_are_the_file_lists() {
    // a module added to a core must be in both, or compile --rtl writes a core the scripts
    // cannot build (or the other way round)
    for (core, module, sources) in [("hw_pb_core", "protobuf", protobuf::SOURCES), ("hw_og_core", "objgraph", objgraph::SOURCES)] {
        let embedded: Vec<String> = sources.iter().map(|(name, _)| name.to_string()).collect();
        assert_eq!(embedded, file_list(core), "verilog::{module}::SOURCES differs from rtl/{core}.f");
    }
}

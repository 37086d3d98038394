//! `include/heapwire.h` cannot drift from the library: its code list is the one
//! generated from `RejectKind::ALL` (`examples/update_header.rs` rewrites it), every
//! `#[no_mangle]` function of `src/lib.rs` and `src/device.rs` has its prototype there, with the C types its
//! Rust signature maps to and the same parameter names (and the header declares nothing
//! else).

use std::collections::BTreeMap;

const HEADER: &str = include_str!("../include/heapwire.h");
/// The files that export functions: the C API and its device part.
const SOURCES: [&str; 2] = [include_str!("../src/lib.rs"), include_str!("../src/device.rs")];

/// (return type, [(type, name)]) of a function, C types normalized.
type Sig = (String, Vec<(String, String)>);

fn norm(c: &str) -> String {
    c.replace('*', " * ").split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The C type a Rust FFI type maps to.
fn c_type(rust: &str) -> String {
    let t = rust.trim();
    for (prefix, is_const) in [("*const ", true), ("*mut ", false)] {
        if let Some(inner) = t.strip_prefix(prefix) {
            let c = if is_const { "const " } else { "" };
            return if inner.trim_start().starts_with('*') {
                format!("{} {c}*", c_type(inner))
            } else {
                format!("{c}{} *", c_type(inner))
            };
        }
    }
    let base = match t.rsplit("::").next().unwrap() {
        "c_char" => "char",
        "c_void" => "void",
        "u8" => "uint8_t",
        "u32" => "uint32_t",
        "i32" => "int32_t",
        "u64" => "uint64_t",
        "i64" => "int64_t",
        "usize" => "size_t",
        "HwSchema" => "hw_schema",
        "HwError" => "hw_error",
        "HwDevice" => "hw_device",
        "HwDeviceOptions" => "hw_device_options",
        "HwDeviceInfo" => "hw_device_info",
        "HwDeviceStats" => "hw_device_stats",
        "HwDeviceSlot" => "hw_device_slot",
        other => panic!("no C type for Rust type `{other}` in an exported signature: extend tests/header.rs"),
    };
    base.to_string()
}

fn rust_functions() -> BTreeMap<String, Sig> {
    let mut out = BTreeMap::new();
    for chunk in SOURCES.iter().flat_map(|s| s.split("#[no_mangle]").skip(1)) {
        let at = chunk.find("fn ").expect("fn after #[no_mangle]");
        let rest = &chunk[at + 3..];
        let open = rest.find('(').unwrap();
        let name = rest[..open].trim().to_string();
        let close = rest.find(')').unwrap();
        let params = rest[open + 1..close]
            .split(',')
            .map(str::trim)
            .filter(|p| !p.is_empty())
            .map(|p| {
                let (n, t) = p.split_once(':').expect("name: type");
                (norm(&c_type(t)), n.trim().to_string())
            })
            .collect();
        let tail = &rest[close + 1..rest.find('{').unwrap()];
        let ret = match tail.split_once("->") {
            Some((_, t)) => norm(&c_type(t)),
            None => "void".to_string(),
        };
        assert!(chunk[..at].contains("extern \"C\""), "{name}: not extern \"C\"");
        assert!(out.insert(name.clone(), (ret, params)).is_none(), "{name} twice");
    }
    out
}

fn strip_comments(s: &str) -> String {
    let mut out = String::new();
    let mut rest = s;
    while let Some(i) = rest.find("/*") {
        out += &rest[..i];
        rest = &rest[i + rest[i..].find("*/").expect("closed comment") + 2..];
    }
    out += rest;
    out.lines().filter(|l| !l.trim_start().starts_with('#') && !l.trim_start().starts_with("//")).collect::<Vec<_>>().join("\n")
}

fn header_functions() -> BTreeMap<String, Sig> {
    let mut out = BTreeMap::new();
    for stmt in strip_comments(HEADER).split(';') {
        // What follows the last brace: drops `extern "C" {` and closed enum bodies.
        let stmt = stmt.rsplit(['{', '}']).next().unwrap().trim();
        let Some(open) = stmt.find('(') else { continue };
        let head = stmt[..open].trim_end();
        let name_at = head.rfind(|c: char| !(c.is_alphanumeric() || c == '_')).map(|i| i + 1).unwrap_or(0);
        let name = head[name_at..].to_string();
        assert!(name.starts_with("hw_"), "declaration `{stmt}` is not an hw_ function");
        let close = stmt.rfind(')').unwrap();
        let params = stmt[open + 1..close]
            .split(',')
            .map(str::trim)
            .filter(|p| !p.is_empty() && *p != "void")
            .map(|p| {
                let n_at = p.rfind(|c: char| !(c.is_alphanumeric() || c == '_')).expect("type and name") + 1;
                (norm(&p[..n_at]), p[n_at..].to_string())
            })
            .collect();
        assert!(out.insert(name.clone(), (norm(&head[..name_at]), params)).is_none(), "{name} declared twice");
    }
    out
}

#[test]
fn code_list_is_generated_from_the_reject_kinds() {
    let fresh = heapwire::with_codes(HEADER).expect("heapwire.h has BEGIN CODES, enum hw_code and END CODES");
    assert!(
        fresh == HEADER,
        "include/heapwire.h's code list is stale: run `cargo run -p heapwire-capi --example update_header`\nexpected:\n{}",
        heapwire::codes_block()
    );
    // And the generator covers every kind, with its stable number.
    for k in heapwire_engine::RejectKind::ALL {
        assert!(HEADER.contains(&format!("  HW_{} = {},\n", k.name().to_ascii_uppercase(), k.code())), "{k}");
    }
    assert!(HEADER.contains(&format!("HW_WIRE_PROTOBUF = {}, HW_WIRE_OBJGRAPH = {}", heapwire::HW_WIRE_PROTOBUF, heapwire::HW_WIRE_OBJGRAPH)));
}

#[test]
fn every_exported_function_has_its_prototype() {
    let rust = rust_functions();
    let c = header_functions();
    assert!(rust.len() >= 32, "parsed only {} exported functions", rust.len());
    for (name, sig) in &rust {
        let Some(h) = c.get(name) else { panic!("{name} is exported but not declared in include/heapwire.h") };
        assert_eq!(h, sig, "{name}: header prototype (left) differs from the Rust signature (right)");
    }
    for name in c.keys() {
        assert!(rust.contains_key(name), "include/heapwire.h declares {name}, which the library does not export");
    }
}

#[test]
fn the_parsers_see_a_drift() {
    // A changed parameter type and a missing function must both show.
    let h = header_functions();
    let mut r = rust_functions();
    r.get_mut("hw_decode").unwrap().1[3].0 = norm("const char *");
    assert_ne!(h.get("hw_decode"), r.get("hw_decode"));
    assert_eq!(c_type("*const *const c_char"), "const char * const *");
    assert_eq!(norm(&c_type("*mut HwSchema")), "hw_schema *");
}

/// The fields of a `typedef struct NAME { ... } NAME;` of the header, in order.
fn struct_fields(name: &str) -> Vec<(String, String)> {
    let body = strip_comments(HEADER);
    let at = body.find(&format!("typedef struct {name} {{")).unwrap_or_else(|| panic!("struct {name} in the header"));
    let open = at + body[at..].find('{').unwrap();
    let close = open + body[open..].find('}').unwrap();
    let mut out = Vec::new();
    for decl in body[open + 1..close].split(';').map(str::trim).filter(|d| !d.is_empty()) {
        // `TYPE a, b[4]`: TYPE ends where the first declarator's name starts
        let first = decl.split(',').next().unwrap();
        let bare = first.split('[').next().unwrap().trim_end();
        let n_at = bare.rfind(|c: char| !(c.is_alphanumeric() || c == '_')).expect("type and names") + 1;
        let ty = norm(&first[..n_at]);
        out.push((ty.clone(), first[n_at..].trim().to_string()));
        for n in decl.split(',').skip(1) {
            out.push((ty.clone(), n.trim().to_string()));
        }
    }
    out
}

#[test]
fn device_structs_match_the_library() {
    let names = |s: &str| struct_fields(s).into_iter().map(|(_, n)| n).collect::<Vec<_>>();
    // the counters: one uint64_t per counter register, in register order
    let stats = struct_fields("hw_device_stats");
    assert!(stats.iter().all(|(t, _)| t == "uint64_t"), "{stats:?}");
    assert_eq!(names("hw_device_stats"), heapwire::STATS_FIELDS);
    assert_eq!(names("hw_device_stats"), heapwire_device::regs::COUNTER_NAMES);
    assert_eq!(std::mem::size_of::<heapwire::HwDeviceStats>(), 8 * stats.len());
    // the header block: one uint32_t per register after the magic
    let info = struct_fields("hw_device_info");
    assert!(info.iter().all(|(t, _)| t == "uint32_t"), "{info:?}");
    assert_eq!(info.len() + 1, heapwire_device::regs::HEADER_WORDS as usize);
    assert_eq!(std::mem::size_of::<heapwire::HwDeviceInfo>(), 4 * info.len());
    assert_eq!(names("hw_device_info"), ["version", "caps", "slots", "in_bytes", "out_bytes", "ptr_widths", "engine", "type_regs", "table_bytes", "time_unit"]);
    assert_eq!(
        struct_fields("hw_device_options"),
        [("uint32_t", "inflight"), ("uint32_t", "timeout_ms"), ("const char *", "key_file")].map(|(t, n)| (t.to_string(), n.to_string()))
    );
    assert_eq!(names("hw_device_slot"), ["state", "checksum", "table_len", "types", &format!("name[{}]", heapwire_device::regs::NAME_BYTES + 1)]);
}

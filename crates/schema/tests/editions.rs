//! Editions compile to exactly the tables of the equivalent proto2/proto3 schema (so every
//! engine, the C header, the Rust views and the Verilog follow without knowing editions),
//! and features are resolved file → message → oneof → field, enums file → enum.

use std::path::PathBuf;

use heapwire_schema::*;

fn compile(name: &str, text: &str) -> Result<CompiledSchema, SchemaError> {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join(name);
    std::fs::write(&p, text).unwrap();
    compile_files(&[p], &[], LayoutOptions::default())
}

/// The table file with the "declared in a proto3 file" bit cleared (an editions file is
/// not a proto3 file; no engine reads the bit).
fn tables(mut s: CompiledSchema) -> Vec<u8> {
    for m in &mut s.messages {
        m.flags &= !message_flags::PROTO3;
    }
    table_file::write(&s)
}

const PROTO2: &str = r#"
syntax = "proto2";
package eq;
enum Color { RED = 1; GREEN = 2; }
message M {
  optional int32 a = 1 [default = 7];
  required string s = 2;
  repeated int32 r = 3;
  repeated int32 rp = 4 [packed = true];
  optional Color c = 5;
  repeated Color rc = 6;
  optional group Sub = 7 { optional int32 v = 1; }
  optional M next = 8;
  map<string, Color> m = 9;
  oneof o { bytes ob = 10; M om = 11; }
  optional bytes b = 12 [default = "x\001"];
  extensions 100 to 199;
}
"#;

const EDITION_AS_PROTO2: &str = r#"
edition = "2023";
package eq;
option features.enum_type = CLOSED;
option features.repeated_field_encoding = EXPANDED;
option features.utf8_validation = NONE;
enum Color { RED = 1; GREEN = 2; }
message M {
  int32 a = 1 [default = 7];
  string s = 2 [features.field_presence = LEGACY_REQUIRED];
  repeated int32 r = 3;
  repeated int32 rp = 4 [features.repeated_field_encoding = PACKED];
  Color c = 5;
  repeated Color rc = 6;
  message Sub { int32 v = 1; }
  Sub sub = 7 [features.message_encoding = DELIMITED];
  M next = 8;
  map<string, Color> m = 9;
  oneof o { bytes ob = 10; M om = 11; }
  bytes b = 12 [default = "x\001"];
  extensions 100 [declaration = { number: 100, full_name: ".eq.ext", type: "int32" }];
  extensions 101 to 199;
}
"#;

const PROTO3: &str = r#"
syntax = "proto3";
package eq;
enum Kind { K0 = 0; K1 = 1; }
message Inner { string name = 1; }
message M {
  int32 a = 1;
  string s = 2;
  repeated sint64 r = 3;
  repeated int32 ru = 4 [packed = false];
  Kind k = 5;
  repeated Kind rk = 6;
  Inner inner = 7;
  optional int32 opt = 8;
  map<int32, Inner> m = 9;
  oneof o { string os = 10; Inner oi = 11; }
  double d = 12;
}
"#;

const EDITION_AS_PROTO3: &str = r#"
edition = "2024";
package eq;
option features.field_presence = IMPLICIT;
enum Kind { K0 = 0; K1 = 1; }
message Inner { string name = 1; }
message M {
  int32 a = 1;
  string s = 2;
  repeated sint64 r = 3;
  repeated int32 ru = 4 [features.repeated_field_encoding = EXPANDED];
  Kind k = 5;
  repeated Kind rk = 6;
  Inner inner = 7;
  int32 opt = 8 [features.field_presence = EXPLICIT];
  map<int32, Inner> m = 9;
  oneof o { string os = 10; Inner oi = 11; }
  double d = 12;
}
"#;

#[test]
fn edition_2023_with_proto2_features_gives_the_proto2_tables() {
    let a = compile("p2.proto", PROTO2).unwrap();
    let b = compile("e2.proto", EDITION_AS_PROTO2).unwrap();
    assert_eq!(a, b);
    assert_eq!(tables(a), tables(b));
}

#[test]
fn edition_2024_with_proto3_features_gives_the_proto3_tables() {
    let a = compile("p3.proto", PROTO3).unwrap();
    let b = compile("e3.proto", EDITION_AS_PROTO3).unwrap();
    assert_eq!(tables(a), tables(b));
}

#[test]
fn defaults_and_overrides_at_each_level() {
    let s = compile(
        "lv.proto",
        r#"
edition = "2023";
package lv;
option features.utf8_validation = NONE;
enum Open { O0 = 0; }
enum Closed { option features.enum_type = CLOSED; C1 = 1; }
message M {
  string s = 1;
  string v = 2 [features.utf8_validation = VERIFY];
  repeated int32 p = 3;
  Open o = 4;
  Closed c = 5;
  message N { string t = 1; repeated int32 q = 2 [features.repeated_field_encoding = EXPANDED]; }
  N n = 6 [features.message_encoding = DELIMITED];
  map<string, string> m = 7 [features.utf8_validation = VERIFY];
  oneof x { int32 xa = 8; }
  int32 e = 9;
}
"#,
    )
    .unwrap();
    let m = &s.messages[s.message_index("lv.M").unwrap()];
    let f = |n: u32| &m.fields[m.field_index(n).unwrap()];
    assert!(!f(1).validates_utf8(), "file-level NONE");
    assert!(f(2).validates_utf8(), "field-level VERIFY");
    assert!(f(3).is_packed(), "2023 default PACKED");
    assert!(!f(4).is_closed_enum() && f(5).is_closed_enum(), "enum-level CLOSED");
    assert!(!s.enums[0].closed && s.enums[1].closed);
    assert_eq!(f(6).kind, Kind::Group, "DELIMITED is group encoding");
    assert!(matches!(f(8).presence, Presence::Oneof(0)));
    assert!(matches!(f(9).presence, Presence::HasBit(_)), "2023 default EXPLICIT");
    let n = &s.messages[s.message_index("lv.M.N").unwrap()];
    assert!(!n.fields[0].validates_utf8() && !n.fields[1].is_packed(), "nested message inherits the file's");
    let entry = &s.messages[s.message_index("lv.M.MEntry").unwrap()];
    assert!(entry.fields.iter().all(|f| f.validates_utf8()), "map entry fields resolve from the map field");
}

#[test]
fn refusals_name_file_feature_and_value() {
    let e = compile("r.proto", "edition = \"2023\";\nmessage M { M m = 1 [features.field_presence = IMPLICIT]; }\n")
        .unwrap_err()
        .to_string();
    assert!(e.contains("r.proto") && e.contains("M.m") && e.contains("field_presence") && e.contains("IMPLICIT"), "{e}");
    let e = compile("r.proto", "edition = \"2025\";\n").unwrap_err().to_string();
    assert!(e.contains("r.proto") && e.contains("2025"), "{e}");
}

#[test]
fn current_descriptor_proto_extension_range_declarations_parse() {
    // Single-number extension ranges with options, as in the current descriptor.proto.
    let s = compile(
        "d.proto",
        "syntax = \"proto2\";\npackage d;\nmessage O {\n  extensions 1000 to max;\n  extensions 536000000 [declaration = { number: 536000000, type: \".d.O\", full_name: \".d.x\" }];\n}\n",
    );
    assert!(s.is_ok(), "{:?}", s.err());
    let _ = PathBuf::new();
}

#[test]
fn edition_2024_visibility_on_nested_declarations_changes_nothing() {
    let with = r#"
edition = "2024";
package vis;
export message M {
  export message N { int32 a = 1; }
  local enum E { E0 = 0; E1 = 1; }
  N n = 2;
  E e = 3;
}
local message L { M m = 1; }
"#;
    let without = with.replace("export message", "message").replace("local enum", "enum").replace("local message", "message");
    let a = compile("vis.proto", with).expect("protoc accepts this file");
    let b = compile("vis.proto", &without).expect("the same without visibility");
    assert_eq!(tables(a), tables(b));
}

/// Edition 2024's naming-style and visibility features, at every level protoc allows
/// them: they need the current descriptor.proto, which the compiler carries, and change
/// no table.
fn naming_and_visibility() -> String {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    std::fs::read_to_string(root.join("crates/schema/testdata/naming2024.proto")).unwrap()
}

fn without_naming_and_visibility() -> String {
    naming_and_visibility()
        .lines()
        .filter(|l| !l.contains("option features."))
        .map(|l| l.replace(" [features.enforce_naming_style = STYLE_LEGACY]", "").replace("local message", "message"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn edition_2024_naming_style_and_visibility_features_change_nothing() {
    let a = compile("ns.proto", &naming_and_visibility()).expect("protoc accepts this file");
    let b = compile("ns.proto", &without_naming_and_visibility()).unwrap();
    assert_eq!(tables(a.clone()), tables(b));
    // descriptor.proto, loaded to interpret the options, is not compiled in: the file
    // does not import it.
    assert!(a.messages.iter().all(|m| m.full_name.starts_with("ns.v1.")), "{:?}", a.messages);
}

/// The bundled descriptor.proto with `enforce_naming_style` cut out: an older copy.
fn old_descriptor_proto() -> String {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let s = std::fs::read_to_string(root.join("vendor/protobuf/google/protobuf/descriptor.proto")).unwrap();
    let i = s.find("  optional EnforceNamingStyle enforce_naming_style = 7").unwrap();
    let j = i + s[i..].find("];").unwrap() + 2;
    format!("{}{}", &s[..i], &s[j..])
}

#[test]
fn include_path_descriptor_proto_is_used_only_when_imported_as_protoc_does() {
    let dir = tempfile::tempdir().unwrap();
    let gp = dir.path().join("google/protobuf");
    std::fs::create_dir_all(&gp).unwrap();
    std::fs::write(gp.join("descriptor.proto"), old_descriptor_proto()).unwrap();
    let file = "edition = \"2024\";\npackage n;\noption features.enforce_naming_style = STYLE_LEGACY;\nmessage M { int32 a = 1; }\n";
    let with_import = file.replace("package n;\n", "package n;\nimport \"google/protobuf/descriptor.proto\";\n");
    let incs = [dir.path().to_path_buf()];
    // Not imported: the built-in (current) descriptor.proto interprets the options.
    std::fs::write(dir.path().join("n.proto"), file).unwrap();
    let s = compile_files(&[dir.path().join("n.proto")], &incs, LayoutOptions::default()).expect("protoc accepts this");
    assert_eq!(s.messages.len(), 1);
    // Imported: the include path's copy, which lacks the feature (protoc refuses too).
    std::fs::write(dir.path().join("n.proto"), &with_import).unwrap();
    let e = compile_files(&[dir.path().join("n.proto")], &incs, LayoutOptions::default()).unwrap_err().to_string();
    assert!(e.contains("features.enforce_naming_style"), "{e}");
    // Imported with no copy on the include path: the built-in one, compiled in.
    let other = tempfile::tempdir().unwrap();
    std::fs::write(other.path().join("n.proto"), &with_import).unwrap();
    let s = compile_files(&[other.path().join("n.proto")], &[], LayoutOptions::default()).unwrap();
    assert!(s.message_index("google.protobuf.FeatureSet").is_some());
}

#[test]
fn language_feature_protos_are_built_in() {
    // protoc finds these in its own include directory; so does heapwire, with no -I.
    let with = r#"
edition = "2024";
package lf;
import option "google/protobuf/cpp_features.proto";
import option "google/protobuf/java_features.proto";
import option "google/protobuf/go_features.proto";
option features.(pb.cpp).enum_name_uses_string_view = true;
option features.(pb.go).api_level = API_OPAQUE;
enum E { option features.enum_type = CLOSED; E_ONE = 1; }
message M {
  option features.(pb.java).nest_in_file_class = YES;
  string s = 1 [features.(pb.cpp).string_type = VIEW];
  E e = 2;
}
"#;
    let a = compile("lf.proto", with).expect("protoc accepts this file");
    let b = compile("lf.proto", &with.replace(" [features.(pb.cpp).string_type = VIEW]", "")).unwrap();
    // The same messages (lf's and those of the imported files), the same tables.
    assert_eq!(tables(a), tables(b));
}

#[test]
fn a_copy_of_descriptor_proto_under_another_name_compiles() {
    // `heapwire compile .../google/protobuf/descriptor.proto` with no -I names the file
    // `descriptor.proto`; it declares what the preloaded descriptor.proto does, so it is
    // compiled on its own, as protoc does. So is a file reusing one of those names.
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let src = std::fs::read_to_string(root.join("vendor/protobuf/google/protobuf/descriptor.proto")).unwrap();
    let s = compile("descriptor.proto", &src).expect("protoc accepts this file");
    assert!(s.message_index("google.protobuf.FileDescriptorSet").is_some());
    let s = compile("clash.proto", "syntax = \"proto3\";\npackage google.protobuf;\nmessage FileOptions { int32 x = 1; }\n")
        .expect("protoc accepts this file");
    assert_eq!(s.messages.len(), 1);
}

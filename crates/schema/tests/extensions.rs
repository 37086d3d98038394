//! Extensions are fields of their extendee's table: named by their bracketed full name,
//! with the flags of the file that declares them.

use heapwire_schema::*;

#[test]
fn extensions_get_slots_in_their_extendee() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("base.proto"),
        "syntax = \"proto2\";\npackage b;\nmessage Base { optional int32 a = 1; extensions 100 to max; }\n\
         extend Base { repeated int32 p = 100 [packed = true]; optional group G = 101 { optional int32 g = 1; } }\n",
    )
    .unwrap();
    let top = dir.path().join("top.proto");
    std::fs::write(
        &top,
        "edition = \"2023\";\npackage t;\nimport \"base.proto\";\n\
         message Scope { extend b.Base { repeated int32 q = 102; string s = 103; b.G d = 104 [features.message_encoding = DELIMITED]; } }\n",
    )
    .unwrap();
    let s = compile_files(&[top], &[dir.path().to_path_buf()], LayoutOptions::default()).unwrap();
    let m = &s.messages[s.message_index("b.Base").unwrap()];
    let names: Vec<&str> = m.fields.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["a", "[b.p]", "[b.g]", "[t.Scope.q]", "[t.Scope.s]", "[t.Scope.d]"]);
    let f = |n: u32| &m.fields[m.field_index(n).unwrap()];
    assert!(f(100).is_extension() && !f(1).is_extension());
    assert_eq!(f(100).json_name, "[b.p]");
    assert!(f(100).is_packed(), "[packed = true] in proto2");
    assert_eq!(f(101).kind, Kind::Group);
    assert!(f(102).is_packed(), "edition 2023 default, from the extension's file");
    assert!(f(103).validates_utf8() && matches!(f(103).presence, Presence::HasBit(_)));
    assert_eq!(f(104).kind, Kind::Group, "DELIMITED");
    assert_eq!(ident_name(&f(102).name), "t_Scope_q");
    assert_eq!(ident_name("plain"), "plain");
}

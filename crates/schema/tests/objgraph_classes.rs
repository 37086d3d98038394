//! Classes for object graphs: options, layout in both pointer widths, table round trip.

use std::path::PathBuf;

use heapwire_schema::*;

fn expr(pw: PointerWidth) -> CompiledSchema {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/expression_tree/expr.proto");
    compile_files(&[p], &[], LayoutOptions { pointer_width: pw, header_words: false }).expect("compiles")
}

fn class<'a>(s: &'a CompiledSchema, name: &str) -> &'a Class {
    let mi = s.message_index(name).unwrap();
    &s.classes[s.class_of(mi).unwrap()]
}

#[test]
fn paper_layout_32_bit_is_16_byte_objects() {
    let s = expr(PointerWidth::P32);
    assert_eq!(s.classes.len(), 3);
    let node = class(&s, "expr.Node");
    assert!(node.is_abstract());
    assert_eq!((node.size, node.align), (12, 4));
    let lit = class(&s, "expr.Literal");
    assert_eq!((lit.type_id, lit.size), (0, 16));
    let offs: Vec<(u32, u32, u32)> = lit.members.iter().map(|m| (m.offset, m.size, m.wire_width)).collect();
    assert_eq!(offs, vec![(4, 4, 0), (8, 4, 0), (12, 4, 4)]);
    let op = class(&s, "expr.Operation");
    assert_eq!((op.type_id, op.size), (1, 16));
    let offs: Vec<(u32, u32, u32)> = op.members.iter().map(|m| (m.offset, m.size, m.wire_width)).collect();
    assert_eq!(offs, vec![(4, 4, 4), (8, 4, 4), (12, 4, 1)]);
    assert_eq!(s.member_field(&op.members[2]).name, "type");
    assert_eq!(op.members[0].cpp_member, "m_left");
    // Subclass relation.
    let (n, l, o) = (s.class_of(s.message_index("expr.Node").unwrap()).unwrap(), s.class_of(s.message_index("expr.Literal").unwrap()).unwrap(), s.class_of(s.message_index("expr.Operation").unwrap()).unwrap());
    assert!(s.is_subclass(l, n) && s.is_subclass(o, n) && !s.is_subclass(l, o) && !s.is_subclass(n, l));
}

#[test]
fn cpp_layout_64_bit() {
    let s = expr(PointerWidth::P64);
    let lit = class(&s, "expr.Literal");
    assert_eq!((lit.size, lit.align), (32, 8));
    assert_eq!(lit.members.iter().map(|m| m.offset).collect::<Vec<_>>(), vec![8, 16, 24]);
    let op = class(&s, "expr.Operation");
    assert_eq!(op.size, 32);
    assert_eq!(op.members.iter().map(|m| (m.offset, m.wire_width)).collect::<Vec<_>>(), vec![(8, 4), (16, 4), (24, 1)]);
}

#[test]
fn protobuf_layout_of_class_messages_is_unchanged() {
    let s = expr(PointerWidth::P64);
    let m = &s.messages[s.message_index("expr.Literal").unwrap()];
    // Ordinary protobuf struct: value, then the unknown-field range.
    assert_eq!(m.fields[0].offset, 0);
    assert_eq!(m.unknown_offset, 8);
}

#[test]
fn table_file_round_trip_keeps_classes() {
    for pw in [PointerWidth::P32, PointerWidth::P64] {
        let s = expr(pw);
        let bytes = table_file::write(&s);
        let back = table_file::read(&bytes).expect("reads");
        assert_eq!(back, s);
    }
}

#[test]
fn table_file_rejects_bad_class_sections() {
    let s = expr(PointerWidth::P32);
    let mut bad = s.clone();
    let li = bad.class_of(bad.message_index("expr.Literal").unwrap()).unwrap();
    bad.classes[li].members[2].offset = 14; // past the object
    let bytes = table_file::write(&bad);
    assert!(table_file::read(&bytes).is_err());
    let mut bad = s.clone();
    let oi = bad.class_of(bad.message_index("expr.Operation").unwrap()).unwrap();
    bad.classes[oi].type_id = 0; // duplicate id
    assert!(table_file::read(&table_file::write(&bad)).is_err());
}

fn compile_text(text: &str) -> Result<CompiledSchema, SchemaError> {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("t.proto");
    std::fs::write(&p, text).unwrap();
    compile_files(&[p], &[], LayoutOptions::default())
}

#[test]
fn rejects_unsupported_class_members_and_cycles() {
    let head = "syntax = \"proto3\"; package t; import \"heapwire/options.proto\";\n";
    assert!(compile_text(&format!("{head} message A {{ option (heapwire.class) = {{type_id: 1}}; string s = 1; }}")).is_err());
    assert!(compile_text(&format!("{head} message A {{ option (heapwire.class) = {{type_id: 1}}; repeated int32 s = 1; }}")).is_err());
    assert!(compile_text(&format!("{head} message B {{ int32 x = 1; }} message A {{ option (heapwire.class) = {{type_id: 1}}; B b = 1; }}")).is_err());
    assert!(compile_text(&format!("{head} message A {{ option (heapwire.class) = {{type_id: 1 base: \"B\"}}; }} message B {{ option (heapwire.class) = {{type_id: 2 base: \"A\"}}; }}")).is_err());
    assert!(compile_text(&format!("{head} message A {{ option (heapwire.class) = {{type_id: 1}}; int32 x = 1 [(heapwire.wire_width) = 3]; }}")).is_err());
    assert!(compile_text(&format!("{head} message A {{ option (heapwire.class) = {{type_id: 1}}; double x = 1 [(heapwire.wire_width) = 4]; }}")).is_err());
    assert!(compile_text(&format!("{head} message A {{ option (heapwire.class) = {{type_id: 1}}; }} message B {{ option (heapwire.class) = {{type_id: 1}}; }}")).is_err());
    // Tail padding of a base is reused (Itanium ABI for polymorphic bases).
    let s = compile_text(&format!("{head} message A {{ option (heapwire.class) = {{}}; int64 a = 1; int32 b = 2; }} message B {{ option (heapwire.class) = {{type_id: 1 base: \"A\"}}; int32 c = 3; }}")).unwrap();
    let b = &s.classes[s.class_of(s.message_index("t.B").unwrap()).unwrap()];
    assert_eq!(b.members.iter().map(|m| m.offset).collect::<Vec<_>>(), vec![8, 16, 20]);
    assert_eq!(b.size, 24);
}

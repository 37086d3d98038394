//! Every file generated from a compiled schema: the C header, the Rust views, the C++
//! header of object-graph classes, the Verilog of the hardware cores ([`verilog`]) and the
//! testbenches that run those cores in Icarus Verilog ([`testbench`]).
//! Generated files are marked `.gen.` and start with a do-not-edit line.

mod c_header;
mod cpp_objgraph;
mod rust_views;
pub mod testbench;
pub mod verilog;

pub use c_header::c_header;
pub use cpp_objgraph::cpp_header;
pub use rust_views::rust_views;

const C_KEYWORDS: &[&str] = &[
    "auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else", "enum", "extern", "float",
    "for", "goto", "if", "inline", "int", "long", "register", "restrict", "return", "short", "signed", "sizeof",
    "static", "struct", "switch", "typedef", "union", "unsigned", "void", "volatile", "while", "bool", "true", "false",
    "class", "new", "delete", "this", "template", "namespace", "operator", "private", "public", "protected", "virtual",
];

/// A field or oneof name usable in C (keywords get a trailing underscore).
pub(crate) fn c_ident(name: &str) -> String {
    let name = &*heapwire_schema::ident_name(name);
    if C_KEYWORDS.contains(&name) {
        format!("{name}_")
    } else {
        name.to_string()
    }
}

/// The C type of a scalar kind's slot (`None` for strings, bytes and messages).
pub(crate) fn c_scalar(kind: heapwire_schema::Kind) -> Option<&'static str> {
    use heapwire_schema::Kind::*;
    Some(match kind {
        Double => "double",
        Float => "float",
        Int64 | SInt64 | SFixed64 => "int64_t",
        UInt64 | Fixed64 => "uint64_t",
        Int32 | SInt32 | SFixed32 | Enum => "int32_t",
        UInt32 | Fixed32 => "uint32_t",
        Bool => "uint8_t",
        String | Bytes | Message | Group => return None,
    })
}

/// `pkg.Outer.Inner` → `pkg_Outer_Inner`.
pub(crate) fn c_type_name(full: &str) -> String {
    full.replace('.', "_")
}

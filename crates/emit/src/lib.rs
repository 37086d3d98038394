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
    if C_KEYWORDS.contains(&name) {
        format!("{name}_")
    } else {
        name.to_string()
    }
}

/// `pkg.Outer.Inner` → `pkg_Outer_Inner`.
pub(crate) fn c_type_name(full: &str) -> String {
    full.replace('.', "_")
}

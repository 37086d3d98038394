//! Writes the object-graph C/C++ header for a schema:
//! `cargo run -p heapwire-capi --example objgraph_header -- SCHEMA.proto 32|64 OUT.h [-I DIR]`
use heapwire_schema::{LayoutOptions, PointerWidth};

fn main() {
    let a: Vec<String> = std::env::args().skip(1).collect();
    if a.len() < 3 {
        eprintln!("usage: objgraph_header SCHEMA.proto 32|64 OUT.h [INCLUDE_DIR]");
        std::process::exit(2);
    }
    let pw = if a[1] == "32" { PointerWidth::P32 } else { PointerWidth::P64 };
    let inc: Vec<std::path::PathBuf> = a.get(3).map(|d| vec![d.into()]).unwrap_or_default();
    let s = heapwire_schema::compile_files(&[a[0].clone().into()], &inc, LayoutOptions { pointer_width: pw, header_words: false })
        .unwrap_or_else(|e| {
            eprintln!("objgraph_header: {e}");
            std::process::exit(2)
        });
    let stem = std::path::Path::new(&a[0]).file_stem().and_then(|s| s.to_str()).unwrap_or("schema").to_string();
    std::fs::write(&a[2], heapwire_emit::cpp_header(&s, &stem)).expect("write header");
}

//! Writes the generated cores for a schema (what `heapwire compile --rtl` writes):
//! cargo run -p heapwire-emit --example gencore -- SCHEMA.proto OUTDIR
fn main() {
    let a: Vec<String> = std::env::args().collect();
    let p = std::path::PathBuf::from(&a[1]);
    let s = heapwire_schema::compile_files(std::slice::from_ref(&p), &[p.parent().unwrap().to_path_buf()], Default::default()).unwrap();
    std::fs::create_dir_all(&a[2]).unwrap();
    for f in heapwire_emit::verilog::write_core(&s, "schema", std::path::Path::new(&a[2])).unwrap() {
        println!("{}", f.display());
    }
}

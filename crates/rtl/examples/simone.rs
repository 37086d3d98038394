//! Debug helper: cargo run -p heapwire-rtl --example simone -- SCHEMA.proto TYPE HEXBYTES
fn main() {
    let a: Vec<String> = std::env::args().collect();
    let p = std::path::PathBuf::from(&a[1]);
    let s = heapwire_schema::compile_files(&[p.clone()], &[p.parent().unwrap().to_path_buf()], Default::default()).unwrap();
    let mi = s.message_index(&a[2]).unwrap();
    let input: Vec<u8> = (0..a[3].len() / 2).map(|i| u8::from_str_radix(&a[3][2 * i..2 * i + 2], 16).unwrap()).collect();
    let r = heapwire_rtl::simulate(&s, mi, &input, &Default::default());
    match r {
        Ok(o) => println!("ok cycles {} image {:02x?}", o.cycles, o.image),
        Err(e) => println!("err {e}"),
    }
}

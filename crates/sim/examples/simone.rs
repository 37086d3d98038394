//! Debug helper: cargo run -p heapwire-sim --example simone -- SCHEMA.proto TYPE HEXBYTES [p32]
//! Runs the CPU engine and the simulated core and prints where the images differ.
fn main() {
    let a: Vec<String> = std::env::args().collect();
    let p = std::path::PathBuf::from(&a[1]);
    let mut layout = heapwire_schema::LayoutOptions::default();
    if a.get(4).is_some_and(|x| x == "p32") {
        layout.pointer_width = heapwire_schema::PointerWidth::P32;
    }
    let s = heapwire_schema::compile_files(std::slice::from_ref(&p), &[p.parent().unwrap().to_path_buf()], layout).unwrap();
    let mi = s.message_index(&a[2]).unwrap();
    let input: Vec<u8> = (0..a[3].len() / 2).map(|i| u8::from_str_radix(&a[3][2 * i..2 * i + 2], 16).unwrap()).collect();
    let mut img = Vec::new();
    let cpu = heapwire_cpu::Decoder::new(&s).decode(mi, &input, &Default::default(), &mut img);
    println!("cpu: {cpu:?} {} bytes", img.len());
    let mut img2 = Vec::new();
    let r2 = heapwire_cpu::Decoder::new(&s).decode_reference(mi, &input, &Default::default(), &mut img2);
    println!("cpu reference: {r2:?} same={}", img2 == img);
    if std::env::var("LAYOUT").is_ok() {
        for m in &s.messages {
            println!("{} size {} unk {}", m.full_name, m.size, m.unknown_offset);
            for f in &m.fields {
                println!("   {} {} {:?} off {} flags {:x} {:?}", f.number, f.name, f.kind, f.offset, f.flags, f.presence);
            }
        }
    }
    match heapwire_sim::protobuf::simulate(&s, mi, &input, &Default::default()) {
        Ok(o) => {
            println!("core: ok, {} cycles, {} bytes", o.cycles, o.image.len());
            for i in (0..img.len().max(o.image.len())).step_by(8) {
                let c = img.get(i..(i + 8).min(img.len())).unwrap_or(&[]);
                let h = o.image.get(i..(i + 8).min(o.image.len())).unwrap_or(&[]);
                println!("{i:5} {:02x?} {:02x?} {}", c, h, if c != h { "<<<" } else { "" });
            }
        }
        Err(e) => println!("core: {e}"),
    }
}

//! Rewrites the code list of `include/heapwire.h` from `RejectKind::ALL` and this
//! crate's own codes: `cargo run -p heapwire-capi --example update_header`.
//! `tests/header.rs` fails while the committed header differs.
fn main() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/include/heapwire.h");
    let old = std::fs::read_to_string(path).expect("read include/heapwire.h");
    let Some(new) = heapwire::with_codes(&old) else {
        eprintln!("update_header: {path} lacks the BEGIN CODES / enum hw_code / END CODES lines");
        std::process::exit(2);
    };
    if new != old {
        std::fs::write(path, new).expect("write include/heapwire.h");
        eprintln!("update_header: rewrote the code list of {path}");
    } else {
        eprintln!("update_header: {path} is up to date");
    }
}

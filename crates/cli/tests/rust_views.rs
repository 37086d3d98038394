//! Generated Rust views: the committed `unit_views.gen.rs` is what the generator writes
//! today (staleness guard), and reading a decoded image through it gives the decoded
//! values, for any base.

use std::path::PathBuf;

use heapwire_image::rt::Image;
use heapwire_schema::{compile_files, LayoutOptions};

// Used as the generator intends: a module file of its own.
#[path = "views/unit_views.gen.rs"]
mod views;

fn testdata() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../cpu/testdata")
}

#[test]
fn committed_views_are_current() {
    let d = testdata();
    let s = compile_files(&[d.join("unit.proto")], &[d], LayoutOptions::default()).unwrap();
    let committed = include_str!("views/unit_views.gen.rs");
    assert!(
        heapwire_emit::rust_views(&s) == committed,
        "crates/cli/tests/views/unit_views.gen.rs is stale: regenerate with \
         `heapwire compile crates/cpu/testdata/unit.proto -o OUT` and copy OUT/unit_views.gen.rs"
    );
}

#[test]
fn views_read_a_decoded_image() {
    let d = testdata();
    let s = compile_files(&[d.join("unit.proto")], &[d], LayoutOptions::default()).unwrap();
    let mi = s.message_index("unit.Node").unwrap();
    // i32=-7, s="héllo", leaf{id=3,name="x"}, leaves=[{id=1},{id=2}], packed_ints=[1,2,300],
    // strs=["a","bc"], by_name={"k": {id=9}}, c_str="z", opt=0 (present, default value)
    let msg: Vec<u8> = [
        &[0x08, 0xf9, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01][..],
        &[0x72, 0x06, b'h', 0xc3, 0xa9, b'l', b'l', b'o'],
        &[0x92, 0x01, 0x05, 0x08, 0x03, 0x12, 0x01, b'x'],
        &[0x9a, 0x01, 0x02, 0x08, 0x01, 0x9a, 0x01, 0x02, 0x08, 0x02],
        &[0xa2, 0x01, 0x04, 0x01, 0x02, 0xac, 0x02],
        &[0xaa, 0x01, 0x01, b'a', 0xaa, 0x01, 0x02, b'b', b'c'],
        &[0xb2, 0x01, 0x07, 0x0a, 0x01, b'k', 0x12, 0x02, 0x08, 0x09],
        &[0xc2, 0x01, 0x01, b'z'],
        &[0x88, 0x01, 0x00],
    ]
    .concat();
    for base in [0u64, 0x7000_0000] {
        let mut img = Vec::new();
        let opts = heapwire_cpu::DecodeOptions { base, ..Default::default() };
        heapwire_cpu::Decoder::new(&s).decode(mi, &msg, &opts, &mut img).unwrap();
        let n = views::unit_Node::at(Image::new(&img, base, 8), 0);
        assert_eq!(n.i32(), -7);
        assert_eq!(n.s(), "héllo".as_bytes());
        let leaf = n.leaf().expect("leaf present");
        assert_eq!((leaf.id(), leaf.name()), (3, &b"x"[..]));
        assert_eq!(n.leaves_len(), 2);
        assert_eq!((n.leaves(0).id(), n.leaves(1).id()), (1, 2));
        assert_eq!((0..n.packed_ints_len()).map(|i| n.packed_ints(i)).collect::<Vec<_>>(), [1, 2, 300]);
        assert_eq!((n.strs(0), n.strs(1)), (&b"a"[..], &b"bc"[..]));
        assert_eq!(n.by_name_len(), 1);
        let e = n.by_name(0);
        assert_eq!((e.key(), e.value().map(|v| v.id())), (&b"k"[..], Some(9)));
        assert_eq!(n.choice_case(), 24);
        assert!(n.has_c_str() && !n.has_c_int() && n.c_leaf().is_none() && n.c_int() == 0);
        assert_eq!(n.c_str(), b"z");
        assert!(n.has_opt() && n.opt() == 0);
        assert!(n.child().is_none() && !n.has_child());
    }
}

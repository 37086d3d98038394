//! Round trips through the decoder, the encoder and the JSON mapping, on random
//! messages generated from the test schemas in `tests/data/`, and checks against the
//! official library (the project's pinned one in `.venv`; these fail without it).

use heapwire_cpu::protobuf::decode::{DecodeOptions, Decoder};
use heapwire_cpu::protobuf::encode::{encode, encode_with, EncodeError, EncodeOptions};
use heapwire_engine::RejectKind;
use heapwire_json::protobuf::{self as json, JsonError, PrintOptions};
use heapwire_image::ImageView;
use heapwire_schema::{compile_files, wire_type, CompiledSchema, Field, Kind, LayoutOptions, PointerWidth};
use heapwire_testkit::oracle;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data")
}

fn schema(file: &str, layout: LayoutOptions) -> CompiledSchema {
    compile_files(&[data_dir().join(file)], &[data_dir()], layout).expect("compile test schema")
}

// ---------------------------------------------------------------------------------
// A deterministic random message generator (wire bytes), schema-driven.

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    fn chance(&mut self, pct: u64) -> bool {
        self.below(100) < pct
    }
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn tag(out: &mut Vec<u8>, n: u32, wt: u8) {
    put_varint(out, ((n as u64) << 3) | wt as u64);
}

fn int_edge(r: &mut Rng) -> u64 {
    match r.below(8) {
        0 => 0,
        1 => 1,
        2 => u64::MAX,
        3 => i64::MIN as u64,
        4 => i64::MAX as u64,
        5 => r.below(300),
        6 => (r.next() as i32) as i64 as u64,
        _ => r.next(),
    }
}

fn float_bits(r: &mut Rng) -> u32 {
    let specials = [0u32, 0x8000_0000, 0x7fc0_0000, 0x7f80_0000, 0xff80_0000, 0x3dcc_cccd, 0x7f7f_ffff, 1, 0x4040_0000];
    if r.chance(40) {
        specials[r.below(specials.len() as u64) as usize]
    } else {
        r.next() as u32
    }
}

fn double_bits(r: &mut Rng) -> u64 {
    let specials = [0u64, 1 << 63, 0x7ff8_0000_0000_0000, 0x7ff0_0000_0000_0000, 0x3fb9_9999_9999_999a, 1, 0x4415_af1d_78b5_8c40];
    if r.chance(40) {
        specials[r.below(specials.len() as u64) as usize]
    } else if r.chance(50) {
        (r.below(2_000_000) as f64 / 8.0 - 100000.0).to_bits()
    } else {
        r.next()
    }
}

fn rand_string(r: &mut Rng) -> Vec<u8> {
    let pieces = ["a", "Z", "é", "\"", "\\", "\n", "\u{1}", "\u{7f}", "日本", "😀", "\u{2028}", " ", "/", "</", "\t"];
    let n = if r.chance(20) { 0 } else { r.below(8) };
    let mut s = String::new();
    for _ in 0..n {
        s.push_str(pieces[r.below(pieces.len() as u64) as usize]);
    }
    s.into_bytes()
}

fn rand_bytes(r: &mut Rng) -> Vec<u8> {
    let n = r.below(9);
    (0..n).map(|_| r.next() as u8).collect()
}

struct Gen<'a> {
    s: &'a CompiledSchema,
    r: Rng,
    /// Generating a map entry's fields (see `known_only`).
    in_map_entry: bool,
}

impl Gen<'_> {
    /// One value of `f` (no tag) into `out`; for messages the body.
    fn value(&mut self, f: &Field, out: &mut Vec<u8>, depth: u32) {
        let r = &mut self.r;
        match f.kind {
            Kind::Double | Kind::Fixed64 | Kind::SFixed64 => {
                let v = if f.kind == Kind::Double { double_bits(r) } else { int_edge(r) };
                out.extend_from_slice(&v.to_le_bytes())
            }
            Kind::Float | Kind::Fixed32 | Kind::SFixed32 => {
                let v = if f.kind == Kind::Float { float_bits(r) } else { int_edge(r) as u32 };
                out.extend_from_slice(&v.to_le_bytes())
            }
            Kind::Int64 | Kind::UInt64 | Kind::SInt64 | Kind::SInt32 => put_varint(out, int_edge(r)),
            Kind::Int32 => put_varint(out, int_edge(r) as i32 as i64 as u64),
            Kind::UInt32 => put_varint(out, int_edge(r) as u32 as u64),
            Kind::Bool => put_varint(out, r.below(2)),
            Kind::Enum => {
                let e = &self.s.enums[f.sub as usize];
                let known_only = e.closed && self.in_map_entry;
                let v = if known_only || r.chance(80) { e.values[r.below(e.values.len() as u64) as usize].number } else { r.below(50) as i32 };
                put_varint(out, v as i64 as u64)
            }
            Kind::String => {
                let mut s = rand_string(r);
                if !f.validates_utf8() && !self.in_map_entry && r.chance(15) {
                    // proto2 strings need not be UTF-8.
                    s.extend_from_slice(&[0xff, b'\'', 0xc3]);
                }
                put_varint(out, s.len() as u64);
                out.extend_from_slice(&s);
            }
            Kind::Bytes => {
                let s = rand_bytes(r);
                put_varint(out, s.len() as u64);
                out.extend_from_slice(&s);
            }
            Kind::Message => {
                let body = self.message(f.sub as usize, depth + 1);
                put_varint(out, body.len() as u64);
                out.extend_from_slice(&body);
            }
            Kind::Group => {
                let body = self.message(f.sub as usize, depth + 1);
                out.extend_from_slice(&body);
                tag(out, f.number, wire_type::END_GROUP);
            }
        }
    }

    fn field(&mut self, f: &Field, out: &mut Vec<u8>, depth: u32) {
        let wt = if f.kind == Kind::Group { wire_type::START_GROUP } else { f.kind.wire_type() };
        if f.is_repeated() {
            let n = self.r.below(4);
            if f.kind.is_packable() && self.r.chance(50) && n > 0 {
                let mut body = Vec::new();
                for _ in 0..n {
                    self.value(f, &mut body, depth);
                }
                tag(out, f.number, wire_type::LEN);
                put_varint(out, body.len() as u64);
                out.extend_from_slice(&body);
            } else {
                for _ in 0..n {
                    tag(out, f.number, wt);
                    self.value(f, out, depth);
                }
            }
        } else {
            tag(out, f.number, wt);
            self.value(f, out, depth);
        }
    }

    fn message(&mut self, mi: usize, depth: u32) -> Vec<u8> {
        let m = &self.s.messages[mi];
        let saved = std::mem::replace(&mut self.in_map_entry, m.is_map_entry());
        let mut out = Vec::new();
        let fields: Vec<Field> = m.fields.clone();
        for f in &fields {
            let msgish = f.kind.is_message();
            let p = if m.is_map_entry() || f.is_required() {
                100
            } else if msgish && depth > 3 {
                0
            } else {
                45
            };
            if self.r.chance(p) {
                self.field(f, &mut out, depth);
                // Sometimes a second occurrence (last wins / merge).
                if !f.is_repeated() && self.r.chance(10) {
                    self.field(f, &mut out, depth);
                }
            }
        }
        if !m.is_map_entry() && self.r.chance(15) {
            // An unknown field.
            let n = 1000 + self.r.below(50) as u32;
            match self.r.below(3) {
                0 => {
                    tag(&mut out, n, wire_type::VARINT);
                    put_varint(&mut out, self.r.next());
                }
                1 => {
                    tag(&mut out, n, wire_type::FIXED32);
                    out.extend_from_slice(&[1, 2, 3, 4]);
                }
                _ => {
                    tag(&mut out, n, wire_type::LEN);
                    out.extend_from_slice(&[3, b'a', b'b', b'c']);
                }
            }
        }
        if self.r.chance(20) && out.len() > 2 {
            // Shuffle: move the first field occurrence group to the end is hard to do
            // safely on bytes; instead append a re-occurrence of a random scalar field.
        }
        self.in_map_entry = saved;
        out
    }
}

/// Decodes, and checks that `decode_into` writes the same image in place (in a buffer of
/// its size or larger, over garbage) and asks for its size in a smaller one.
fn decode(s: &CompiledSchema, mi: usize, wire: &[u8], base: u64) -> Vec<u8> {
    let mut img = Vec::new();
    let opts = DecodeOptions { base, ..Default::default() };
    let mut d = Decoder::new(s);
    d.decode(mi, wire, &opts, &mut img).unwrap_or_else(|e| panic!("decode {}: {e}", hex(wire)));
    for size in [img.len(), img.len() + 40] {
        let mut buf = vec![0xA5; size];
        assert_eq!(d.decode_into(mi, wire, &opts, &mut buf), Ok(img.len()), "decode_into {}", hex(wire));
        assert_eq!(hex(&buf[..img.len()]), hex(&img), "decode_into's image for {}", hex(wire));
    }
    if let Some(short) = img.len().checked_sub(1) {
        let e = d.decode_into(mi, wire, &opts, &mut vec![0; short]).unwrap_err();
        assert_eq!((e.kind, e.offset, e.needed), (RejectKind::BufferTooSmall, 0, img.len() as u64), "decode_into {}", hex(wire));
    }
    img
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn json_of(s: &CompiledSchema, mi: usize, img: &[u8], base: u64) -> String {
    json::to_json(s, mi, &ImageView::for_schema(s, img, base), 0).expect("print")
}

fn encode_of(s: &CompiledSchema, mi: usize, img: &[u8], base: u64) -> Vec<u8> {
    let mut out = Vec::new();
    encode(s, mi, &ImageView::for_schema(s, img, base), 0, &mut out).expect("encode");
    out
}

struct Case {
    wire: Vec<u8>,
    json: String,
    enc: Vec<u8>,
}

/// Random messages through every path; returns them for the official-library check.
fn round_trips(file: &str, ty: &str, layout: LayoutOptions, n: usize, seed: u64) -> Vec<Case> {
    let s = schema(file, layout);
    let mi = s.message_index(ty).unwrap();
    let mut g = Gen { s: &s, r: Rng(seed), in_map_entry: false };
    let mut cases = Vec::new();
    for i in 0..n {
        let wire = g.message(mi, 1);
        let base = if i % 3 == 0 { 0 } else { 0x1000 * (i as u64 % 7 + 1) };
        let img = decode(&s, mi, &wire, base);
        let js = json_of(&s, mi, &img, base);
        // wire → image → wire → image → wire: the re-encoding is a fixed point.
        let enc = encode_of(&s, mi, &img, base);
        let img2 = decode(&s, mi, &enc, 0);
        let enc2 = encode_of(&s, mi, &img2, 0);
        assert_eq!(hex(&enc), hex(&enc2), "encode not a fixed point for {}", hex(&wire));
        let img3 = decode(&s, mi, &enc2, 0);
        assert_eq!(img2, img3, "image not a fixed point for {}", hex(&wire));
        assert_eq!(json_of(&s, mi, &img2, 0), js, "JSON changed by encode for {}", hex(&wire));
        // JSON → wire → image → JSON.
        let mut from = Vec::new();
        if let Err(e) = json::from_json(&s, mi, js.as_bytes(), &mut from) {
            // The official parser rejects the printed f32::MAX too (3.4028235e+38 is
            // above FLT_MAX as a double): the one value without a JSON round trip.
            assert!(js.contains("3.4028235e+38"), "parse {js}: {e}");
            cases.push(Case { wire, json: js, enc });
            continue;
        }
        let img4 = decode(&s, mi, &from, 0);
        let js2 = json_of(&s, mi, &img4, 0);
        assert_eq!(js, js2, "JSON round trip for {}", hex(&wire));
        cases.push(Case { wire, json: js, enc });
    }
    cases
}

#[test]
fn proto3_round_trips() {
    round_trips("jt3.proto", "jt3.All", LayoutOptions::default(), 400, 0x9e3779b97f4a7c15);
    let p32 = LayoutOptions { pointer_width: PointerWidth::P32, header_words: true };
    round_trips("jt3.proto", "jt3.All", p32, 200, 12345);
}

#[test]
fn proto2_round_trips() {
    round_trips("jt2.proto", "jt2.P2", LayoutOptions::default(), 400, 0xdead_beef_1234);
    let p32 = LayoutOptions { pointer_width: PointerWidth::P32, header_words: false };
    round_trips("jt2.proto", "jt2.P2", p32, 200, 777);
}

// ---------------------------------------------------------------------------------
// Against the official library: the project's pinned one (heapwire_testkit::oracle); a
// missing oracle fails these tests.

fn run_check(file: &str, ty: &str, mode: &str, lines: &[String]) -> Vec<String> {
    let ds = oracle::descriptor_set(&data_dir().join(file), &data_dir());
    let mut child = Command::new(oracle::python())
        .arg(data_dir().join("jsoncheck.py"))
        .arg(&ds)
        .arg(ty)
        .arg(mode)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("python3");
    {
        let mut stdin = child.stdin.take().unwrap();
        for l in lines {
            writeln!(stdin, "{l}").unwrap();
        }
    }
    let out = child.wait_with_output().unwrap();
    let _ = std::fs::remove_file(ds);
    assert!(out.status.success(), "jsoncheck.py failed");
    let res: Vec<String> = String::from_utf8(out.stdout).unwrap().lines().map(str::to_string).collect();
    assert_eq!(res.len(), lines.len(), "jsoncheck.py answered {} of {} lines", res.len(), lines.len());
    res
}

fn json_str(s: &str) -> String {
    let mut out = Vec::new();
    heapwire_cpu_json_escape(&mut out, s);
    String::from_utf8(out).unwrap()
}

/// Minimal JSON string escaping for the test's input lines.
fn heapwire_cpu_json_escape(out: &mut Vec<u8>, s: &str) {
    out.push(b'"');
    for c in s.chars() {
        match c {
            '"' => out.extend_from_slice(b"\\\""),
            '\\' => out.extend_from_slice(b"\\\\"),
            c if (c as u32) < 0x20 => out.extend_from_slice(format!("\\u{:04x}", c as u32).as_bytes()),
            c => out.extend_from_slice(c.to_string().as_bytes()),
        }
    }
    out.push(b'"');
}

fn official_print_check(file: &str, ty: &str, seed: u64) {
    let cases = round_trips(file, ty, LayoutOptions::default(), 300, seed);
    let lines: Vec<String> = cases
        .iter()
        .map(|c| format!("[\"{}\",{},\"{}\"]", hex(&c.wire), json_str(&c.json), hex(&c.enc)))
        .collect();
    let res = run_check(file, ty, "print", &lines);
    let bad: Vec<_> = res.iter().zip(&cases).filter(|(r, _)| *r != "OK").map(|(r, c)| format!("{r}\n  wire {}", hex(&c.wire))).collect();
    assert!(bad.is_empty(), "{} of {} differ from the official library:\n{}", bad.len(), cases.len(), bad[..bad.len().min(8)].join("\n"));
}

#[test]
fn official_json_proto3() {
    official_print_check("jt3.proto", "jt3.All", 42);
}

#[test]
fn official_json_proto2() {
    official_print_check("jt2.proto", "jt2.P2", 4242);
}

#[test]
fn official_json_extensions() {
    // Extensions print and parse as "[jt2.ext_i]", "[jt2.Scope.held]", ...
    official_print_check("jt2.proto", "jt2.Ext", 99);
}

#[test]
fn official_json_parse_extensions_and_unknown_names() {
    let inputs = [
        r#"{"a":1,"[jt2.ext_i]":5,"[jt2.ext_k]":["K_ONE",10],"[jt2.ext_node]":{"id":3},"[jt2.Scope.held]":["x","é"]}"#,
        r#"{"[jt2.ext_i]":null,"[jt2.ext_k]":[]}"#,
        r#"{"[jt2.ext_i]":"x"}"#,
        r#"{"[jt2.nope]":1}"#,
        r#"{"[jt2.P2.nope]":1}"#,
        r#"{"[jt2.ext_i]":1,"[jt2.ext_i]":2}"#,
        r#"{"jt2.ext_i":1}"#,
        r#"{"[ jt2.ext_i]":1}"#,
        r#"{"[jt2.Scope.held]":"x"}"#,
        r#"{"a":1,"zz":2}"#,
        r#"{"k":"K_NOPE","a":2}"#,
        r#"{"k":"K_ONE","k":"K_NOPE"}"#,
        r#"{"k":77}"#,
        r#"{"k":"77"}"#,
        r#"{"[jt2.ext_k]":["K_NOPE","K_TEN","7"]}"#,
        r#"{"[jt2.ext_k]":["K_NOPE"]}"#,
        r#"{"kinds":{"a":"K_NOPE","b":"K_ONE"}}"#,
        r#"{"a":1,"[jt2.ext_node]":{"id":1,"zz":{"deep":[1,{"x":null}]}}}"#,
        r#"{"a":{}}"#,
    ];
    official_parse_check("jt2.proto", "jt2.Ext", &inputs);
    let ignoring = json::ParseOptions { ignore_unknown_fields: true, ..Default::default() };
    official_parse_check_with("jt2.proto", "jt2.Ext", &inputs, &ignoring);
    // A bracketed name in a message without extension ranges: refused even when ignoring.
    let others = [r#"{"req":1,"[jt2.ext_i]":1}"#, r#"{"req":1,"[x]":1,"nope":2}"#, r#"{"req":1,"rk":["K_ONE","K_NOPE"],"oneof":1}"#];
    official_parse_check_with("jt2.proto", "jt2.P2", &others, &ignoring);
}

#[test]
fn proto2_map_key_not_utf8_is_refused() {
    // The official printer refuses a message whose map<string,...> key is not UTF-8 (a
    // JSON key cannot hold it); printing it with U+FFFD would change the user's bytes.
    let s = schema("jt2.proto", LayoutOptions::default());
    let mi = s.message_index("jt2.P2").unwrap();
    let mut wire = vec![0x08, 0x01]; // req = 1
    let entry = [0x0a, 0x02, b'a', 0xff, 0x12, 0x00]; // key "a\xff", value {}
    len_field(&mut wire, 22, &entry);
    let img = decode(&s, mi, &wire, 0);
    let e = json::to_json(&s, mi, &ImageView::for_schema(&s, &img, 0), 0).unwrap_err();
    assert!(matches!(&e, JsonError::InvalidUtf8 { field, .. } if field == "jt2.P2.nodes"), "{e}");
    assert!(e.to_string().contains("jt2.P2.nodes") && e.to_string().contains("image offset"), "{e}");
    // Elsewhere such strings print as the official library prints them (the bytes' repr).
    let mut wire = vec![0x08, 0x01];
    len_field(&mut wire, 7, b"a\xff");
    let img = decode(&s, mi, &wire, 0);
    assert_eq!(json_of(&s, mi, &img, 0), r#"{"req":1,"os":"b'a\\xff'"}"#);
    let lines = [format!("[\"{}\",null,\"\"]", hex(&{
        let mut w = vec![0x08, 0x01];
        len_field(&mut w, 22, &entry);
        w
    }))];
    let res = run_check("jt2.proto", "jt2.P2", "print", &lines);
    assert_eq!(res, ["OK"], "the official printer must refuse it too");
}

fn len_field(out: &mut Vec<u8>, n: u32, body: &[u8]) {
    tag(out, n, wire_type::LEN);
    put_varint(out, body.len() as u64);
    out.extend_from_slice(body);
}

#[test]
fn official_json_parse() {
    let inputs = [
        r#"{}"#,
        r#"{"i32":1,"i64":"-5","u32":4294967295,"u64":"18446744073709551615","s32":-7,"s64":"9"}"#,
        r#"{"i32":2147483648}"#,
        r#"{"i32":-2147483649}"#,
        r#"{"u32":-1}"#,
        r#"{"u64":"18446744073709551616"}"#,
        r#"{"i64":9223372036854775807}"#,
        r#"{"i64":9223372036854775808}"#,
        r#"{"i32":1.0}"#,
        r#"{"i32":1e2}"#,
        r#"{"i32":1.5}"#,
        r#"{"i32":"1.0"}"#,
        r#"{"i32":"+5"}"#,
        r#"{"i32":"05"}"#,
        r#"{"i32":" 5"}"#,
        r#"{"i32":"1_000"}"#,
        r#"{"i32":true}"#,
        r#"{"i64":9007199254740993.0}"#,
        r#"{"fl":0.1,"db":0.1}"#,
        r#"{"fl":"NaN","db":"-Infinity"}"#,
        r#"{"fl":"Infinity"}"#,
        r#"{"fl":1e39}"#,
        r#"{"fl":"1e39"}"#,
        r#"{"db":1e400}"#,
        r#"{"db":"1.5"}"#,
        r#"{"db":"nan"}"#,
        r#"{"fl":true}"#,
        r#"{"fl":-0.0}"#,
        r#"{"b":true}"#,
        r#"{"b":"true"}"#,
        r#"{"b":1}"#,
        r#"{"s":"h\u00e9\ud83d\ude00"}"#,
        r#"{"s":5}"#,
        r#"{"s":"\ud800"}"#,
        r#"{"by":"YQ=="}"#,
        r#"{"by":"YQ"}"#,
        r#"{"by":"-_8="}"#,
        r#"{"by":"+/8"}"#,
        r#"{"by":"Y"}"#,
        r#"{"by":"YQ==YQ=="}"#,
        r#"{"by":"Y!Q"}"#,
        r#"{"by":"YWJj ZGVm"}"#,
        r#"{"e":"BLUE"}"#,
        r#"{"e":2}"#,
        r#"{"e":"2"}"#,
        r#"{"e":77}"#,
        r#"{"e":"PURPLE"}"#,
        r#"{"e":1.5}"#,
        r#"{"e":-3}"#,
        r#"{"sub":{"a":1,"next":{"a":2}}}"#,
        r#"{"sub":null}"#,
        r#"{"sub":{}}"#,
        r#"{"sub":5}"#,
        r#"{"ri32":[1,2,3],"rfl":[1.5,"NaN"],"rs":["a",""],"rsub":[{},{"a":1}],"re":["GREEN",2,9]}"#,
        r#"{"ri32":[1,null]}"#,
        r#"{"ri32":5}"#,
        r#"{"rsub":[null]}"#,
        r#"{"mStr":{"a":1,"b":2},"mI64":{"-5":{"a":1},"7":{}},"mBool":{"true":"BLUE","false":0}}"#,
        r#"{"mU32":{"1":"YQ=="},"mS32":{"-1":1.5},"mF64":{"18446744073709551615":"x"}}"#,
        r#"{"mBool":{"True":1}}"#,
        r#"{"mU32":{"-1":""}}"#,
        r#"{"mU32":{"x":""}}"#,
        r#"{"mStr":{"a":null}}"#,
        r#"{"mI64":{"1":null}}"#,
        r#"{"mStr":[]}"#,
        r#"{"oi":0}"#,
        r#"{"oi":1,"os":"x"}"#,
        r#"{"oi":1,"os":null}"#,
        r#"{"osub":{}}"#,
        r#"{"optI32":0,"optFl":0,"optS":""}"#,
        r#"{"opt_i32":0}"#,
        r#"{"snakeCaseName":1}"#,
        r#"{"snake_case_name":1}"#,
        r#"{"snakeCaseName":1,"snake_case_name":2}"#,
        r#"{"i32":1,"i32":2}"#,
        r#"{"nope":1}"#,
        r#"{"bigNumber":5}"#,
        r#"{"rdb":[1,2],"ri64":["1",2],"ru64":[0],"rs64":[-1],"rb":[true,false],"rby":["AA=="],"rf32":[7],"rsf64":["-8"]}"#,
        r#"[]"#,
        r#"{"i32":1} x"#,
        r#"{"i32":01}"#,
        r#"{"i32":-}"#,
        r#"{"s":"a\x"}"#,
        r#"{"i32":NaN}"#,
        r#" {"i32" : 3 } "#,
    ];
    official_parse_check("jt3.proto", "jt3.All", &inputs);
}

/// Parses each text with heapwire and with the official parser: both must reject, or
/// both accept with the same message.
fn official_parse_check(file: &str, ty: &str, inputs: &[&str]) {
    official_parse_check_with(file, ty, inputs, &json::ParseOptions::default());
}

/// [`official_parse_check`] with parser options (`ignore_unknown_fields` is passed to the
/// official parser too).
fn official_parse_check_with(file: &str, ty: &str, inputs: &[&str], opts: &json::ParseOptions) {
    let mode = if opts.ignore_unknown_fields { "parse-ignore" } else { "parse" };
    let s = schema(file, LayoutOptions::default());
    let mi = s.message_index(ty).unwrap();
    let mut lines = Vec::new();
    for t in inputs {
        let mut out = Vec::new();
        let ours = json::from_json_with(&s, mi, t.as_bytes(), &mut out, opts).ok().map(|_| format!("\"{}\"", hex(&out)));
        lines.push(format!("[{},{}]", json_str(t), ours.unwrap_or("null".into())));
    }
    let res = run_check(file, ty, mode, &lines);
    let bad: Vec<_> = res.iter().zip(inputs).filter(|(r, _)| *r != "OK").map(|(r, t)| format!("{t}: {r}")).collect();
    assert!(bad.is_empty(), "{} of {} differ from the official parser:\n{}", bad.len(), inputs.len(), bad.join("\n"));
}

// ---------------------------------------------------------------------------------
// Hostile images.

/// A chain of `n` nested `Sub` messages, built by the decoder from wire bytes.
fn chain_wire(n: usize) -> Vec<u8> {
    // Innermost first: Sub{a:1}; each level wraps it as field 2.
    let mut w = vec![0x08, 0x01];
    for _ in 1..n {
        let mut outer = vec![0x12];
        put_varint(&mut outer, w.len() as u64);
        outer.extend_from_slice(&w);
        w = outer;
    }
    w
}

#[test]
fn deep_images_error_cleanly() {
    let s = schema("jt3.proto", LayoutOptions::default());
    let mi = s.message_index("jt3.Sub").unwrap();
    let wire = chain_wire(100);
    let img = decode(&s, mi, &wire, 0);
    let view = ImageView::for_schema(&s, &img, 0);
    // Fine at the default limit.
    json::to_json(&s, mi, &view, 0).unwrap();
    let mut out = Vec::new();
    encode(&s, mi, &view, 0, &mut out).unwrap();
    assert_eq!(out, wire);
    // A lower limit: a clean error.
    let po = PrintOptions { max_depth: 50, ..Default::default() };
    let e = json::to_json_with(&s, mi, &view, 0, &mut Vec::new(), &po).unwrap_err();
    assert!(matches!(e, JsonError::TooDeep { limit: 50, .. }), "{e}");
    let eo = EncodeOptions { max_depth: 50, ..Default::default() };
    let e = encode_with(&s, mi, &view, 0, &mut Vec::new(), &eo).unwrap_err();
    assert!(matches!(e, EncodeError::TooDeep { limit: 50, .. }), "{e}");

    // A very deep image (built by hand: 200 000 nested structs) never overflows the stack.
    let m = &s.messages[mi];
    let next = m.fields.iter().find(|f| f.number == 2).unwrap();
    let size = m.size as usize;
    let n = 200_000;
    let mut img = vec![0u8; size * n];
    for i in 0..n - 1 {
        let p = ((i + 1) * size) as u64;
        img[i * size + next.offset as usize..][..8].copy_from_slice(&p.to_le_bytes());
    }
    let view = ImageView::for_schema(&s, &img, 0);
    let po = PrintOptions { max_depth: usize::MAX, ..Default::default() };
    let mut out = Vec::new();
    json::to_json_with(&s, mi, &view, 0, &mut out, &po).unwrap();
    assert_eq!(out.iter().filter(|&&c| c == b'{').count(), n);
    let eo = EncodeOptions { max_depth: usize::MAX, ..Default::default() };
    let mut wire = Vec::new();
    encode_with(&s, mi, &view, 0, &mut wire, &eo).unwrap();
    let back = {
        let mut img = Vec::new();
        let opts = DecodeOptions { max_depth: u32::MAX, ..Default::default() };
        Decoder::new(&s).decode(mi, &wire, &opts, &mut img).map(|_| img)
    };
    if let Ok(back) = back {
        assert_eq!(back, img);
    }
}

#[test]
fn cyclic_and_shared_images_error_cleanly() {
    let s = schema("jt3.proto", LayoutOptions::default());
    let mi = s.message_index("jt3.Sub").unwrap();
    let m = &s.messages[mi];
    let next = m.fields.iter().find(|f| f.number == 2).unwrap();
    // A struct pointing to itself.
    let mut img = vec![0u8; m.size as usize];
    img[next.offset as usize..][..8].copy_from_slice(&0x100u64.to_le_bytes());
    let view = ImageView::for_schema(&s, &img, 0x100);
    let e = json::to_json(&s, mi, &view, 0).unwrap_err();
    assert!(matches!(e, JsonError::Image(_)), "{e}");
    let e = encode(&s, mi, &view, 0, &mut Vec::new()).unwrap_err();
    assert!(matches!(e, EncodeError::Image(_)), "{e}");
    // A pointer outside the image, and below the base.
    for p in [0x100u64 + 8, 0x50, u64::MAX] {
        img[next.offset as usize..][..8].copy_from_slice(&p.to_le_bytes());
        let view = ImageView::for_schema(&s, &img, 0x100);
        let e = json::to_json(&s, mi, &view, 0).unwrap_err();
        assert!(e.to_string().contains("offset"), "{e}");
        assert!(encode(&s, mi, &view, 0, &mut Vec::new()).is_err());
    }
    // A string whose length runs past the image.
    let sf = m.fields.iter().find(|f| f.number == 3).unwrap();
    let mut img = vec![0u8; m.size as usize + 8];
    img[next.offset as usize..][..8].fill(0);
    img[sf.offset as usize..][..8].copy_from_slice(&(m.size as u64).to_le_bytes());
    img[sf.offset as usize + 8..][..8].copy_from_slice(&9u64.to_le_bytes());
    let view = ImageView::for_schema(&s, &img, 0);
    assert!(json::to_json(&s, mi, &view, 0).is_err());
    img[sf.offset as usize + 8..][..8].copy_from_slice(&8u64.to_le_bytes());
    let view = ImageView::for_schema(&s, &img, 0);
    assert!(json::to_json(&s, mi, &view, 0).is_ok());
}

#[test]
fn json_parse_limits() {
    let s = schema("jt3.proto", LayoutOptions::default());
    let mi = s.message_index("jt3.Sub").unwrap();
    // 100 nested messages are fine, 101 are not (as the official parser).
    let nest = |n: usize| format!("{}{}", "{\"next\":".repeat(n - 1) + "{", "}".repeat(n));
    let mut out = Vec::new();
    json::from_json(&s, mi, nest(100).as_bytes(), &mut out).unwrap();
    let img = decode(&s, mi, &out, 0);
    let po = PrintOptions::default();
    let mut text = Vec::new();
    json::to_json_with(&s, mi, &ImageView::for_schema(&s, &img, 0), 0, &mut text, &po).unwrap();
    assert_eq!(String::from_utf8(text).unwrap(), nest(100));
    let e = json::from_json(&s, mi, nest(101).as_bytes(), &mut Vec::new()).unwrap_err();
    assert!(matches!(e, JsonError::TooDeep { .. }), "{e}");
    // Pathological JSON nesting: an error, not a stack overflow.
    let deep = "[".repeat(1_000_000);
    let e = json::from_json(&s, mi, deep.as_bytes(), &mut Vec::new()).unwrap_err();
    assert!(matches!(e, JsonError::Syntax { .. }), "{e}");
    let deep = format!("{{\"a\":{}", "{\"a\":".repeat(5000));
    assert!(json::from_json(&s, mi, deep.as_bytes(), &mut Vec::new()).is_err());
    // Errors name the path and the offset.
    let e = json::from_json(&s, mi, br#"{"next":{"next":{"zz":1}}}"#, &mut Vec::new()).unwrap_err();
    let msg = e.to_string();
    assert!(msg.contains("Sub.next.next") && msg.contains("zz") && msg.contains("byte 22"), "{msg}");
}

#[test]
fn presence_and_defaults() {
    let s = schema("jt2.proto", LayoutOptions::default());
    let mi = s.message_index("jt2.P2").unwrap();
    // Presence fields set to their zero values are printed; required is printed.
    let mut wire = Vec::new();
    json::from_json(&s, mi, br#"{"req":0,"oi64":"0","ob":false,"os":"","ok":"K_ZERO","cInt":"0"}"#, &mut wire).unwrap();
    let img = decode(&s, mi, &wire, 0);
    assert_eq!(json_of(&s, mi, &img, 0), r#"{"req":0,"oi64":"0","ob":false,"os":"","ok":"K_ZERO","cInt":"0"}"#);
    // Group name, closed enum (unknown number rejected), map of messages.
    let e = json::from_json(&s, mi, br#"{"req":1,"ok":5}"#, &mut Vec::new()).unwrap_err();
    assert!(e.to_string().contains("invalid enum value"), "{e}");
    let mut wire = Vec::new();
    json::from_json(&s, mi, br#"{"req":1,"grp":{"ga":3,"gs":["x"]},"nodes":{"k":{"id":1,"left":{}}}}"#, &mut wire).unwrap();
    let img = decode(&s, mi, &wire, 0);
    assert_eq!(json_of(&s, mi, &img, 0), r#"{"req":1,"grp":{"ga":3,"gs":["x"]},"nodes":{"k":{"id":1,"left":{}}}}"#);
    assert_eq!(encode_of(&s, mi, &img, 0), wire);
}

#[test]
fn unknown_fields_survive_encode() {
    let s = schema("jt3.proto", LayoutOptions::default());
    let mi = s.message_index("jt3.Sub").unwrap();
    // a=1, unknown 99 varint, s="x", unknown 98 fixed32; nested unknown inside next.
    let wire = [0x08, 0x01, 0x98, 0x06, 0x05, 0x12, 0x03, 0xa0, 0x06, 0x01, 0x1a, 0x01, b'x', 0x95, 0x06, 1, 2, 3, 4];
    let img = decode(&s, mi, &wire, 0);
    let enc = encode_of(&s, mi, &img, 0);
    // Known fields in number order, then the unknown bytes in wire order.
    assert_eq!(enc, [0x08, 0x01, 0x12, 0x03, 0xa0, 0x06, 0x01, 0x1a, 0x01, b'x', 0x98, 0x06, 0x05, 0x95, 0x06, 1, 2, 3, 4]);
    assert_eq!(json_of(&s, mi, &img, 0), r#"{"a":1,"next":{},"s":"x"}"#);
}

#[test]
fn float_text_matches_python() {
    use heapwire_json::protobuf::print::{fmt_f32, fmt_f64};
    assert_eq!(fmt_f64(0.1), "0.1");
    assert_eq!(fmt_f64(1e20), "1e+20");
    assert_eq!(fmt_f64(1.5e-7), "1.5e-07");
    assert_eq!(fmt_f64(-0.0), "-0.0");
    assert_eq!(fmt_f64(3.0), "3.0");
    assert_eq!(fmt_f64(1e16), "1e+16");
    assert_eq!(fmt_f64(1e15), "1000000000000000.0");
    assert_eq!(fmt_f64(1e-5), "1e-05");
    assert_eq!(fmt_f64(0.0001), "0.0001");
    assert_eq!(fmt_f64(1.0 / 3.0), "0.3333333333333333");
    assert_eq!(fmt_f64(f64::MAX), "1.7976931348623157e+308");
    assert_eq!(fmt_f64(5e-324), "5e-324");
    assert_eq!(fmt_f32(0.1), "0.1");
    assert_eq!(fmt_f32(123456789.0), "123456790.0");
    assert_eq!(fmt_f32(f32::MAX), "3.4028235e+38");
    assert_eq!(fmt_f32(16777217.0), "16777216.0");
    assert_eq!(fmt_f32(1.0 / 3.0), "0.33333334");
    assert_eq!(fmt_f32(1e-45), "1.4013e-45");
}

#[test]
fn official_json_well_known_types() {
    // Written in the special JSON forms (parsed by heapwire, then printed and compared).
    let inputs = [
        r#"{}"#,
        r#"{"ts":"1970-01-01T00:00:00Z"}"#,
        r#"{"ts":"1970-01-01T00:00:01.001Z"}"#,
        r#"{"ts":"0001-01-01T00:00:00Z"}"#,
        r#"{"ts":"9999-12-31T23:59:59.999999999Z"}"#,
        r#"{"ts":"1969-12-31T23:59:59.000001500Z"}"#,
        r#"{"ts":"2000-02-29T01:00:00.00000001+01:00"}"#,
        r#"{"du":"0s"}"#,
        r#"{"du":"-3.100s"}"#,
        r#"{"du":"-0.000001s"}"#,
        r#"{"du":"315576000000s"}"#,
        r#"{"du":"-315576000000.999999999s"}"#,
        r#"{"i32":0,"i64":"-5","u64":"18446744073709551615","fl":0.1,"db":0,"b":true,"s":"x","by":"AAE=","u32":0}"#,
        r#"{"st":{}}"#,
        r#"{"st":{"a":1,"b":"s","c":false,"d":null,"e":[1.5,null],"f":{"g":null}}}"#,
        r#"{"v":null}"#,
        r#"{"v":1e300}"#,
        r#"{"v":{}}"#,
        r#"{"v":[]}"#,
        r#"{"lv":["a",[true]]}"#,
        r#"{"fm":"aB,c,fooBarBaz"}"#,
        r#"{"fm":""}"#,
        r#"{"em":{}}"#,
        r#"{"rts":["1970-01-01T00:00:00Z","1970-01-02T00:00:00Z"]}"#,
        r#"{"mv":{"k":2,"z":null}}"#,
        r#"{"nv":null}"#,
        r#"{"odu":"0s"}"#,
    ];
    let s = schema("jwkt.proto", LayoutOptions::default());
    let mi = s.message_index("jwkt.W").unwrap();
    let mut lines = Vec::new();
    for t in &inputs {
        let mut wire = Vec::new();
        json::from_json(&s, mi, t.as_bytes(), &mut wire).unwrap_or_else(|e| panic!("{t}: {e}"));
        let img = decode(&s, mi, &wire, 0);
        let ours = json::to_json(&s, mi, &ImageView::for_schema(&s, &img, 0), 0).ok();
        let enc = encode_of(&s, mi, &img, 0);
        lines.push(format!("[\"{}\",{},\"{}\"]", hex(&wire), ours.as_deref().map(json_str).unwrap_or("null".into()), hex(&enc)));
    }
    // Stored values no JSON text can give: the printer must fail where the official
    // one does (field number, then the sub-message's varint fields).
    let invalid: [(u32, &[(u32, i64)]); 6] = [
        (1, &[(1, 253402300800)]),
        (1, &[(1, -62135596801)]),
        (1, &[(2, -1)]),
        (2, &[(1, 3), (2, -1)]),
        (2, &[(1, 315576000001)]),
        (2, &[(2, 1_000_000_000)]),
    ];
    for (field, members) in invalid {
        let mut body = Vec::new();
        for &(n, v) in members {
            body.push((n << 3) as u8);
            heapwire_cpu::protobuf::wire::put_varint(&mut body, v as u64);
        }
        let mut wire = vec![(field << 3 | 2) as u8];
        heapwire_cpu::protobuf::wire::put_varint(&mut wire, body.len() as u64);
        wire.extend_from_slice(&body);
        let img = decode(&s, mi, &wire, 0);
        let ours = json::to_json(&s, mi, &ImageView::for_schema(&s, &img, 0), 0).ok();
        assert!(ours.is_none(), "printed an invalid value: {ours:?}");
        let enc = encode_of(&s, mi, &img, 0);
        lines.push(format!("[\"{}\",null,\"{}\"]", hex(&wire), hex(&enc)));
    }
    let res = run_check("jwkt.proto", "jwkt.W", "print", &lines);
    let bad: Vec<_> = res.iter().zip(&lines).filter(|(r, _)| *r != "OK").map(|(r, t)| format!("{t}: {r}")).collect();
    assert!(bad.is_empty(), "well-known types differ from the official library:\n{}", bad.join("\n"));
}

#[test]
fn official_json_parse_well_known_types() {
    let inputs = [
        r#"{"ts":"1972-01-01T10:00:20.021-05:00"}"#,
        r#"{"ts":"1970-01-01T05:30:00+05:30"}"#,
        r#"{"ts":"1970-01-01T00:00:00.5 Z"}"#,
        r#"{"ts":"1970-01-01T00:00:00.Z"}"#,
        r#"{"ts":"1970-1-1T0:0:0Z"}"#,
        r#"{"ts":"1970-01- 1T00:00:00Z"}"#,
        r#"{"ts":"1970-01-01T00:00:00+5:3"}"#,
        r#"{"ts":"1970-01-01T00:00:00.1_5Z"}"#,
        r#"{"ts":"1970-01-01t00:00:00Z"}"#,
        r#"{"ts":"1970-01-01T00:00:00z"}"#,
        r#"{"ts":"1970-01-01T00:00:60Z"}"#,
        r#"{"ts":"1970-01-01T00:00:00.1234567890Z"}"#,
        r#"{"ts":"0000-12-31T00:00:00Z"}"#,
        r#"{"ts":"0001-01-01T00:00:00+00:01"}"#,
        r#"{"ts":"9999-12-31T23:59:59.999999999-00:01"}"#,
        r#"{"ts":"1900-02-29T00:00:00Z"}"#,
        r#"{"ts":5}"#,
        r#"{"ts":{}}"#,
        r#"{"ts":null}"#,
        r#"{"du":"-1.5s"}"#,
        r#"{"du":"1.0000000005s"}"#,
        r#"{"du":"1.9999999999s"}"#,
        r#"{"du":"-315576000000s"}"#,
        r#"{"du":"315576000001s"}"#,
        r#"{"du":" -1.5s"}"#,
        r#"{"du":"1_0s"}"#,
        r#"{"du":"1e3s"}"#,
        r#"{"du":"1S"}"#,
        r#"{"du":{"seconds":"1"}}"#,
        r#"{"fm":"a.bC,,x"}"#,
        r#"{"fm":"a_b"}"#,
        r#"{"fm":["a"]}"#,
        r#"{"i32":"5","u64":"1e3","fl":-0,"db":-0.0,"b":false,"s":"","by":"-_8"}"#,
        r#"{"i32":{"value":5}}"#,
        r#"{"i32":null}"#,
        r#"{"fl":3.4028235e+38}"#,
        r#"{"fl":340282356779733661637539395458142568448}"#,
        r#"{"st":{"a":{"b":[1,"x",null,true,{},[]]}},"v":-0,"lv":[]}"#,
        r#"{"st":[]}"#,
        r#"{"lv":{}}"#,
        r#"{"v":1e400}"#,
        r#"{"mv":{"a":null},"nv":null,"v":null}"#,
        r#"{"rts":[null]}"#,
        r#"{"em":[]}"#,
        r#"{"em":""}"#,
        r#"{"em":"x"}"#,
        r#"{"odu":null,"em":{}}"#,
    ];
    official_parse_check("jwkt.proto", "jwkt.W", &inputs);
}

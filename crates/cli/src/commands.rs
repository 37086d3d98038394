//! What each subcommand does, on top of the library crates.

use std::io::{BufRead, Read, Write};
use std::path::Path;
use std::time::Instant;

use heapwire_cpu::{DecodeError, DecodeOptions, Decoder};
use heapwire_schema::CompiledSchema;

use crate::Failure;

/// Largest single message accepted from a delimited stream.
const MAX_MESSAGE_BYTES: u64 = 1 << 31;

pub fn compile(s: &CompiledSchema, schema_path: &Path, dir: &Path, rtl: bool) -> Result<(), Failure> {
    std::fs::create_dir_all(dir).map_err(|e| Failure::Usage(format!("{}: {e}", dir.display())))?;
    let stem = schema_path.file_stem().and_then(|s| s.to_str()).unwrap_or("schema");
    let write = |name: String, bytes: &[u8]| -> Result<(), Failure> {
        let p = dir.join(name);
        std::fs::write(&p, bytes).map_err(|e| Failure::Usage(format!("{}: {e}", p.display())))?;
        eprintln!("wrote {}", p.display());
        Ok(())
    };
    write(format!("{stem}.hwsc"), &heapwire_schema::table_file::write(s))?;
    write(format!("{stem}.gen.h"), heapwire_image::c_header(s, stem).as_bytes())?;
    write(format!("{stem}_views.gen.rs"), heapwire_image::rust_views(s).as_bytes())?;
    if !s.classes.is_empty() {
        // Object-graph classes: the C++ header whose static_asserts check the layout.
        write(format!("{stem}_objgraph.gen.h"), heapwire_cpu::objgraph::header::cpp_header(s, stem).as_bytes())?;
    }
    if rtl {
        rtl_core(s, stem, dir)?;
    }
    Ok(())
}

/// Reads one varint length prefix; `Ok(None)` at a clean end of stream.
fn read_len(r: &mut dyn BufRead, at: u64) -> Result<Option<u64>, Failure> {
    let mut v = 0u64;
    for i in 0..10 {
        let mut b = [0u8; 1];
        if r.read(&mut b)? == 0 {
            return if i == 0 { Ok(None) } else { Err(Failure::Input(format!("truncated at byte {} (length prefix)", at + i))) };
        }
        v |= ((b[0] & 0x7f) as u64) << (7 * i);
        if b[0] < 0x80 {
            return Ok(Some(v));
        }
    }
    Err(Failure::Input(format!("varint_too_long at byte {at} (length prefix)")))
}

/// Iterates the messages of a delimited stream (or the single message of a plain input),
/// holding one message in memory at a time.
fn for_each_message(
    delimited: bool,
    input: &mut dyn BufRead,
    mut f: impl FnMut(&[u8], u64, u64) -> Result<(), Failure>,
) -> Result<(), Failure> {
    let mut buf = Vec::new();
    if !delimited {
        input.read_to_end(&mut buf)?;
        return f(&buf, 0, 0);
    }
    let (mut at, mut index) = (0u64, 0u64);
    while let Some(len) = read_len(input, at)? {
        let start = at + heapwire_cpu::varint_len(len) as u64;
        if len > MAX_MESSAGE_BYTES {
            return Err(Failure::Input(format!("length_past_end at byte {at} (message {index}: {len} bytes claimed)")));
        }
        buf.clear();
        // `take` grows the buffer only as bytes arrive: a huge claimed length costs nothing.
        let got = input.take(len).read_to_end(&mut buf)? as u64;
        if got < len {
            return Err(Failure::Input(format!("truncated at byte {} (message {index} claims {len} bytes)", start + got)));
        }
        f(&buf, start, index)?;
        at = start + len;
        index += 1;
    }
    Ok(())
}

fn rejected(e: DecodeError, start: u64, index: u64, delimited: bool) -> Failure {
    let at = start + e.offset as u64;
    if delimited {
        Failure::Input(format!("{} at byte {at} (message {index})", e.kind.name()))
    } else {
        Failure::Input(format!("{} at byte {at}", e.kind.name()))
    }
}

pub fn decode(
    s: &CompiledSchema,
    mi: usize,
    opts: &DecodeOptions,
    delimited: bool,
    json: bool,
    input: &mut dyn BufRead,
    out: &mut dyn Write,
) -> Result<(), Failure> {
    let mut dec = Decoder::new(s);
    let mut image = Vec::new();
    let mut text = Vec::new();
    let mut opts = opts.clone();
    for_each_message(delimited, input, |msg, start, index| {
        dec.decode(mi, msg, &opts, &mut image).map_err(|e| rejected(e, start, index, delimited))?;
        if json {
            text.clear();
            let view = heapwire_image::ImageView::for_schema(s, &image, opts.base);
            heapwire_cpu::json::print::to_json_into(s, mi, &view, 0, &mut text)
                .map_err(|e| Failure::Input(format!("json: {e}")))?;
            text.push(b'\n');
            write_out(out, &text)?;
        } else {
            write_out(out, &image)?;
            // The next image of a stream lives right after this one.
            opts.base += image.len() as u64;
        }
        Ok(())
    })
}

/// Writes one encoded message, preceded by its varint length with `--delimited`.
fn write_message(out: &mut dyn Write, wire: &[u8], delimited: bool) -> Result<(), Failure> {
    if delimited {
        let mut len = Vec::with_capacity(10);
        heapwire_cpu::put_varint(&mut len, wire.len() as u64);
        write_out(out, &len)?;
    }
    write_out(out, wire)
}

fn write_out(out: &mut dyn Write, b: &[u8]) -> Result<(), Failure> {
    match out.write_all(b) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => std::process::exit(0),
        r => Ok(r?),
    }
}

/// The JSON documents of an `encode` input with their byte offsets: the whole input, or
/// with `--delimited` one document per non-blank line.
fn json_documents(text: &[u8], delimited: bool) -> Result<Vec<(usize, &str)>, Failure> {
    let text = std::str::from_utf8(text).map_err(|e| Failure::Input(format!("invalid_utf8 at byte {} (JSON input)", e.valid_up_to())))?;
    if !delimited {
        return Ok(vec![(0, text)]);
    }
    let mut at = 0;
    Ok(text
        .split_inclusive('\n')
        .map(|l| {
            let r = (at, l);
            at += l.len();
            r
        })
        .filter(|(_, l)| !l.trim().is_empty())
        .collect())
}

pub fn encode_json(s: &CompiledSchema, mi: usize, delimited: bool, text: &[u8], out: &mut dyn Write) -> Result<(), Failure> {
    let docs = json_documents(text, delimited)?;
    let mut wire = Vec::new();
    for (line_start, doc) in docs {
        wire.clear();
        heapwire_cpu::json::parse::from_json(s, mi, doc.as_bytes(), &mut wire).map_err(|e| Failure::Input(format!("json at byte {line_start}: {e}")))?;
        write_message(out, &wire, delimited)?;
    }
    Ok(())
}

pub fn bench(s: &CompiledSchema, mi: usize, data: &[u8], reps: usize, out: &mut dyn Write) -> Result<(), Failure> {
    // Split the stream first so only decoding is timed.
    let mut msgs = Vec::new();
    let mut cursor = data;
    for_each_message(true, &mut cursor, |m, start, _| {
        msgs.push((start as usize, m.len()));
        Ok(())
    })?;
    if msgs.is_empty() {
        return Err(Failure::Input("no messages in the input".into()));
    }
    let payload: usize = msgs.iter().map(|m| m.1).sum();
    let mut dec = Decoder::new(s);
    let opts = DecodeOptions::default();
    let mut image = Vec::new();
    // Validate once (and warm up) before timing.
    for (i, &(st, len)) in msgs.iter().enumerate() {
        dec.decode(mi, &data[st..st + len], &opts, &mut image).map_err(|e| rejected(e, st as u64, i as u64, true))?;
    }
    let mut times = Vec::with_capacity(reps);
    for r in 0..reps {
        let t = Instant::now();
        for &(st, len) in &msgs {
            let _ = dec.decode(mi, std::hint::black_box(&data[st..st + len]), &opts, &mut image);
            std::hint::black_box(&image);
        }
        times.push(t.elapsed().as_secs_f64());
        eprint!("\rbench: rep {}/{reps}", r + 1);
    }
    eprintln!();
    times.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let med = times[times.len() / 2];
    writeln!(out, "messages: {}, payload: {} bytes, reps: {reps}", msgs.len(), payload)?;
    writeln!(out, "decode: {:.1} MB/s, {:.0} msg/s", payload as f64 / med / 1e6, msgs.len() as f64 / med)?;
    Ok(())
}

/// `decode --wire objgraph`: object graphs (docs/objgraph-wire.md) into heap images of
/// C++-style objects at `--base`, or JSON (objects by id, references as `{"@ref": id}`).
pub fn objgraph_decode(
    s: &CompiledSchema,
    mi: usize,
    opts: &DecodeOptions,
    delimited: bool,
    json: bool,
    input: &mut dyn BufRead,
    out: &mut dyn Write,
) -> Result<(), Failure> {
    use heapwire_cpu::objgraph::{json::print_json, ObjDecoder};
    objgraph_class_check(s, mi)?;
    let mut dec = ObjDecoder::new(s);
    let mut image = Vec::new();
    let mut text = Vec::new();
    let mut opts = opts.clone();
    for_each_message(delimited, input, |msg, start, index| {
        dec.decode(mi, msg, &opts, &mut image).map_err(|e| {
            let at = start + e.offset;
            Failure::Input(if delimited {
                format!("{} at byte {at} (message {index})", e.kind.name())
            } else {
                format!("{} at byte {at}", e.kind.name())
            })
        })?;
        if json {
            text.clear();
            print_json(&dec, &image, opts.base, &mut text);
            if delimited {
                // One document per line (strings never hold raw newlines).
                text.retain(|&b| b != b'\n');
                text.push(b'\n');
            }
            write_out(out, &text)?;
        } else {
            write_out(out, &image)?;
            opts.base += image.len() as u64;
        }
        Ok(())
    })
}

fn objgraph_class_check(s: &CompiledSchema, mi: usize) -> Result<(), Failure> {
    if s.class_of(mi).is_none() {
        return Err(Failure::Usage(format!(
            "{} is not a class: --wire objgraph needs a message with option (heapwire.class) (heapwire/options.proto)",
            s.messages[mi].full_name
        )));
    }
    Ok(())
}

/// `encode --wire objgraph --from-json`: the JSON `decode --wire objgraph --json` prints,
/// back to wire bytes (with `--delimited`: one document per line, length-prefixed).
pub fn objgraph_encode(s: &CompiledSchema, mi: usize, delimited: bool, text: &[u8], out: &mut dyn Write) -> Result<(), Failure> {
    use heapwire_cpu::objgraph::{json::parse_json, Tables};
    objgraph_class_check(s, mi)?;
    let docs = json_documents(text, delimited)?;
    let t = Tables::new(s);
    let mut wire = Vec::new();
    for (line_start, doc) in docs {
        parse_json(s, &t, mi, doc, &mut wire).map_err(|e| Failure::Input(format!("{} at byte {}", e.kind, line_start + e.offset)))?;
        write_message(out, &wire, delimited)?;
    }
    Ok(())
}

/// `compile --rtl`: the generated core and the hand-written engine files it needs.
pub fn rtl_core(s: &CompiledSchema, stem: &str, dir: &Path) -> Result<(), Failure> {
    heapwire_rtl::check_supported(s).map_err(|e| Failure::Usage(format!("--rtl: unsupported by the hardware core: {e}")))?;
    let files = heapwire_rtl::write_core(s, stem, dir).map_err(|e| Failure::Usage(format!("{}: {e}", dir.display())))?;
    for f in files {
        eprintln!("wrote {}", f.display());
    }
    Ok(())
}

/// `sim`: the generated core (protobuf, or objgraph with `objgraph`) in Icarus Verilog on
/// each message of the input; the images on stdout (what `decode` writes: with
/// `--delimited` each image is relocated to the end of the previous one), the total
/// `cycles: N` on stderr, also when a message is rejected.
pub fn sim(
    s: &CompiledSchema,
    mi: usize,
    objgraph: bool,
    base: u64,
    delimited: bool,
    input: &mut dyn BufRead,
    out: &mut dyn Write,
) -> Result<(), Failure> {
    if objgraph {
        objgraph_class_check(s, mi)?;
    }
    let (mut base, mut cycles) = (base, 0u64);
    let res = for_each_message(delimited, input, |msg, start, index| {
        let r = if objgraph {
            heapwire_rtl::simulate_objgraph(s, mi, msg, &heapwire_rtl::OgSimOptions { base, ..Default::default() })
        } else {
            heapwire_rtl::simulate(s, mi, msg, &heapwire_rtl::SimOptions { base, ..Default::default() })
        };
        match r {
            Ok(r) => {
                cycles += r.cycles;
                write_out(out, &r.image)?;
                base += r.image.len() as u64;
                Ok(())
            }
            Err(heapwire_rtl::SimError::Rejected { kind, offset, cycles: c }) => {
                cycles += c;
                let at = start + offset;
                Err(Failure::Input(if delimited {
                    format!("{kind} at byte {at} (message {index})")
                } else {
                    format!("{kind} at byte {at}")
                }))
            }
            Err(e) => Err(Failure::Usage(e.to_string())),
        }
    });
    eprintln!("cycles: {cycles}");
    res
}

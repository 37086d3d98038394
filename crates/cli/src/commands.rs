//! What each subcommand does, on top of the library crates. Every decode goes through
//! the engine door (`heapwire_engine::Engine`); nothing here branches on the wire format.

use std::io::{BufRead, Write};
use std::path::Path;
use std::sync::Arc;
use crate::clock::BenchClock;

use heapwire_engine::framing::{put_varint, Delimited};
use heapwire_engine::{Engine, Error, Options, Rejection, Request, Wire};
use heapwire_json::protobuf::ParseOptions;
use heapwire_schema::CompiledSchema;

use crate::Failure;

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
    write(format!("{stem}.gen.h"), heapwire_emit::c_header(s, stem).as_bytes())?;
    write(format!("{stem}_views.gen.rs"), heapwire_emit::rust_views(s).as_bytes())?;
    if !s.classes.is_empty() {
        // Object-graph classes: the C++ header whose static_asserts check the layout.
        write(format!("{stem}_objgraph.gen.h"), heapwire_emit::cpp_header(s, stem).as_bytes())?;
    }
    if rtl {
        heapwire_emit::verilog::protobuf::check_supported(s).map_err(|e| Failure::Usage(format!("--rtl: unsupported by the hardware core: {e}")))?;
        let files = heapwire_emit::verilog::write_core(s, stem, dir).map_err(|e| Failure::Usage(format!("{}: {e}", dir.display())))?;
        for f in files {
            eprintln!("wrote {}", f.display());
        }
    }
    Ok(())
}

/// What a decoding command asks of an engine.
pub struct Job {
    pub schema: Arc<CompiledSchema>,
    pub msg: usize,
    pub wire: Wire,
    /// `base` is where the first image lives; with `delimited` each next image lives
    /// right after the previous one.
    pub options: Options,
    pub delimited: bool,
    pub json: bool,
}

/// Totals of a run, kept also when it stops at a rejected message.
#[derive(Default)]
pub struct Tally {
    pub messages: u64,
    pub cycles: u64,
}

fn failure(e: Error) -> Failure {
    match e {
        Error::Rejected(r) => Failure::Input(r.to_string()),
        Error::Engine(m) => Failure::Usage(m),
    }
}

/// Calls `f` with each message of the input (the whole input, or each message of a
/// delimited stream) and its start offset and index; one message in memory at a time.
pub(crate) fn for_each_message(
    delimited: bool,
    input: &mut dyn BufRead,
    mut f: impl FnMut(&[u8], u64, u64) -> Result<(), Failure>,
) -> Result<(), Failure> {
    if !delimited {
        let mut buf = Vec::new();
        input.read_to_end(&mut buf)?;
        return f(&buf, 0, 0);
    }
    let mut stream = Delimited::new(input);
    while let Some(m) = stream.next_frame().map_err(failure)? {
        f(m.bytes, m.start, m.index)?;
    }
    Ok(())
}

/// `decode` and `sim`: each message through `engine`; the images (or JSON documents)
/// on `out`.
pub fn decode(engine: &mut dyn Engine, job: &Job, input: &mut dyn BufRead, out: &mut dyn Write, tally: &mut Tally) -> Result<(), Failure> {
    engine.check(job.msg, job.wire).map_err(Failure::Usage)?;
    let mut printer = job.json.then(|| heapwire_json::Printer::new(job.schema.clone()));
    let mut options = job.options.clone();
    let (mut image, mut text) = (Vec::new(), Vec::new());
    for_each_message(job.delimited, input, |msg, start, index| {
        let req = Request { msg: job.msg, wire: job.wire, input: msg, options: &options };
        let r = engine.decode(&req, &mut image);
        tally.cycles += engine.last_cycles().unwrap_or(0);
        if let Err(Error::Rejected(r)) = r {
            let r = if job.delimited { r.within(start, index) } else { r };
            return Err(Failure::Input(r.to_string()));
        }
        r.map_err(failure)?;
        tally.messages += 1;
        if let Some(p) = &mut printer {
            text.clear();
            p.print(&req, &image, job.delimited, &mut text).map_err(|e| Failure::Input(format!("json: {e}")))?;
            write_out(out, &text)
        } else {
            write_out(out, &image)?;
            options.base += image.len() as u64;
            Ok(())
        }
    })
}

/// Writes one encoded message, preceded by its varint length with `--delimited`.
fn write_message(out: &mut dyn Write, wire: &[u8], delimited: bool) -> Result<(), Failure> {
    if delimited {
        let mut len = Vec::with_capacity(10);
        put_varint(&mut len, wire.len() as u64);
        write_out(out, &len)?;
    }
    write_out(out, wire)
}

pub(crate) fn write_out(out: &mut dyn Write, b: &[u8]) -> Result<(), Failure> {
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

/// `encode --from-json`: each JSON document to wire bytes.
pub fn encode_json(
    s: &CompiledSchema,
    msg: usize,
    wire: Wire,
    delimited: bool,
    opts: &ParseOptions,
    text: &[u8],
    out: &mut dyn Write,
) -> Result<(), Failure> {
    heapwire_engine::check_request(s, msg, wire).map_err(Failure::Usage)?;
    if opts.ignore_unknown_fields && wire != Wire::Protobuf {
        return Err(Failure::Usage("--ignore-unknown-fields: only for the protobuf JSON mapping".into()));
    }
    let (mut bytes, mut tables) = (Vec::new(), None);
    for (doc_start, doc) in json_documents(text, delimited)? {
        heapwire_json::parse_with(s, &mut tables, wire, msg, doc, opts, &mut bytes).map_err(|e| Failure::Input(e.describe(doc_start)))?;
        write_message(out, &bytes, delimited)?;
    }
    Ok(())
}

/// `encode --from-image`: the heap image `image` (root struct at offset 0, pointers for
/// `base`) back to wire bytes, unknown fields included. The image is untrusted: a bad
/// pointer or length is a rejection naming the image offset.
pub fn encode_image(s: &CompiledSchema, msg: usize, wire: Wire, base: u64, image: &[u8], out: &mut dyn Write) -> Result<(), Failure> {
    heapwire_engine::check_request(s, msg, wire).map_err(Failure::Usage)?;
    if wire != Wire::Protobuf {
        return Err(Failure::Usage("--from-image: only for --wire protobuf".into()));
    }
    let view = heapwire_image::ImageView::for_schema(s, image, base);
    let mut bytes = Vec::new();
    heapwire_cpu::protobuf::encode::encode(s, msg, &view, 0, &mut bytes).map_err(|e| Failure::Input(format!("image: {e}")))?;
    write_out(out, &bytes)
}

/// `bench`: decode throughput through the engine door, median of `reps` passes over every
/// message of the input, each timed with `clock`.
pub fn bench(
    engine: &mut dyn Engine,
    job: &Job,
    data: &[u8],
    reps: usize,
    clock: BenchClock,
    out: &mut dyn Write,
) -> Result<(), Failure> {
    engine.check(job.msg, job.wire).map_err(Failure::Usage)?;
    // Split the stream first so only decoding is timed.
    let mut msgs = Vec::new();
    let mut cursor = data;
    for_each_message(job.delimited, &mut cursor, |m, start, _| {
        msgs.push((start as usize, m.len()));
        Ok(())
    })?;
    if msgs.is_empty() {
        return Err(Failure::Input("no messages in the input".into()));
    }
    let payload: usize = msgs.iter().map(|m| m.1).sum();
    let mut image = Vec::new();
    fn request<'a>(job: &'a Job, input: &'a [u8]) -> Request<'a> {
        Request { msg: job.msg, wire: job.wire, input, options: &job.options }
    }
    // Validate once (and warm up) before timing.
    for (i, &(st, len)) in msgs.iter().enumerate() {
        engine.decode(&request(job, &data[st..st + len]), &mut image).map_err(|e| match e {
            Error::Rejected(r) => Failure::Input(Rejection::within(r, st as u64, i as u64).to_string()),
            e => failure(e),
        })?;
    }
    let mut times = Vec::with_capacity(reps);
    for r in 0..reps {
        let t = clock.now();
        for &(st, len) in &msgs {
            // No black_box on the input: the engine is behind a `dyn` call the compiler
            // cannot see through, and black_box's spill of the slice (two 8-byte stores
            // read back as one 16-byte load) stalled store forwarding on every message,
            // 12% of the time on a stream of 2-byte messages.
            let _ = engine.decode(&request(job, &data[st..st + len]), &mut image);
            std::hint::black_box(&image);
        }
        let secs = clock.now() - t;
        times.push(secs);
        eprintln!("bench: rep {}/{reps}: {:.1} MB/s", r + 1, payload as f64 / secs / 1e6);
    }
    times.sort_by(f64::total_cmp);
    let n = times.len();
    // The same median as the baselines in bench/: the mean of the middle two for even n.
    let med = if n % 2 == 1 { times[n / 2] } else { (times[n / 2 - 1] + times[n / 2]) / 2.0 };
    writeln!(out, "messages: {}, payload: {} bytes, reps: {reps}, clock: {}", msgs.len(), payload, clock.name())?;
    writeln!(out, "decode: {:.1} MB/s, {:.0} msg/s", payload as f64 / med / 1e6, msgs.len() as f64 / med)?;
    Ok(())
}

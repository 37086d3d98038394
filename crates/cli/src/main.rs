//! The `heapwire` command: argument parsing and dispatch, nothing else.
//!
//! Exit status: 0 ok; 1 the input was rejected (one line on stderr: kind and byte
//! offset); 2 usage or schema error.

use std::io::{self, BufRead, BufReader, BufWriter, Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::builder::TypedValueParser;
use clap::{Args, Parser, Subcommand, ValueEnum};
use heapwire_engine::Options;
use heapwire_schema::{CompiledSchema, LayoutOptions, PointerWidth};

mod clock;
mod commands;
mod device;

#[derive(Parser)]
#[command(name = "heapwire", version, about = "Wire bytes into ready-to-use heap images: one schema, every engine, the same bytes")]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Compile a .proto schema: table file, C header, Rust views (and the Verilog cores, bare and on AXI buses, with --rtl).
    Compile {
        schema: PathBuf,
        #[command(flatten)]
        layout: LayoutArgs,
        #[arg(short = 'I', long = "include", value_name = "DIR")]
        include: Vec<PathBuf>,
        #[arg(short = 'o', long = "out", value_name = "OUTDIR")]
        out: PathBuf,
        /// Also generate the Verilog deserializer core.
        #[arg(long)]
        rtl: bool,
    },
    /// Decode wire bytes into a heap image (or JSON).
    Decode {
        #[command(flatten)]
        common: Common,
        #[command(flatten)]
        image: ImageArgs,
        /// Largest image accepted, in bytes.
        #[arg(long, default_value_t = 1 << 30)]
        max_image_bytes: u64,
        /// Input file, or - for standard input.
        #[arg(default_value = "-")]
        input: String,
    },
    /// Encode JSON, or a heap image, into wire bytes.
    Encode {
        #[command(flatten)]
        common: Common,
        /// The input is JSON (the proto3 JSON mapping, or the object-graph JSON form
        /// with --wire objgraph).
        #[arg(long, required_unless_present = "from_image", conflicts_with = "from_image")]
        from_json: bool,
        /// The input is one heap image as `decode` writes it (same schema and layout
        /// flags); unknown fields it kept are written back. Protobuf only.
        #[arg(long, conflicts_with = "delimited")]
        from_image: bool,
        /// With --from-image: the address the image was decoded for (decode's --base).
        #[arg(long, value_parser = parse_addr, default_value = "0")]
        base: u64,
        /// With --from-json: skip members that name no field and enum names the enum
        /// does not have (the official parser's ignore_unknown_fields).
        #[arg(long, conflicts_with = "from_image")]
        ignore_unknown_fields: bool,
        #[arg(default_value = "-")]
        input: String,
    },
    /// Measure decode throughput (single core, through the engine door).
    Bench {
        #[arg(long)]
        schema: PathBuf,
        #[arg(short = 'I', long = "include", value_name = "DIR")]
        include: Vec<PathBuf>,
        #[arg(long = "type", value_name = "pkg.Type")]
        type_name: String,
        #[arg(long, value_enum, default_value = "protobuf")]
        wire: Wire,
        /// The input is a stream of varint-delimited messages (otherwise one message).
        #[arg(long)]
        delimited: bool,
        /// Timed passes over the input; the median is reported.
        #[arg(long, default_value_t = 9)]
        reps: usize,
        /// The clock passes are timed with: `cpu`, this thread's CPU time (time spent
        /// waiting for a core while other processes run is not counted), or `wall`,
        /// elapsed time. The baselines in bench/ take the same flag and default.
        #[arg(long, value_name = "cpu|wall", value_parser = clock::BenchClock::parse, default_value = "cpu")]
        clock: clock::BenchClock,
        input: PathBuf,
    },
    /// A device: serve one, or read one's header block and counters.
    Device {
        #[command(subcommand)]
        cmd: DeviceCmd,
    },
    /// Decode on a device (`heapwire device serve`, or `inproc:` for one in this process):
    /// the same images, JSON, rejection lines and exit codes as `decode`.
    Submit {
        /// inproc:[cpu|sim][?slots=N&in=BYTES&out=BYTES], udp://HOST:PORT or tcp://HOST:PORT.
        #[arg(long)]
        device: String,
        #[command(flatten)]
        common: Common,
        #[command(flatten)]
        image: ImageArgs,
        /// Requests in flight at most (images of a --delimited stream go one at a time:
        /// each one's base is where the previous one ended).
        #[arg(long, default_value_t = 16)]
        inflight: usize,
        /// Shared key (at least 16 bytes) authenticating every datagram or frame.
        #[arg(long)]
        key_file: Option<PathBuf>,
        /// Seconds a request may take, retransmissions included, before it fails.
        #[arg(long, default_value_t = 30.0)]
        timeout: f64,
        /// Input file, or - for standard input.
        #[arg(default_value = "-")]
        input: String,
    },
    /// Run the generated Verilog core in simulation (Icarus Verilog); writes the image.
    /// The core is built as the recorded figures use it (docs/hardware.md): protobuf
    /// 128-bit input and 256-bit output words, the second write port, one pass first;
    /// objgraph 64-bit input and 256-bit output words.
    Sim {
        #[command(flatten)]
        common: Common,
        /// Address the image will live at (decimal or 0x hex); pointers are base + offset.
        #[arg(long, value_parser = parse_addr, default_value = "0")]
        base: u64,
        /// Input memory word width in bits: 32, 64 or 128 (default 128 protobuf, 64 objgraph).
        #[arg(long, value_parser = TypedValueParser::map(clap::builder::PossibleValuesParser::new(["32", "64", "128"]), |v| v.parse::<u32>().unwrap()))]
        in_width: Option<u32>,
        /// Output memory word width in bits: 64, 128 or 256.
        #[arg(long, default_value = "256", value_parser = TypedValueParser::map(clap::builder::PossibleValuesParser::new(["64", "128", "256"]), |v| v.parse::<u32>().unwrap()))]
        out_width: u32,
        /// Protobuf core: leave the output memory's second port read-only (OUT2_WR=0).
        #[arg(long)]
        no_out2: bool,
        /// Protobuf core: always the two passes (ONE_PASS=0), no one-pass attempt first.
        #[arg(long)]
        two_pass: bool,
        /// Protobuf core: the build with run-time-loaded tables (TABLES=1, default table
        /// sizes), the schema's tables loaded before each decode; a schema beyond the sizes
        /// is an error naming what does not fit.
        #[arg(long)]
        tables: bool,
        /// Input file, or - for standard input.
        #[arg(default_value = "-")]
        input: String,
    },
}

/// What `decode` and `submit` write, and where.
#[derive(Args)]
struct ImageArgs {
    /// Print the proto3 JSON mapping instead of the image.
    #[arg(long, conflicts_with = "base")]
    json: bool,
    /// Address the image will live at (decimal or 0x hex); pointers are base + offset.
    #[arg(long, value_parser = parse_addr, default_value = "0")]
    base: u64,
    /// Deepest nesting accepted.
    #[arg(long, default_value_t = 100)]
    max_depth: u32,
}

#[derive(Subcommand)]
enum DeviceCmd {
    /// Serve a device on a UDP or TCP port until stopped.
    Serve {
        /// Address to listen on (loopback unless told otherwise).
        #[arg(long, default_value = "127.0.0.1:7700")]
        listen: String,
        #[arg(long, value_enum, default_value = "udp")]
        transport: TransportArg,
        /// The engine behind the device: cpu, or sim (the generated Verilog cores,
        /// Verilator-built; memory sizes must be powers of two; the protobuf core with its
        /// tables loaded per schema), or sim-rom (sim with the protobuf core built per schema).
        #[arg(long, default_value = "cpu")]
        engine: String,
        /// Slots, each holding one installed schema.
        #[arg(long, default_value_t = 4)]
        slots: u32,
        /// Input memory (the longest input), bytes with an optional k or M.
        #[arg(long, default_value = "4M", value_parser = parse_size)]
        in_bytes: u32,
        /// Output memory (the largest image), bytes with an optional k or M.
        #[arg(long, default_value = "32M", value_parser = parse_size)]
        out_bytes: u32,
        /// Shared key (at least 16 bytes): datagrams or frames without its MAC are dropped.
        #[arg(long)]
        key_file: Option<PathBuf>,
        /// Faults injected into the server's own datagrams, e.g. drop=0.1,dup=0.05,reorder=0.05,corrupt=0.01.
        #[arg(long)]
        fault: Option<String>,
    },
    /// Print a device's header block, slots and counters.
    Info {
        /// inproc:..., udp://HOST:PORT or tcp://HOST:PORT.
        uri: String,
        #[arg(long)]
        key_file: Option<PathBuf>,
    },
}

#[derive(Clone, Copy, ValueEnum)]
enum TransportArg {
    Udp,
    Tcp,
}

fn parse_size(s: &str) -> Result<u32, String> {
    heapwire_device::parse_size(s).ok_or_else(|| format!("'{s}' is not a size (bytes, or a number with k or M, below 4 GiB)"))
}

#[derive(Args)]
struct LayoutArgs {
    /// Pointer (and length) width in the image.
    #[arg(long, value_enum, default_value = "64")]
    pointer_width: PtrWidth,
    /// Start every struct with a header word from the per-type registers.
    #[arg(long)]
    header_word: bool,
}

#[derive(Clone, Copy, ValueEnum)]
enum PtrWidth {
    #[value(name = "64")]
    P64,
    #[value(name = "32")]
    P32,
}

#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
enum Wire {
    Protobuf,
    Objgraph,
}

impl From<Wire> for heapwire_engine::Wire {
    fn from(w: Wire) -> Self {
        match w {
            Wire::Protobuf => heapwire_engine::Wire::Protobuf,
            Wire::Objgraph => heapwire_engine::Wire::Objgraph,
        }
    }
}

#[derive(Args)]
struct Common {
    /// The .proto schema (or a table file written by `heapwire compile`).
    #[arg(long)]
    schema: PathBuf,
    #[arg(short = 'I', long = "include", value_name = "DIR")]
    include: Vec<PathBuf>,
    /// Fully qualified message type.
    #[arg(long = "type", value_name = "pkg.Type")]
    type_name: String,
    #[arg(long, value_enum, default_value = "protobuf")]
    wire: Wire,
    /// A stream of messages, each preceded by its varint length.
    #[arg(long)]
    delimited: bool,
    #[command(flatten)]
    layout: LayoutArgs,
}

fn parse_addr(s: &str) -> Result<u64, String> {
    let r = if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        u64::from_str_radix(h, 16)
    } else {
        s.parse()
    };
    r.map_err(|e| format!("not an address: {e}"))
}

/// How a command failed: rejected input (exit 1) or usage/schema (exit 2).
pub enum Failure {
    Input(String),
    Usage(String),
}

impl From<io::Error> for Failure {
    fn from(e: io::Error) -> Self {
        Failure::Usage(format!("i/o: {e}"))
    }
}

fn layout(a: &LayoutArgs) -> LayoutOptions {
    LayoutOptions {
        pointer_width: match a.pointer_width {
            PtrWidth::P64 => PointerWidth::P64,
            PtrWidth::P32 => PointerWidth::P32,
        },
        header_words: a.header_word,
    }
}

fn load_schema(path: &std::path::Path, include: &[PathBuf], l: LayoutOptions) -> Result<CompiledSchema, Failure> {
    heapwire_schema::load(path, include, l).map_err(|e| Failure::Usage(format!("schema: {e}")))
}

fn message_index(schema: &CompiledSchema, name: &str) -> Result<usize, Failure> {
    schema.message_index(name).ok_or_else(|| {
        let mut known: Vec<&str> = schema.messages.iter().filter(|m| !m.is_map_entry()).map(|m| m.full_name.as_str()).collect();
        known.truncate(12);
        Failure::Usage(format!("unknown message type '{name}' (the schema has: {})", known.join(", ")))
    })
}

fn open_input(input: &str) -> Result<Box<dyn BufRead>, Failure> {
    if input == "-" {
        Ok(Box::new(BufReader::with_capacity(1 << 16, io::stdin())))
    } else {
        let f = std::fs::File::open(input).map_err(|e| Failure::Usage(format!("{input}: {e}")))?;
        Ok(Box::new(BufReader::with_capacity(1 << 16, f)))
    }
}

fn read_all(input: &str) -> Result<Vec<u8>, Failure> {
    let mut v = Vec::new();
    open_input(input)?.read_to_end(&mut v).map_err(|e| Failure::Usage(format!("{input}: {e}")))?;
    Ok(v)
}

fn run(cli: Cli) -> Result<(), Failure> {
    let stdout = io::stdout();
    let mut out = BufWriter::with_capacity(1 << 16, stdout.lock());
    match cli.cmd {
        Cmd::Compile { schema, layout: l, include, out: dir, rtl } => {
            let s = load_schema(&schema, &include, layout(&l))?;
            commands::compile(&s, &schema, &dir, rtl)?;
        }
        Cmd::Decode { common, image: ImageArgs { json, base, max_depth }, max_image_bytes, input } => {
            let s = Arc::new(load_schema(&common.schema, &common.include, layout(&common.layout))?);
            let msg = message_index(&s, &common.type_name)?;
            let opts = Options { base, max_depth, max_image_bytes, type_words: Vec::new() };
            let mut engine = heapwire_cpu::CpuEngine::new(s.clone());
            let job = commands::Job { schema: s, msg, wire: common.wire.into(), options: opts, delimited: common.delimited, json };
            commands::decode(&mut engine, &job, &mut *open_input(&input)?, &mut out, &mut commands::Tally::default())?;
        }
        Cmd::Encode { common, from_json: _, from_image, base, ignore_unknown_fields, input } => {
            let s = load_schema(&common.schema, &common.include, layout(&common.layout))?;
            let msg = message_index(&s, &common.type_name)?;
            if from_image {
                commands::encode_image(&s, msg, common.wire.into(), base, &read_all(&input)?, &mut out)?;
            } else {
                let opts = heapwire_json::protobuf::ParseOptions { ignore_unknown_fields, ..Default::default() };
                commands::encode_json(&s, msg, common.wire.into(), common.delimited, &opts, &read_all(&input)?, &mut out)?;
            }
        }
        Cmd::Bench { schema, include, type_name, wire, delimited, reps, clock, input } => {
            let s = Arc::new(load_schema(&schema, &include, LayoutOptions::default())?);
            let msg = message_index(&s, &type_name)?;
            let data = std::fs::read(&input).map_err(|e| Failure::Usage(format!("{}: {e}", input.display())))?;
            let mut engine = heapwire_cpu::CpuEngine::new(s.clone());
            let job = commands::Job { schema: s, msg, wire: wire.into(), options: Options::default(), delimited, json: false };
            commands::bench(&mut engine, &job, &data, reps.max(1), clock, &mut out)?;
        }
        Cmd::Device { cmd: DeviceCmd::Serve { listen, transport, engine, slots, in_bytes, out_bytes, key_file, fault } } => {
            let faults = fault
                .map(|f| f.parse::<heapwire_device::link::Faults>().map_err(|e| Failure::Usage(format!("--fault: {e}"))))
                .transpose()?;
            let transport = match transport {
                TransportArg::Udp => heapwire_device::link::Transport::Udp,
                TransportArg::Tcp => heapwire_device::link::Transport::Tcp,
            };
            if slots == 0 {
                return Err(Failure::Usage("--slots: a device needs at least one".into()));
            }
            let config = heapwire_device::Config { slots, in_bytes, out_bytes, ..Default::default() };
            let key = device::key(key_file.as_deref())?;
            device::serve(device::Serve { listen: &listen, transport, engine: &engine, config, key, faults })?;
        }
        Cmd::Device { cmd: DeviceCmd::Info { uri, key_file } } => {
            let opts = heapwire_device::OpenOptions { key: device::key(key_file.as_deref())?, ..Default::default() };
            device::info(&uri, &opts, &mut out)?;
        }
        Cmd::Submit { device: uri, common, image: ImageArgs { json, base, max_depth }, inflight, key_file, timeout, input } => {
            let s = Arc::new(load_schema(&common.schema, &common.include, layout(&common.layout))?);
            let msg = message_index(&s, &common.type_name)?;
            let options = Options { base, max_depth, ..Options::default() };
            let job = commands::Job { schema: s, msg, wire: common.wire.into(), options, delimited: common.delimited, json };
            let opts = heapwire_device::OpenOptions {
                inflight,
                key: device::key(key_file.as_deref())?,
                timeout: device::timeout(timeout)?,
                ..Default::default()
            };
            let name = common.schema.file_stem().and_then(|n| n.to_str()).unwrap_or("schema");
            device::submit(&uri, &opts, name, &job, &mut *open_input(&input)?, &mut out)?;
        }
        Cmd::Sim { common, base, in_width, out_width, no_out2, two_pass, tables, input } => {
            let s = Arc::new(load_schema(&common.schema, &common.include, layout(&common.layout))?);
            let msg = message_index(&s, &common.type_name)?;
            let mut engine = heapwire_sim::SimEngine::new(s.clone());
            if matches!(common.wire, Wire::Objgraph) {
                if no_out2 || two_pass || tables {
                    return Err(Failure::Usage("--no-out2, --two-pass and --tables are protobuf core parameters (not with --wire objgraph)".into()));
                }
                engine.objgraph.out_width = out_width;
                engine.objgraph.in_width = in_width.unwrap_or(64);
            } else {
                engine.protobuf.out_width = out_width;
                engine.protobuf.in_width = in_width.unwrap_or(128);
                engine.protobuf.out2_wr = !no_out2;
                engine.protobuf.one_pass = !two_pass;
                engine.protobuf.tables = tables;
                if tables {
                    heapwire_emit::verilog::protobuf::table_image(&s, &Default::default()).map_err(|e| Failure::Usage(format!("--tables: {e}")))?;
                }
            }
            let options = Options { base, ..Options::default() };
            let job = commands::Job { schema: s, msg, wire: common.wire.into(), options, delimited: common.delimited, json: false };
            let mut tally = commands::Tally::default();
            let r = commands::decode(&mut engine, &job, &mut *open_input(&input)?, &mut out, &mut tally);
            // Also when a message is rejected: the cycles up to and including it.
            eprintln!("cycles: {}", tally.cycles);
            r?;
        }
    }
    match out.flush() {
        Err(e) if e.kind() != io::ErrorKind::BrokenPipe => Err(e.into()),
        _ => Ok(()),
    }
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure::Input(m)) => {
            eprintln!("heapwire: rejected: {m}");
            ExitCode::from(1)
        }
        Err(Failure::Usage(m)) => {
            eprintln!("heapwire: error: {m}");
            ExitCode::from(2)
        }
    }
}

//! heapwire-rtl: the hardware core.
//!
//! * [`generate`] turns a compiled schema into Verilog: the descriptor ROMs and the
//!   `heapwire_core` wrapper around the generic engine `rtl/hw_pb_core.v`
//!   (which instantiates `hw_stream_reader`, `hw_varint_decoder`, `hw_utf8_check`).
//! * [`simulate`] runs that core in Icarus Verilog on one input and reads the image back:
//!   the "simulated RTL" engine. The compiled simulator is cached per generated design
//!   under the system temp directory.
//!
//! See `docs/hardware.md`.

mod engine;
mod gen;
mod objgraph;

use std::path::{Path, PathBuf};
use std::process::Command;

use heapwire_schema::CompiledSchema;

pub use engine::SimEngine;
pub use gen::{check_supported, generate};
pub use objgraph::{
    generate_og, og_check_supported, og_error_name, simulate_objgraph, write_og_core, OgSimOptions, OG_CORE_SOURCES, OG_ERROR_NAMES,
};

/// The hand-written RTL the generated core needs, embedded so the driver works from
/// any directory: (file name, text).
pub const CORE_SOURCES: &[(&str, &str)] = &[
    ("hw_pb_core.v", include_str!("../../../rtl/hw_pb_core.v")),
    ("hw_stream_reader.v", include_str!("../../../rtl/hw_stream_reader.v")),
    ("hw_varint_decoder.v", include_str!("../../../rtl/hw_varint_decoder.v")),
    ("hw_utf8_check.v", include_str!("../../../rtl/hw_utf8_check.v")),
];

/// Error codes of the core's error register, by code (index = code).
pub const ERROR_NAMES: &[&str] = &[
    "ok",
    "truncated",
    "varint_too_long",
    "field_number_zero",
    "invalid_wire_type",
    "length_past_end",
    "depth_exceeded",
    "invalid_utf8",
    "group_mismatch",
    "packed_length",
    "missing_required",
    "image_too_large",
    "bad_base",
    "capacity",
    "unsupported",
];

pub fn error_name(code: u32) -> &'static str {
    ERROR_NAMES.get(code as usize).copied().unwrap_or("unknown_error")
}

#[derive(Clone, Debug)]
pub struct SimOptions {
    /// Image base address (multiple of 8).
    pub base: u64,
    /// Deepest nesting accepted (a core parameter; changing it rebuilds the simulator).
    pub max_depth: u32,
    /// Cycle budget before the testbench gives up (0 = derived from the input size).
    pub max_cycles: u64,
    /// Output memory word width in bits (64, 128 or 256; a core parameter).
    pub out_width: u32,
    /// Input memory word width in bits (32, 64 or 128; a core parameter).
    pub in_width: u32,
    /// The core's ONE_PASS parameter: one pass first (default), or always two passes.
    pub one_pass: bool,
    /// The core's OUT2_WR parameter: short strings written through the output memory's
    /// second port (default), or that port only reads.
    pub out2_wr: bool,
}

impl Default for SimOptions {
    fn default() -> Self {
        SimOptions { base: 0, max_depth: 100, max_cycles: 0, out_width: 64, in_width: 64, one_pass: true, out2_wr: true }
    }
}

#[derive(Clone, Debug)]
pub struct SimOutput {
    pub image: Vec<u8>,
    pub cycles: u64,
}

/// Cycles the testbench saw in each (pass, state number of `hw_pb_core`) (see [`state_names`]).
pub type StateHistogram = Vec<(u8, u8, u64)>;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SimError {
    /// The core's error register: kind name (see [`ERROR_NAMES`]), byte offset.
    Rejected { kind: &'static str, offset: u64, cycles: u64 },
    /// The simulator is missing, failed, or the core hung (a bug, never an input verdict).
    Tool(String),
    /// The schema needs something the engine does not support.
    Unsupported(String),
}

impl std::fmt::Display for SimError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SimError::Rejected { kind, offset, .. } => write!(f, "{kind} at byte {offset}"),
            SimError::Tool(m) => write!(f, "simulation: {m}"),
            SimError::Unsupported(m) => write!(f, "unsupported by the hardware core: {m}"),
        }
    }
}

impl std::error::Error for SimError {}

/// Memory sizes of one simulator build (log2 words / entries).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct Sizes {
    in_aw: u32,
    out_aw: u32,
    inst: u32,
    cnt: u32,
    st: u32,
    depth: u32,
    out_width: u32,
    in_width: u32,
    one_pass: bool,
    out2_wr: bool,
}

fn log2_ceil(v: u64) -> u32 {
    if v <= 1 {
        0
    } else {
        64 - (v - 1).leading_zeros()
    }
}

/// Sizes that can never overflow for an `n`-byte input (docs/image-layout.md "Size bound";
/// every message instance costs at least 2 input bytes), rounded up to powers of two
/// with floors so that small inputs share one simulator build.
fn sizes_for(schema: &CompiledSchema, root: usize, n: usize, opts: &SimOptions) -> Sizes {
    let SimOptions { max_depth: depth, out_width, in_width, one_pass, out2_wr, .. } = *opts;
    let n = n as u64;
    let k = schema.messages.iter().map(|m| ((m.size as u64 + 7) & !7) / 2 + 8).max().unwrap_or(0).max(16);
    let img = ((schema.messages[root].size as u64 + 7) & !7) + n * k + 64;
    let inst = n / 2 + 2;
    let (mut max_nc, mut max_ns) = (1u64, 1u64);
    for m in &schema.messages {
        let s = gen::slots(m);
        max_nc = max_nc.max(s.n_counts as u64);
        max_ns = max_ns.max(s.n_state as u64);
    }
    Sizes {
        in_aw: log2_ceil(n.div_ceil(8) + 1).max(10),
        out_aw: log2_ceil(img.div_ceil(out_width as u64 / 8)).max(14 - log2_ceil(out_width as u64 / 64)),
        inst: log2_ceil(inst).max(12),
        cnt: log2_ceil(inst * max_nc).max(13),
        st: log2_ceil(inst * max_ns).max(13),
        depth,
        out_width,
        in_width,
        one_pass,
        out2_wr,
    }
}

fn fnv1a(parts: &[&[u8]]) -> u64 {
    let mut h: u64 = 0xcbf29ce484222325;
    for p in parts {
        for &b in *p {
            h ^= b as u64;
            h = h.wrapping_mul(0x100000001b3);
        }
        h ^= 0xff;
        h = h.wrapping_mul(0x100000001b3);
    }
    h
}

/// Testbench function reading an `IW`-bit word of the input memory `imem` (64-bit words,
/// `IN_AW` address bits) at an `IN_AW+1`-bit word address: both cores' testbenches.
pub(crate) const TB_IN_WORD: &str = "// the input memory's word at a (the input file holds 64-bit words)
function [IW-1:0] in_word;
    input [IN_AW:0] a;
begin
    if (IW == 128) in_word = {imem[{a[IN_AW-2:0], 1'b1}], imem[{a[IN_AW-2:0], 1'b0}]};
    else if (IW == 64) in_word = imem[a[IN_AW-1:0]];
    else in_word = a[0] ? imem[a[IN_AW:1]][63:32] : imem[a[IN_AW:1]][31:0];
end
endfunction
";

/// The testbenches' plusargs: input and output files, input length, root, base, cycle limit.
pub(crate) const TB_ARGS: &str = r#"    if (!$value$plusargs("in=%s", fin)) begin $display("tb: no +in"); $finish; end
    if (!$value$plusargs("out=%s", fout)) begin $display("tb: no +out"); $finish; end
    if (!$value$plusargs("len=%d", in_len)) in_len = 0;
    if (!$value$plusargs("root=%d", root)) root = 0;
    if (!$value$plusargs("base=%h", base)) base = 0;
    if (!$value$plusargs("maxcycles=%d", max_cycles)) max_cycles = 1000000;
"#;

/// The testbenches' run: a start pulse, then cycles (each running `each_cycle`) until done
/// or the limit, and the verdict lines `sim_report` reads.
pub(crate) fn tb_run(each_cycle: &str) -> String {
    format!(
        r#"    start <= 1'b1;
    @(posedge clk);
    start <= 1'b0;
    @(posedge clk);
    tb_cycles = 0;
    while (!done && tb_cycles < max_cycles) begin
        @(posedge clk);
        tb_cycles = tb_cycles + 1;
{each_cycle}    end
    repeat (3) @(posedge clk);
    if (!done) begin
        $display("timeout %0d", cycles);
        $finish;
    end
    $display("cycles %0d", cycles);
    $display("err %0d %0d", err_code, err_offset);
    $display("size %0d", image_size);
"#
    )
}

/// The protobuf testbench's per-cycle work: the state histogram (+hist) and trace (+trace).
const PB_EACH_CYCLE: &str = r#"        if (hist && !done) hist_n[{dut.core.pass_reg, dut.core.state_reg}] = hist_n[{dut.core.pass_reg, dut.core.state_reg}] + 1;
        if (trace) $display("t %0d state %0d pos %0d depth %0d ne_a %0d filn %h fila %h cdst %h crem %0d", tb_cycles, dut.core.state_reg, dut.core.pos, dut.core.depth_reg, dut.core.ne_a_reg, dut.core.filn_q, dut.core.fila_q, dut.core.cdst_reg, dut.core.crem_reg, " cb %h nc %h msg %h", dut.core.fr_cb_reg, dut.core.ma_nc, dut.core.fr_msg_reg);
"#;

fn testbench(sz: &Sizes) -> String {
    format!(
        r#"// generated testbench: input from +in=FILE (hex words), image to +out=FILE
`timescale 1ns / 1ps
module tb;
localparam IN_AW = {in_aw};
localparam OUT_AW = {out_aw};
localparam OW = {out_width};
localparam IW = {in_width};
reg clk = 1'b0;
reg rst = 1'b1;
reg start = 1'b0;
reg [31:0] in_len = 0;
reg [15:0] root = 0;
reg [63:0] base = 0;
reg [63:0] max_cycles = 0;
reg [63:0] tb_cycles = 0;
reg trace = 0;
reg hist = 0;
reg [63:0] hist_n [0:255];
wire busy, done;
wire [7:0] err_code;
wire [31:0] err_offset, image_size;
wire [63:0] cycles;
wire in_rd_en;
wire [IN_AW:0] in_addr;
reg [IW-1:0] in_rd_data = 0;
wire out_wr_en, out_rd_en, out2_wr_en;
wire [OUT_AW-1:0] out_wr_addr, out_rd_addr, out2_wr_addr;
wire [OW-1:0] out_wr_data, out2_wr_data;
wire [OW/8-1:0] out_wr_be, out2_wr_be;
reg [OW-1:0] out_rd_data = 0;
reg [63:0] imem [0:(1<<IN_AW)-1];
reg [OW-1:0] omem [0:(1<<OUT_AW)-1];
integer i, b, fd;
reg [1023:0] fin, fout;
heapwire_core #(.IN_WIDTH(IW), .IN_ADDR_WIDTH(IN_AW + 1), .OUT_WIDTH(OW), .OUT_ADDR_WIDTH(OUT_AW),
    .MAX_DEPTH({depth}), .INST_BITS({inst}), .CNT_BITS({cnt}), .ST_BITS({st}), .DROP_BITS({inst}), .ONE_PASS({one_pass}), .OUT2_WR({out2_wr})) dut (
    .clk(clk), .rst(rst), .start(start), .in_len(in_len), .root_msg(root), .base(base),
    .busy(busy), .done(done), .err_code(err_code), .err_offset(err_offset), .image_size(image_size), .cycles(cycles),
    .type_wr_en(1'b0), .type_wr_idx(16'd0), .type_wr_data(64'd0),
    .in_rd_en(in_rd_en), .in_addr(in_addr), .in_rd_data(in_rd_data),
    .out_wr_en(out_wr_en), .out_wr_addr(out_wr_addr), .out_wr_data(out_wr_data), .out_wr_be(out_wr_be),
    .out_rd_en(out_rd_en), .out_rd_addr(out_rd_addr), .out_rd_data(out_rd_data),
    .out2_wr_en(out2_wr_en), .out2_wr_addr(out2_wr_addr), .out2_wr_data(out2_wr_data), .out2_wr_be(out2_wr_be));
always #5 clk = ~clk;
{in_word}always @(posedge clk) begin
    if (in_rd_en) in_rd_data <= in_word(in_addr);
    if (out_rd_en) out_rd_data <= omem[out_rd_addr];
    if (out_wr_en)
        for (b = 0; b < OW/8; b = b + 1)
            if (out_wr_be[b]) omem[out_wr_addr][8*b +: 8] <= out_wr_data[8*b +: 8];
    if (out2_wr_en)
        for (b = 0; b < OW/8; b = b + 1)
            if (out2_wr_be[b]) omem[out2_wr_addr][8*b +: 8] <= out2_wr_data[8*b +: 8];
    // the second port is the read port's side of a dual-port RAM
    if (out2_wr_en && (out_rd_en || (out_wr_en && out_wr_addr == out2_wr_addr))) begin
        $display("conflict %0d out2_wr word %0d beside %s", cycles, out2_wr_addr, out_rd_en ? "a read" : "a write to it");
        $finish;
    end
end
initial begin
    // garbage, not zeros: the core must zero what it allocates
    for (i = 0; i < (1<<OUT_AW); i = i + 1) omem[i] = {{(OW/64){{64'hA5A5A5A5A5A5A5A5}}}};
    for (i = 0; i < (1<<IN_AW); i = i + 1) imem[i] = 64'h0;
{args}    trace = $test$plusargs("trace");
    hist = $test$plusargs("hist");
    for (i = 0; i < 256; i = i + 1) hist_n[i] = 0;
    if (in_len != 0) $readmemh(fin, imem);
    repeat (3) @(posedge clk);
    rst <= 1'b0;
    @(posedge clk);
{run}    if (hist) for (i = 0; i < 256; i = i + 1) if (hist_n[i] != 0) $display("hist %0d %0d %0d", i / 128, i % 128, hist_n[i]);
    if (err_code == 0) begin
        fd = $fopen(fout, "w");
        for (i = 0; i < (image_size + 7) / 8; i = i + 1) $fdisplay(fd, "%h", omem[i / (OW/64)][64*(i % (OW/64)) +: 64]);
        $fclose(fd);
    end
    $finish;
end
endmodule
"#,
        in_aw = sz.in_aw,
        out_aw = sz.out_aw,
        depth = sz.depth,
        inst = sz.inst,
        cnt = sz.cnt,
        st = sz.st,
        out_width = sz.out_width,
        in_width = sz.in_width,
        in_word = TB_IN_WORD,
        args = TB_ARGS,
        run = tb_run(PB_EACH_CYCLE),
        one_pass = sz.one_pass as u8,
        out2_wr = sz.out2_wr as u8
    )
}

/// Where compiled simulators are cached.
pub fn cache_dir() -> PathBuf {
    std::env::temp_dir().join("heapwire-rtl-sim")
}

fn tool(name: &str) -> String {
    std::env::var(format!("HEAPWIRE_{}", name.to_uppercase())).unwrap_or_else(|_| name.to_string())
}

/// Builds (or finds in the cache) the simulator for `schema` with `sz`; returns the .vvp path.
fn build(schema: &CompiledSchema, sz: &Sizes) -> Result<PathBuf, SimError> {
    let core = generate(schema, "schema");
    let tb = testbench(sz);
    compile_simulator("", CORE_SOURCES, &[("schema_core.gen.v", &core), ("tb.v", &tb)])
}

/// Compiles the hand-written `sources` and the `generated` files (top module `tb`) with
/// iverilog into a simulator cached under a hash of every text; returns the .vvp path.
/// `kind` separates the cores' cache entries.
pub(crate) fn compile_simulator(kind: &str, sources: &[(&str, &str)], generated: &[(&str, &str)]) -> Result<PathBuf, SimError> {
    let mut parts: Vec<&[u8]> = vec![kind.as_bytes()];
    parts.extend(generated.iter().chain(sources).map(|(_, text)| text.as_bytes()));
    let key = fnv1a(&parts);
    let dir = cache_dir().join(format!("{kind}{key:016x}"));
    let vvp = dir.join("sim.vvp");
    if vvp.exists() {
        return Ok(vvp);
    }
    std::fs::create_dir_all(&dir).map_err(|e| SimError::Tool(format!("{}: {e}", dir.display())))?;
    let uniq = format!("{}-{:?}", std::process::id(), std::thread::current().id()).replace(['(', ')'], "");
    let work = dir.join(format!("build-{uniq}"));
    std::fs::create_dir_all(&work).map_err(|e| SimError::Tool(format!("{}: {e}", work.display())))?;
    let mut files = Vec::new();
    for (name, text) in sources.iter().chain(generated) {
        let p = work.join(name);
        std::fs::write(&p, text).map_err(|e| SimError::Tool(e.to_string()))?;
        files.push(p);
    }
    let tmp = work.join("sim.vvp");
    let out = Command::new(tool("iverilog"))
        .arg("-g2012")
        .arg("-o")
        .arg(&tmp)
        .arg("-s")
        .arg("tb")
        .args(&files)
        .output()
        .map_err(|e| SimError::Tool(format!("cannot run iverilog ({e}); install Icarus Verilog (apt-get install iverilog)")))?;
    if !out.status.success() {
        return Err(SimError::Tool(format!("iverilog failed: {}", String::from_utf8_lossy(&out.stderr))));
    }
    std::fs::rename(&tmp, &vvp).map_err(|e| SimError::Tool(e.to_string()))?;
    let _ = std::fs::remove_dir_all(&work);
    Ok(vvp)
}

/// Per-run file names under the cache's `runs/` folder (unique per process and call),
/// with the input already written as 64-bit little-endian hex words.
pub(crate) struct RunFiles {
    pub stem: PathBuf,
    pub input: PathBuf,
    pub image: PathBuf,
}

pub(crate) fn prepare_run(prefix: &str, input: &[u8]) -> Result<RunFiles, SimError> {
    let run_dir = cache_dir().join("runs");
    std::fs::create_dir_all(&run_dir).map_err(|e| SimError::Tool(e.to_string()))?;
    static SEQ: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let stem = run_dir.join(format!("{prefix}{}-{n}", std::process::id()));
    let files = RunFiles { input: stem.with_extension("in.hex"), image: stem.with_extension("out.hex"), stem };
    let mut hex = String::with_capacity(input.len() * 3);
    for w in input.chunks(8) {
        let mut word = [0u8; 8];
        word[..w.len()].copy_from_slice(w);
        hex.push_str(&format!("{:016x}\n", u64::from_le_bytes(word)));
    }
    std::fs::write(&files.input, hex).map_err(|e| SimError::Tool(e.to_string()))?;
    Ok(files)
}

/// Writes the generated core for `schema` (and the hand-written modules it needs) into
/// `dir`: `<stem>_core.gen.v` plus copies of the engine files, and for a schema with
/// classes the objgraph core `<stem>_og_core.gen.v` and its engine files. Returns the paths.
pub fn write_core(schema: &CompiledSchema, stem: &str, dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    let p = dir.join(format!("{stem}_core.gen.v"));
    std::fs::write(&p, generate(schema, stem))?;
    out.push(p);
    for (name, text) in CORE_SOURCES {
        let p = dir.join(name);
        std::fs::write(&p, text)?;
        out.push(p);
    }
    // a schema with classes also gets the objgraph core
    if og_check_supported(schema).is_ok() {
        for p in write_og_core(schema, stem, dir)? {
            if !out.contains(&p) {
                out.push(p);
            }
        }
    }
    Ok(out)
}

/// Runs the generated core on `input` (protobuf binary of message `root`) in Icarus
/// Verilog and returns the image it wrote, or the error its error register holds.
/// Reads what a testbench printed (`cycles N`, `err CODE OFFSET`, `size N`, or
/// `timeout N` / `conflict ...`): the cycle count and image size, or the core's verdict as an error.
/// The image file is removed on every error path.
pub(crate) fn sim_report(text: &str, stderr: &[u8], image_file: &Path, names: fn(u32) -> &'static str) -> Result<(u64, usize), SimError> {
    let (mut cycles, mut errc, mut size) = (None, None, None);
    let mut failure = None;
    for line in text.lines() {
        let w: Vec<&str> = line.split_whitespace().collect();
        match w.as_slice() {
            ["cycles", c] => cycles = c.parse::<u64>().ok(),
            ["err", c, o] => errc = Some((c.parse::<u32>().unwrap_or(255), o.parse::<u64>().unwrap_or(0))),
            ["size", s] => size = s.parse::<usize>().ok(),
            ["timeout", c] => failure = Some(SimError::Tool(format!("core did not finish within {c} cycles"))),
            ["conflict", ..] => failure = Some(SimError::Tool(format!("output memory port misuse: {line}"))),
            _ => {}
        }
    }
    let result = match (failure, cycles, errc, size) {
        (Some(f), ..) => Err(f),
        (None, Some(cycles), Some((0, _)), Some(size)) => return Ok((cycles, size)),
        (None, Some(cycles), Some((code, offset)), Some(_)) => Err(SimError::Rejected { kind: names(code), offset, cycles }),
        _ => Err(SimError::Tool(format!("unexpected simulator output: {text}{}", String::from_utf8_lossy(stderr)))),
    };
    let _ = std::fs::remove_file(image_file);
    result
}

/// The state names of `hw_pb_core` by state number (from its `localparam S_...` list),
/// for reading [`SimOutput::histogram`].
pub fn state_names() -> Vec<(u8, String)> {
    let src = CORE_SOURCES[0].1;
    let mut out = Vec::new();
    for part in src.split([',', ';', '\n']) {
        let part = part.trim();
        if let Some((name, val)) = part.split_once('=') {
            let (name, val) = (name.trim(), val.trim());
            if let (true, Some(num)) = (name.starts_with("S_") && !name.contains(' '), val.strip_prefix("7'd")) {
                if let Ok(n) = num.parse::<u8>() {
                    out.push((n, name.to_string()));
                }
            }
        }
    }
    out
}

pub fn simulate(schema: &CompiledSchema, root: usize, input: &[u8], opts: &SimOptions) -> Result<SimOutput, SimError> {
    simulate_inner(schema, root, input, opts, false).map(|r| r.0)
}

/// [`simulate`], also returning the cycles spent per (pass, state) of the core.
pub fn simulate_with_histogram(schema: &CompiledSchema, root: usize, input: &[u8], opts: &SimOptions) -> Result<(SimOutput, StateHistogram), SimError> {
    simulate_inner(schema, root, input, opts, true)
}

fn simulate_inner(schema: &CompiledSchema, root: usize, input: &[u8], opts: &SimOptions, hist: bool) -> Result<(SimOutput, StateHistogram), SimError> {
    check_supported(schema).map_err(SimError::Unsupported)?;
    if root >= schema.messages.len() {
        return Err(SimError::Tool("message index out of range".into()));
    }
    if input.len() > (u32::MAX / 2) as usize {
        return Err(SimError::Rejected { kind: "capacity", offset: 0, cycles: 0 });
    }
    if ![64, 128, 256].contains(&opts.out_width) {
        return Err(SimError::Tool(format!("output width {} (64, 128 or 256)", opts.out_width)));
    }
    if ![32, 64, 128].contains(&opts.in_width) {
        return Err(SimError::Tool(format!("input width {} (32, 64 or 128)", opts.in_width)));
    }
    let sz = sizes_for(schema, root, input.len(), opts);
    let vvp = build(schema, &sz)?;
    let RunFiles { input: fin, image: fout, .. } = prepare_run("", input)?;
    let max_cycles = if opts.max_cycles > 0 { opts.max_cycles } else { 100_000 + 400 * input.len() as u64 };
    let out = Command::new(tool("vvp"))
        .arg("-n")
        .arg(&vvp)
        .arg(format!("+in={}", fin.display()))
        .arg(format!("+out={}", fout.display()))
        .arg(format!("+len={}", input.len()))
        .arg(format!("+root={root}"))
        .arg(format!("+base={:x}", opts.base))
        .arg(format!("+maxcycles={max_cycles}"))
        .args(std::env::var("HEAPWIRE_RTL_TRACE").ok().map(|_| "+trace"))
        .args(hist.then_some("+hist"))
        .output()
        .map_err(|e| SimError::Tool(format!("cannot run vvp ({e}); install Icarus Verilog (apt-get install iverilog)")));
    let _ = std::fs::remove_file(&fin);
    let out = out?;
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    if std::env::var("HEAPWIRE_RTL_TRACE").is_ok() {
        eprintln!("{text}");
    }
    let (cycles, size) = sim_report(&text, &out.stderr, &fout, error_name)?;
    let words = std::fs::read_to_string(&fout).map_err(|e| SimError::Tool(format!("image: {e}")));
    let _ = std::fs::remove_file(&fout);
    let words = words?;
    let mut image = Vec::with_capacity(size + 8);
    for line in words.lines() {
        let w = u64::from_str_radix(line.trim(), 16)
            .map_err(|_| SimError::Tool(format!("image word not fully defined (x/z bits): {line}")))?;
        image.extend_from_slice(&w.to_le_bytes());
    }
    if image.len() < size {
        return Err(SimError::Tool("image shorter than its size".into()));
    }
    image.truncate(size);
    let histogram = text
        .lines()
        .filter_map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            match w.as_slice() {
                ["hist", p, s, n] => Some((p.parse().ok()?, s.parse().ok()?, n.parse().ok()?)),
                _ => None,
            }
        })
        .collect();
    Ok((SimOutput { image, cycles }, histogram))
}

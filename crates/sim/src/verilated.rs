//! The simulated device: the generated core built by Verilator into a C++ model, run by
//! one long-lived process per core (protobuf and objgraph) that serves request after
//! request over pipes, with fixed input and output memories as a device has.
//!
//! [`VerilatedEngine`] builds the process's program once per design (cached under
//! [`crate::cache_dir`] by a hash of every source text and parameter), spawns it on the
//! first request of each wire format, speaks the framing of `vsim_main.cpp` (the C++
//! harness: the memories served as `heapwire_emit::testbench`'s Icarus testbench serves
//! them), and restarts it when it has died (the crash is kept, see
//! [`VerilatedEngine::crashes`]). With [`Config::tables`] the protobuf core is the build
//! with run-time-loaded tables, one program for every schema that fits it: the engine loads
//! its schema's table words over AXI4-Lite into a running process, taken from a [`Pool`]
//! that engines share, so a slot reloaded with another schema needs no new verilation nor
//! a new process. See `docs/hardware.md`, "The simulated device".

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use heapwire_emit::testbench::objgraph::Params as OgParams;
use heapwire_emit::testbench::protobuf::Params as PbParams;
use heapwire_emit::verilog::{self, log2_ceil};
use heapwire_engine::{check_request, copy_into, Decoded, Engine, EngineRegisters, Error, RejectKind, Rejection, Request, Wire};
use heapwire_schema::CompiledSchema;

use crate::cache::{cache_dir, entry, tool};
use crate::{objgraph, protobuf, SimError};

/// The C++ harness around the Verilated core (see its opening comment for the framing).
const HARNESS: &str = include_str!("vsim_main.cpp");

const REQ_MAGIC: u32 = 0x5152_5748; // "HWRQ"
const RESP_MAGIC: u32 = 0x5352_5748; // "HWRS"
const LOAD_MAGIC: u32 = 0x4C54_5748; // "HWTL"
const LOADED_MAGIC: u32 = 0x4154_5748; // "HWTA"

/// The loadable protobuf build's count and state slots per message (its count and state
/// memories are sized for these; a schema with more is served by its own ROM build).
pub const TABLES_COUNT_SLOTS: u32 = 16;
pub const TABLES_STATE_SLOTS: u32 = 8;

/// How many of a core's crashes [`VerilatedEngine::crashes`] keeps (the latest).
const MAX_CRASHES_KEPT: usize = 64;

/// How the device is built: its memories (fixed, as a device's are) and the cores'
/// parameters. Changing any of them builds another program (cached).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    /// Input memory size in bytes (a power of two, 1 KiB to 1 GiB): longer inputs are
    /// refused with [`RejectKind::Capacity`] before they reach the core.
    pub in_bytes: u64,
    /// Output memory size in bytes (a power of two, at least 1 KiB, at most 2 GiB): the
    /// largest image.
    pub out_bytes: u64,
    /// Input memory word width in bits (32, 64 or 128), both cores.
    pub in_width: u32,
    /// Output memory word width in bits (64, 128 or 256) of the protobuf core.
    pub protobuf_out_width: u32,
    /// Output memory word width in bits (64, 128 or 256) of the objgraph core.
    pub objgraph_out_width: u32,
    /// The protobuf core's MAX_DEPTH: requests must ask for this depth limit.
    pub max_depth: u32,
    /// The protobuf core's ONE_PASS and OUT2_WR parameters.
    pub one_pass: bool,
    pub out2_wr: bool,
    /// Drive each core inside its bus wrapper (`heapwire_axi` / `heapwire_og_axi`,
    /// `rtl/hw_axi_wrap.v`) through the device register map over AXI4-Lite, the input
    /// over AXI4-Stream and the image written by its AXI4 master (docs/hardware.md), instead
    /// of the core's memory ports.
    pub bus: bool,
    /// With `bus`: the protobuf core is the build with run-time-loaded tables
    /// (`generate_loadable`, TABLES=1, default table sizes), one program for every schema
    /// whose tables fit (`table_image`) with at most [`TABLES_COUNT_SLOTS`] count slots
    /// (repeated fields and one) and [`TABLES_STATE_SLOTS`] state slots (message fields and
    /// oneofs) per message; the schema's
    /// table words are loaded over AXI4-Lite (the wrapper's S_TABLE_ registers) into the
    /// running process. A schema that does not fit gets its own ROM build
    /// ([`VerilatedEngine::tables_fallback`] says why). The objgraph core is per schema.
    pub tables: bool,
}

impl Default for Config {
    /// 1 MiB in, 8 MiB out; the widths and parameters of [`protobuf::Options`] and
    /// [`objgraph::Options`]' defaults.
    fn default() -> Self {
        let (pb, og) = (protobuf::Options::default(), objgraph::Options::default());
        Config {
            in_bytes: 1 << 20,
            out_bytes: 8 << 20,
            in_width: pb.in_width,
            protobuf_out_width: pb.out_width,
            objgraph_out_width: og.out_width,
            max_depth: pb.max_depth,
            one_pass: pb.one_pass,
            out2_wr: pb.out2_wr,
            bus: false,
            tables: false,
        }
    }
}

impl Config {
    pub fn validate(&self) -> Result<(), String> {
        let pow2 = |v: u64, lo: u64, hi: u64| v.is_power_of_two() && (lo..=hi).contains(&v);
        if !pow2(self.in_bytes, 1 << 10, 1 << 30) {
            return Err(format!("input memory of {} bytes (a power of two, 1 KiB to 1 GiB)", self.in_bytes));
        }
        if !pow2(self.out_bytes, 1 << 10, 1 << 31) {
            return Err(format!("output memory of {} bytes (a power of two, 1 KiB to 2 GiB)", self.out_bytes));
        }
        if ![32, 64, 128].contains(&self.in_width) {
            return Err(format!("input width {} (32, 64 or 128)", self.in_width));
        }
        for w in [self.protobuf_out_width, self.objgraph_out_width] {
            if ![64, 128, 256].contains(&w) {
                return Err(format!("output width {w} (64, 128 or 256)"));
            }
        }
        if !(1..=4000).contains(&self.max_depth) {
            return Err(format!("max_depth {} (1..4000)", self.max_depth));
        }
        if self.tables && !self.bus {
            return Err("tables: the run-time-loaded tables are written through the bus wrapper's registers, so tables needs bus".into());
        }
        Ok(())
    }
}

/// The generated cores as a device with fixed memories: one Verilated process per wire
/// format, alive across requests. Images are the CPU engine's byte for byte, rejections
/// its kind and offset, with these device limits: an input longer than the input memory
/// is refused with `capacity` at byte `in_bytes`; an image larger than the output memory
/// is the objgraph core's `image_too_large` (the CPU engine's verdict with
/// `max_image_bytes` = `out_bytes`) but the protobuf core's `capacity` (at the field
/// that needed the space; it has no image-limit register, so a request's
/// `max_image_bytes` below `out_bytes` is refused as an engine error there).
pub struct VerilatedEngine {
    schema: Arc<CompiledSchema>,
    config: Config,
    protobuf: Core,
    objgraph: Core,
    image: Vec<u8>,
    last_cycles: Option<u64>,
    /// The bus wrapper's registers after the last request ([`Config::bus`]).
    last_registers: Option<EngineRegisters>,
    /// With [`Config::tables`]: the schema's table words and their fingerprint, or why
    /// the schema does not fit the loadable core (its own ROM build serves it).
    loadable: Option<Result<Arc<Tables>, String>>,
    /// Where the loadable protobuf process comes from and goes back to.
    pool: Pool,
}

/// A schema's table words (`table_image`) and a fingerprint of them.
struct Tables {
    words: Vec<(u32, u64)>,
    fingerprint: u64,
}

/// Idle processes of the loadable protobuf program ([`Config::tables`]), shared by the
/// engines made with clones of it (the device's engines): an engine takes one when it
/// starts (or spawns one) and gives it back when dropped, so a schema installed after
/// another loads its tables into the process that served the other.
#[derive(Clone, Default)]
pub struct Pool(Arc<Mutex<PoolInner>>);

#[derive(Default)]
struct PoolInner {
    idle: Vec<Proc>,
    stats: PoolStats,
    /// The loadable program built (or found) for a configuration, so that the next
    /// engine does not hash the sources and ask Verilator its version again.
    built: Vec<(Config, PathBuf)>,
}

/// What a [`Pool`]'s engines did with the loadable program.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PoolStats {
    /// Processes of the loadable program started.
    pub spawns: u64,
    /// Table loads into a running process, and the last one's cost.
    pub loads: u64,
    pub last_load: Option<TableLoad>,
    /// The loadable programs used (one per device configuration: no schema builds one).
    pub programs: Vec<PathBuf>,
}

/// One table load over AXI4-Lite: words, the simulated core's cycles (the bus writes from
/// the first S_TABLE_CTRL write to the read of tables_ok), and the wall time the host
/// waited for it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TableLoad {
    pub words: usize,
    pub cycles: u64,
    pub time: Duration,
}

impl Pool {
    pub fn stats(&self) -> PoolStats {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).stats.clone()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, PoolInner> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// One core's program and process.
struct Core {
    exe: Option<PathBuf>,
    proc: Option<Proc>,
    spawns: u64,
    crashes: Vec<String>,
}

struct Proc {
    exe: PathBuf,
    /// The fingerprint of the tables loaded into it (the loadable program).
    tables: Option<u64>,
    child: Child,
    stdin: ChildStdin,
    stdout: ChildStdout,
    /// The register values the process holds (None: not written since it started).
    regs: Option<Vec<u64>>,
    /// The bus wrapper's counters as last read (zero when it started or was reset).
    counters: [u64; N_COUNTERS],
}

/// The bus wrapper's counters the harness reads back: REQUESTS, BYTES_IN, BYTES_OUT,
/// REJECTIONS, PROTOCOL_ERRORS.
const N_COUNTERS: usize = 5;

/// One request's fields besides its input and registers.
struct Job {
    /// Message index (protobuf) or class index (objgraph).
    root: u32,
    base: u64,
    /// The objgraph core's `max_image` port (the protobuf core has none).
    max_image: u64,
    /// Cycles before the harness gives up and resets the core.
    max_cycles: u64,
}

/// The kind of each error-register value of a core.
type ErrorKinds = fn(u32) -> Option<RejectKind>;

/// What one request came back with.
struct Answer {
    status: u32,
    err: u32,
    offset: u32,
    size: u32,
    cycles: u64,
    /// Through the bus wrapper: its STATUS register as the request ended, and its
    /// counters (zeros when the request did not end).
    status_reg: u32,
    counters: [u64; N_COUNTERS],
}

impl VerilatedEngine {
    /// An engine for `schema` with the device `config`; nothing is built or started
    /// before the first request of each wire format (or [`VerilatedEngine::start`]).
    pub fn new(schema: Arc<CompiledSchema>, config: Config) -> Result<Self, SimError> {
        Self::with_pool(schema, config, Pool::default())
    }

    /// [`VerilatedEngine::new`] taking the loadable protobuf process from `pool` (and
    /// giving it back when dropped), with [`Config::tables`].
    pub fn with_pool(schema: Arc<CompiledSchema>, config: Config, pool: Pool) -> Result<Self, SimError> {
        config.validate().map_err(SimError::Tool)?;
        let core = || Core { exe: None, proc: None, spawns: 0, crashes: Vec::new() };
        let loadable = config.tables.then(|| loadable_tables(&schema).map(Arc::new));
        Ok(VerilatedEngine {
            schema,
            config,
            protobuf: core(),
            objgraph: core(),
            image: Vec::new(),
            last_cycles: None,
            last_registers: None,
            loadable,
            pool,
        })
    }

    /// With [`Config::tables`]: why this schema does not fit the loadable protobuf core
    /// (then its own ROM build serves it); None when it fits or tables are off.
    pub fn tables_fallback(&self) -> Option<&str> {
        match &self.loadable {
            Some(Err(e)) => Some(e),
            _ => None,
        }
    }

    /// The loadable protobuf core serves this schema.
    fn tables(&self, wire: Wire) -> Option<&Arc<Tables>> {
        match (&self.loadable, wire) {
            (Some(Ok(t)), Wire::Protobuf) => Some(t),
            _ => None,
        }
    }

    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Builds (or finds in the cache) and starts the process of `wire`'s core.
    pub fn start(&mut self, wire: Wire) -> Result<(), SimError> {
        self.ensure(wire)
    }

    /// How many times the process of `wire`'s core was started.
    pub fn spawns(&self, wire: Wire) -> u64 {
        self.core_ref(wire).spawns
    }

    /// The process id of `wire`'s core, while it runs.
    pub fn pid(&self, wire: Wire) -> Option<u32> {
        self.core_ref(wire).proc.as_ref().map(|p| p.child.id())
    }

    /// The deaths of `wire`'s process found so far, the latest 64 (how each ended and
    /// what it printed); each was followed by a restart.
    pub fn crashes(&self, wire: Wire) -> &[String] {
        &self.core_ref(wire).crashes
    }

    /// The program `wire`'s core runs in (built on first use).
    pub fn program(&mut self, wire: Wire) -> Result<PathBuf, SimError> {
        if let Some(p) = &self.core_ref(wire).exe {
            return Ok(p.clone());
        }
        verilog_check(&self.schema, wire)?;
        let exe = match wire {
            Wire::Protobuf if self.tables(wire).is_some() => {
                let known = self.pool.lock().built.iter().find(|(c, _)| *c == self.config).map(|(_, p)| p.clone());
                match known {
                    Some(p) if p.exists() => p,
                    _ => {
                        let p = build_loadable(&self.config)?;
                        self.pool.lock().built.push((self.config.clone(), p.clone()));
                        p
                    }
                }
            }
            Wire::Protobuf => build_protobuf(&self.schema, &self.config)?,
            Wire::Objgraph => build_objgraph(&self.schema, &self.config)?,
        };
        self.core(wire).exe = Some(exe.clone());
        Ok(exe)
    }

    fn core(&mut self, wire: Wire) -> &mut Core {
        match wire {
            Wire::Protobuf => &mut self.protobuf,
            Wire::Objgraph => &mut self.objgraph,
        }
    }

    fn core_ref(&self, wire: Wire) -> &Core {
        match wire {
            Wire::Protobuf => &self.protobuf,
            Wire::Objgraph => &self.objgraph,
        }
    }

    fn ensure(&mut self, wire: Wire) -> Result<(), SimError> {
        let exe = self.program(wire)?;
        let tables = self.tables(wire).cloned();
        let pool = self.pool.clone();
        let core = self.core(wire);
        if core.proc.is_none() {
            // the loadable program: an idle process of the pool, one holding these tables first
            let idle = tables.as_ref().and_then(|t| {
                let mut p = pool.lock();
                let pick = p.idle.iter().position(|q| q.exe == exe && q.tables == Some(t.fingerprint))
                    .or_else(|| p.idle.iter().position(|q| q.exe == exe));
                pick.map(|i| p.idle.swap_remove(i))
            });
            core.proc = match idle {
                Some(p) => Some(p),
                None => {
                    let mut child = Command::new(&exe)
                        .stdin(Stdio::piped())
                        .stdout(Stdio::piped())
                        .stderr(Stdio::piped())
                        .spawn()
                        .map_err(|e| SimError::Tool(format!("cannot start the simulated device {}: {e}", exe.display())))?;
                    let (stdin, stdout) = (child.stdin.take().unwrap(), child.stdout.take().unwrap());
                    core.spawns += 1;
                    if tables.is_some() {
                        let mut p = pool.lock();
                        p.stats.spawns += 1;
                        if !p.stats.programs.contains(&exe) {
                            p.stats.programs.push(exe.clone());
                        }
                    }
                    Some(Proc { exe: exe.clone(), tables: None, child, stdin, stdout, regs: None, counters: [0; N_COUNTERS] })
                }
            };
        }
        let proc = core.proc.as_mut().unwrap();
        if let Some(t) = tables {
            if proc.tables != Some(t.fingerprint) {
                let t0 = Instant::now();
                proc.tables = None;
                match load(proc, &t.words) {
                    Ok(cycles) => {
                        proc.tables = Some(t.fingerprint);
                        let mut p = pool.lock();
                        p.stats.loads += 1;
                        p.stats.last_load = Some(TableLoad { words: t.words.len(), cycles, time: t0.elapsed() });
                    }
                    Err(e) => {
                        let died = bury(core.proc.take().unwrap(), &e);
                        core.crashes.push(died.clone());
                        if core.crashes.len() > MAX_CRASHES_KEPT {
                            core.crashes.remove(0);
                        }
                        return Err(SimError::Tool(format!("loading the tables: {died}")));
                    }
                }
            }
        }
        Ok(())
    }

    /// The register values a request asks for, by the core's register index: per
    /// message (protobuf, and both through the bus wrapper) or per class (objgraph), the
    /// type word or the message index.
    fn regs(&self, wire: Wire, words: &[u64]) -> Vec<u64> {
        // (the loadable build has registers for MSG_ROWS - 1 messages: this schema's are sent)
        let word = |m: usize| words.get(m).copied().unwrap_or(m as u64);
        match wire {
            Wire::Protobuf => (0..self.schema.messages.len()).map(word).collect(),
            Wire::Objgraph if self.config.bus => (0..self.schema.messages.len()).map(word).collect(),
            Wire::Objgraph => self.schema.classes.iter().map(|c| word(c.message as usize)).collect(),
        }
    }

    /// Sends one request to `wire`'s process (started, or restarted once if it has died)
    /// and reads its answer; the image lands in `self.image`.
    fn exchange(&mut self, wire: Wire, job: &Job, regs: Vec<u64>, input: &[u8]) -> Result<Answer, Error> {
        let mut frame = Vec::with_capacity(40 + 8 * regs.len() + input.len());
        for attempt in 0..2 {
            self.ensure(wire).map_err(|e| Error::Engine(e.to_string()))?;
            let core = match wire {
                Wire::Protobuf => &mut self.protobuf,
                Wire::Objgraph => &mut self.objgraph,
            };
            let proc = core.proc.as_mut().unwrap();
            let send_regs = proc.regs.as_ref() != Some(&regs);
            frame.clear();
            frame.extend_from_slice(&REQ_MAGIC.to_le_bytes());
            frame.extend_from_slice(&job.root.to_le_bytes());
            frame.extend_from_slice(&job.base.to_le_bytes());
            frame.extend_from_slice(&job.max_image.to_le_bytes());
            frame.extend_from_slice(&job.max_cycles.to_le_bytes());
            frame.extend_from_slice(&(input.len() as u32).to_le_bytes());
            frame.extend_from_slice(&(if send_regs { regs.len() as u32 } else { 0 }).to_le_bytes());
            if send_regs {
                regs.iter().for_each(|r| frame.extend_from_slice(&r.to_le_bytes()));
            }
            frame.extend_from_slice(input);
            match talk(proc, &frame, &mut self.image, self.config.bus) {
                Ok(mut a) => {
                    if send_regs {
                        proc.regs = Some(regs);
                    }
                    if self.config.bus {
                        // what this request added to the wrapper's counters; the harness
                        // resets the core (its counters too) after statuses 1 and 3
                        match a.status {
                            0 => {
                                let read = a.counters;
                                for (c, last) in a.counters.iter_mut().zip(proc.counters) {
                                    *c = c.checked_sub(last).ok_or_else(|| {
                                        Error::Engine(format!("simulation: the bus wrapper's counters went back ({read:?} after {:?})", proc.counters))
                                    })?;
                                }
                                proc.counters = read;
                            }
                            1 | 3 => proc.counters = [0; N_COUNTERS],
                            _ => {}
                        }
                    }
                    return Ok(a);
                }
                Err(e) => {
                    let core = self.core(wire);
                    let died = bury(core.proc.take().unwrap(), &e);
                    if core.crashes.len() == MAX_CRASHES_KEPT {
                        core.crashes.remove(0);
                    }
                    core.crashes.push(died.clone());
                    if attempt == 1 {
                        return Err(Error::Engine(format!("{died}; it died again on the retry")));
                    }
                }
            }
        }
        unreachable!()
    }
}

/// Loads table words into the loadable program's process (the harness writes them through
/// the wrapper's S_TABLE_ registers); returns the simulated cycles it took. An error when
/// the process does not answer or the wrapper refused the load.
fn load(p: &mut Proc, words: &[(u32, u64)]) -> std::io::Result<u64> {
    let mut frame = Vec::with_capacity(8 + 12 * words.len());
    frame.extend_from_slice(&LOAD_MAGIC.to_le_bytes());
    frame.extend_from_slice(&(words.len() as u32).to_le_bytes());
    for (a, d) in words {
        frame.extend_from_slice(&a.to_le_bytes());
        frame.extend_from_slice(&d.to_le_bytes());
    }
    p.stdin.write_all(&frame)?;
    p.stdin.flush()?;
    let mut h = [0u8; 24];
    p.stdout.read_exact(&mut h)?;
    let u32_at = |i: usize| u32::from_le_bytes(h[i..i + 4].try_into().unwrap());
    if u32_at(0) != LOADED_MAGIC {
        return Err(std::io::Error::other("malformed answer to a table load"));
    }
    match u32_at(4) {
        0 => Ok(u64::from_le_bytes(h[16..24].try_into().unwrap())),
        1 => Err(std::io::Error::other("the bus wrapper refused a table-load register write (SLVERR)")),
        s => Err(std::io::Error::other(format!("the core did not accept the tables (status {s}: tables_ok low)"))),
    }
}

/// Writes `frame` and reads the answer (its image into `image`); `bus`: the harness
/// answers with the bus wrapper's registers too.
fn talk(p: &mut Proc, frame: &[u8], image: &mut Vec<u8>, bus: bool) -> std::io::Result<Answer> {
    p.stdin.write_all(frame)?;
    p.stdin.flush()?;
    let mut h = [0u8; 32 + 8 + 8 * N_COUNTERS];
    let len = if bus { h.len() } else { 32 };
    p.stdout.read_exact(&mut h[..len])?;
    let u32_at = |i: usize| u32::from_le_bytes(h[i..i + 4].try_into().unwrap());
    let u64_at = |i: usize| u64::from_le_bytes(h[i..i + 8].try_into().unwrap());
    if u32_at(0) != RESP_MAGIC {
        return Err(std::io::Error::other("malformed answer"));
    }
    let a = Answer {
        status: u32_at(4),
        err: u32_at(8),
        offset: u32_at(12),
        size: u32_at(16),
        cycles: u64_at(24),
        status_reg: u32_at(32),
        counters: std::array::from_fn(|i| u64_at(40 + 8 * i)),
    };
    image.clear();
    if a.status == 0 && a.err == 0 {
        image.resize(a.size as usize, 0);
        p.stdout.read_exact(image)?;
    }
    Ok(a)
}

/// The loadable protobuf process goes back to the pool (alive, its tables loaded).
impl Drop for VerilatedEngine {
    fn drop(&mut self) {
        if self.tables(Wire::Protobuf).is_some() {
            if let Some(p) = self.protobuf.proc.take() {
                self.pool.lock().idle.push(p);
            }
        }
    }
}

/// A process is ended with the engine (killed, not asked: it may be mid-request).
impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Ends a process that failed to answer and says how it ended.
fn bury(mut p: Proc, e: &std::io::Error) -> String {
    let pid = p.child.id();
    let _ = p.child.kill();
    let status = p.child.wait().map(|s| s.to_string()).unwrap_or_else(|w| w.to_string());
    let mut err = String::new();
    if let Some(mut s) = p.child.stderr.take() {
        let _ = s.read_to_string(&mut err);
    }
    let err = err.trim();
    format!(
        "the simulated device (pid {pid}) stopped answering ({e}; {status}){}{err}; restarted",
        if err.is_empty() { "" } else { ": " }
    )
}

fn verilog_check(schema: &CompiledSchema, wire: Wire) -> Result<(), SimError> {
    match wire {
        Wire::Protobuf => verilog::protobuf::check_supported(schema),
        Wire::Objgraph => verilog::objgraph::check_supported(schema),
    }
    .map_err(SimError::Unsupported)
}

impl Engine for VerilatedEngine {
    fn name(&self) -> &'static str {
        "sim"
    }

    fn check(&self, msg: usize, wire: Wire) -> Result<(), String> {
        check_request(&self.schema, msg, wire)?;
        verilog_check(&self.schema, wire).map_err(|e| e.to_string())
    }

    fn decode(&mut self, req: &Request<'_>, out: &mut Vec<u8>) -> Result<Decoded, Error> {
        let d = self.run(req)?;
        // the caller's vector takes the image; its old buffer receives the next one
        std::mem::swap(out, &mut self.image);
        Ok(d)
    }

    fn decode_into(&mut self, req: &Request<'_>, out: &mut [u8]) -> Result<Decoded, Error> {
        let d = self.run(req)?;
        copy_into(&self.image, out)?;
        Ok(d)
    }

    fn last_cycles(&self) -> Option<u64> {
        self.last_cycles
    }

    fn last_registers(&self) -> Option<EngineRegisters> {
        self.last_registers
    }
}

impl VerilatedEngine {
    /// One request through the device; the image is left in `self.image`.
    fn run(&mut self, req: &Request<'_>) -> Result<Decoded, Error> {
        self.check(req.msg, req.wire).map_err(Error::Engine)?;
        self.last_cycles = None;
        self.last_registers = None;
        let (o, c) = (req.options, self.config.clone());
        if req.input.len() as u64 > c.in_bytes {
            return Err(Rejection::new(RejectKind::Capacity, c.in_bytes).into());
        }
        let len = req.input.len() as u64;
        let (root, max_image, max_cycles, error_kind): (usize, u64, u64, ErrorKinds) = match req.wire {
            Wire::Protobuf => {
                if o.max_depth != c.max_depth {
                    return Err(Error::Engine(format!(
                        "the simulated device's protobuf core is built for max_depth {} (asked: {})",
                        c.max_depth, o.max_depth
                    )));
                }
                if o.max_image_bytes < c.out_bytes {
                    return Err(Error::Engine(format!(
                        "the protobuf core has no image-limit register: its limit is the output memory ({} bytes), not {}",
                        c.out_bytes, o.max_image_bytes
                    )));
                }
                (req.msg, 0, 100_000 + 400 * len, protobuf::error_kind)
            }
            Wire::Objgraph => {
                let cls = self.schema.class_of(req.msg).ok_or_else(|| Error::Engine("not a class".into()))?;
                let words = c.out_bytes / (c.objgraph_out_width as u64 / 8);
                (cls, o.max_image_bytes.min(c.out_bytes), 100_000 + 64 * len + 2 * words, objgraph::error_kind)
            }
        };
        // the bus wrapper takes the message index (it maps it to the class) and reports
        // RejectKind's codes
        let (root, error_kind): (usize, ErrorKinds) = if c.bus { (req.msg, RejectKind::from_code) } else { (root, error_kind) };
        let regs = self.regs(req.wire, &o.type_words);
        let job = Job { root: root as u32, base: o.base, max_image, max_cycles };
        let a = self.exchange(req.wire, &job, regs, req.input)?;
        match a.status {
            0 => {}
            1 => return Err(Error::Engine(format!("simulation: the core did not finish within {max_cycles} cycles (it was reset)"))),
            2 => return Err(Rejection::new(RejectKind::Capacity, self.config.in_bytes).into()),
            s => return Err(Error::Engine(format!("simulation: the core misused its output memory's ports (status {s}; it was reset)"))),
        }
        self.last_cycles = Some(a.cycles);
        if c.bus {
            self.last_registers = Some(EngineRegisters {
                status: a.status_reg,
                err_kind: a.err,
                err_offset: a.offset as u64,
                image_len: a.size,
                time: a.cycles,
                counted: a.counters,
            });
        }
        if a.err == 0 {
            return Ok(Decoded { len: a.size as usize, cycles: Some(a.cycles) });
        }
        match error_kind(a.err) {
            Some(kind) => Err(Rejection::new(kind, a.offset as u64).into()),
            None => Err(Error::Engine(format!("simulation: the core reported an unknown error code {}", a.err))),
        }
    }
}

/// Builds the protobuf core's device program for `c` (or finds it in the cache).
fn build_protobuf(schema: &CompiledSchema, c: &Config) -> Result<PathBuf, SimError> {
    let opts = protobuf::Options {
        max_depth: c.max_depth,
        out_width: c.protobuf_out_width,
        in_width: c.in_width,
        one_pass: c.one_pass,
        out2_wr: c.out2_wr,
        ..Default::default()
    };
    // the core's own memories sized for the longest input the device takes, so that only
    // the output memory can be too small
    let PbParams { max_depth, inst_bits, cnt_bits, st_bits, one_pass, out2_wr, .. } = protobuf::params(schema, 0, c.in_bytes as usize, &opts);
    let mut g = memory_params(c, c.protobuf_out_width);
    g.extend([
        ("MAX_DEPTH", max_depth as u64),
        ("INST_BITS", inst_bits as u64),
        ("CNT_BITS", cnt_bits as u64),
        ("ST_BITS", st_bits as u64),
        ("DROP_BITS", inst_bits as u64),
        ("ONE_PASS", one_pass as u64),
        ("OUT2_WR", out2_wr as u64),
    ]);
    let core = verilog::protobuf::generate(schema, "schema");
    let d = defines("HW_PB", c, c.protobuf_out_width, schema.messages.len());
    build_core(c, "pb", "heapwire_core", "heapwire_axi", verilog::protobuf::SOURCES, &[("schema_core.gen.v", &core)], g, &d)
}

/// The table words of `schema` for the loadable core, or why it does not fit.
fn loadable_tables(schema: &CompiledSchema) -> Result<Tables, String> {
    use std::hash::{Hash, Hasher};
    let words = verilog::protobuf::table_image(schema, &verilog::protobuf::TableLimits::default())?;
    for m in &schema.messages {
        let s = verilog::protobuf::slots(m);
        if s.n_counts > TABLES_COUNT_SLOTS || s.n_state > TABLES_STATE_SLOTS {
            return Err(format!(
                "loadable core: {} has {} count slots (repeated fields + 1) and {} state slots (message fields + oneofs), the build holds {TABLES_COUNT_SLOTS} and {TABLES_STATE_SLOTS}",
                m.full_name, s.n_counts, s.n_state
            ));
        }
    }
    let mut h = std::collections::hash_map::DefaultHasher::new();
    words.hash(&mut h);
    Ok(Tables { fingerprint: h.finish(), words })
}

/// Builds the protobuf core with run-time-loaded tables, in its bus wrapper, for `c` (or
/// finds it in the cache): nothing of a schema goes into it.
fn build_loadable(c: &Config) -> Result<PathBuf, SimError> {
    // the core's own memories sized as build_protobuf sizes them, for TABLES_COUNT_SLOTS
    // and TABLES_STATE_SLOTS slots per message instance
    let (inst_bits, cnt_bits, st_bits) = protobuf::instance_bits(c.in_bytes, TABLES_COUNT_SLOTS as u64, TABLES_STATE_SLOTS as u64);
    let mut g = memory_params(c, c.protobuf_out_width);
    g.extend([
        ("MAX_DEPTH", c.max_depth as u64),
        ("INST_BITS", inst_bits as u64),
        ("CNT_BITS", cnt_bits as u64),
        ("ST_BITS", st_bits as u64),
        ("DROP_BITS", inst_bits as u64),
        ("ONE_PASS", c.one_pass as u64),
        ("OUT2_WR", c.out2_wr as u64),
        ("TABLES", 1),
    ]);
    let core = verilog::protobuf::generate_loadable();
    let nregs = verilog::protobuf::TableLimits::default().msg_rows as usize - 1;
    let d = format!("{} -DHW_TABLES", defines("HW_PB", c, c.protobuf_out_width, nregs));
    build_core(c, "pb-tables", "heapwire_core", "heapwire_axi", verilog::protobuf::SOURCES, &[("heapwire_core_tables.gen.v", &core)], g, &d)
}

/// Builds the objgraph core's device program for `c` (or finds it in the cache).
fn build_objgraph(schema: &CompiledSchema, c: &Config) -> Result<PathBuf, SimError> {
    // the object-pointer table holds the most objects an input of in_bytes can have
    let OgParams { obj_bits, .. } = objgraph::params(schema, c.in_bytes as usize, &Default::default());
    let mut g = memory_params(c, c.objgraph_out_width);
    g.push(("OBJ_BITS", obj_bits as u64));
    let core = verilog::objgraph::generate(schema, "schema");
    // registers by class, or by message through the bus wrapper
    let nregs = if c.bus { schema.messages.len() } else { schema.classes.len().max(1) };
    let d = defines("HW_OG", c, c.objgraph_out_width, nregs);
    build_core(c, "og", "heapwire_og_core", "heapwire_og_axi", verilog::objgraph::SOURCES, &[("schema_og_core.gen.v", &core)], g, &d)
}

/// [`build`] for a core (`top`) or, with [`Config::bus`], the core inside its bus wrapper
/// (`bus_top`, with `rtl/hw_axi_wrap.v` and 64-bit AXI addresses, the harness in its
/// HW_AXI mode).
#[allow(clippy::too_many_arguments)]
fn build_core(c: &Config, kind: &str, top: &str, bus_top: &str, sources: &[(&str, &str)], generated: &[(&str, &str)],
              mut g: Vec<(&'static str, u64)>, defines: &str) -> Result<PathBuf, SimError> {
    if !c.bus {
        return build(kind, top, sources, generated, &g, defines);
    }
    let mut all = sources.to_vec();
    all.push(verilog::AXI_SOURCE);
    g.push(("AXI_ADDR_WIDTH", 64));
    build(&format!("{kind}-axi"), bus_top, &all, generated, &g, &format!("{defines} -DHW_AXI"))
}

/// The memories' parameters, shared by both cores: IN_ADDR_WIDTH as the testbench sets
/// it (one bit more than the input memory's 64-bit word address), OUT_ADDR_WIDTH for
/// `out_bytes` of `out_width`-bit words.
fn memory_params(c: &Config, out_width: u32) -> Vec<(&'static str, u64)> {
    vec![
        ("IN_WIDTH", c.in_width as u64),
        ("IN_ADDR_WIDTH", log2_ceil(c.in_bytes / 8) as u64 + 1),
        ("OUT_WIDTH", out_width as u64),
        ("OUT_ADDR_WIDTH", log2_ceil(c.out_bytes / (out_width as u64 / 8)) as u64),
    ]
}

/// The harness's compile-time definitions.
fn defines(core: &str, c: &Config, out_width: u32, nregs: usize) -> String {
    format!(
        "-D{core} -DIW={} -DOW={out_width} -DIN_BYTES={}ull -DOUT_BYTES={}ull -DNREGS={nregs}",
        c.in_width, c.in_bytes, c.out_bytes
    )
}

/// How Verilator is run (part of the cache key). `-fno-localize`: otherwise Verilator
/// makes a memory that only dead code reads (the protobuf core's `im_start` without
/// required fields) a local of the clocked block, cleared whole on every evaluation: 4 MB
/// a cycle with a 1 MiB input memory. g++ `-O1` on the model's per-cycle code and `-O0`
/// on its set-up code: builds about a third shorter than Verilator's `-Os`.
const VERILATOR_FLAGS: &[&str] = &[
    "--cc", "--exe", "--build", "-j", "2", "--no-timing", "-Wno-fatal", "-Wno-lint", "-Wno-style", "--x-assign", "0", "--x-initial", "0",
    "-fno-localize", "--prefix", "Vcore", "--Mdir", "obj", "-o", "vsim", "-MAKEFLAGS", "OPT_FAST=-O1 OPT_SLOW=-O0",
];

/// One build at a time in this process (concurrent processes may build the same program
/// at once: each builds in a folder of its own and renames its program into place).
static BUILDING: Mutex<()> = Mutex::new(());

/// Verilates `sources` and `generated` (top module `top`, parameters `gparams`) with the
/// harness compiled with `defines`; returns the cached program's path.
fn build(kind: &str, top: &str, sources: &[(&str, &str)], generated: &[(&str, &str)], gparams: &[(&str, u64)], defines: &str) -> Result<PathBuf, SimError> {
    let gflags: Vec<String> = gparams.iter().map(|(k, v)| format!("-G{k}={v}")).collect();
    let version = Command::new(tool("verilator")).arg("--version").output().map_err(missing_verilator)?;
    let mut head: Vec<&[u8]> = vec![kind.as_bytes(), top.as_bytes(), defines.as_bytes(), HARNESS.as_bytes(), &version.stdout];
    head.extend(VERILATOR_FLAGS.iter().map(|f| f.as_bytes()));
    head.extend(gflags.iter().map(|g| g.as_bytes()));
    let exe = entry(&format!("vsim-{kind}"), "vsim", &head, sources, generated);
    let dir = exe.parent().unwrap();
    if exe.exists() {
        return Ok(exe);
    }
    let _one = BUILDING.lock().unwrap_or_else(|p| p.into_inner());
    if exe.exists() {
        return Ok(exe);
    }
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.subsec_nanos()).unwrap_or(0);
    let work = cache_dir().join(format!("vsim-build-{}-{nanos}", std::process::id()));
    let r = build_in(&work, top, sources, generated, &gflags, defines).and_then(|built| {
        std::fs::create_dir_all(dir).map_err(|e| SimError::Tool(format!("{}: {e}", dir.display())))?;
        std::fs::rename(&built, &exe).map_err(|e| SimError::Tool(format!("{}: {e}", exe.display())))
    });
    let _ = std::fs::remove_dir_all(&work);
    r.map(|()| exe)
}

fn build_in(work: &Path, top: &str, sources: &[(&str, &str)], generated: &[(&str, &str)], gflags: &[String], defines: &str) -> Result<PathBuf, SimError> {
    let io = |e: std::io::Error| SimError::Tool(format!("{}: {e}", work.display()));
    std::fs::create_dir_all(work).map_err(io)?;
    let mut files = Vec::new();
    for (name, text) in sources.iter().chain(generated).chain([&("vsim_main.cpp", HARNESS)]) {
        std::fs::write(work.join(name), text).map_err(io)?;
        files.push(name.to_string());
    }
    let out = Command::new(tool("verilator"))
        .current_dir(work)
        .args(VERILATOR_FLAGS)
        .args(["--top-module", top])
        .args(["-CFLAGS", defines])
        .args(gflags)
        .args(&files)
        .output()
        .map_err(missing_verilator)?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        let tail: Vec<&str> = err.lines().rev().take(30).collect();
        let tail: Vec<&str> = tail.into_iter().rev().collect();
        let hint = if err.contains("g++") || err.contains("make") { " (Verilator needs make and g++: apt-get install make g++)" } else { "" };
        return Err(SimError::Tool(format!("verilator failed{hint}:\n{}", tail.join("\n"))));
    }
    Ok(work.join("obj").join("vsim"))
}

fn missing_verilator(e: std::io::Error) -> SimError {
    SimError::Tool(format!("cannot run verilator ({e}); install Verilator 5 and g++ (apt-get install verilator g++ make)"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit() -> Arc<CompiledSchema> {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../cpu/testdata");
        Arc::new(heapwire_schema::compile_files(&[dir.join("unit.proto")], &[dir], Default::default()).unwrap())
    }

    #[test]
    fn the_engine_can_move_to_a_thread() {
        fn send<T: Send>() {}
        send::<VerilatedEngine>();
    }

    #[test]
    fn memory_sizes_are_checked() {
        for (in_bytes, out_bytes) in [(1000, 8 << 20), (1 << 20, 3 << 20), (1 << 31, 1 << 20), (1 << 20, 512)] {
            let c = Config { in_bytes, out_bytes, ..Default::default() };
            assert!(VerilatedEngine::new(unit(), c).is_err(), "{in_bytes} / {out_bytes}");
        }
        assert!(VerilatedEngine::new(unit(), Config { in_width: 48, ..Default::default() }).is_err());
        let e = VerilatedEngine::new(unit(), Config { tables: true, ..Default::default() }).err().expect("tables without bus");
        assert!(e.to_string().contains("tables needs bus"), "{e}");
        assert!(VerilatedEngine::new(unit(), Config::default()).is_ok());
    }

    #[test]
    fn a_missing_verilator_is_an_engine_error_naming_the_packages() {
        // the only test of this binary that runs verilator, so the variable affects no other
        std::env::set_var("HEAPWIRE_VERILATOR", "/nonexistent/verilator");
        let mut dev = VerilatedEngine::new(unit(), Config::default()).unwrap();
        let r = dev.decode(&Request { msg: 0, wire: Wire::Protobuf, input: &[], options: &Default::default() }, &mut Vec::new());
        std::env::remove_var("HEAPWIRE_VERILATOR");
        match r {
            Err(Error::Engine(m)) => assert!(m.contains("cannot run verilator") && m.contains("apt-get install verilator"), "{m}"),
            r => panic!("{r:?}"),
        }
        assert_eq!(dev.spawns(Wire::Protobuf), 0);
    }
}

//! The device itself: registers, an input and an output memory, slots that each hold one
//! installed schema and its engine, and the go bit. Engine-agnostic: an [`EngineFactory`]
//! makes the engine of a slot when a schema is installed into it.

use std::sync::Arc;
use std::time::Instant;

use heapwire_engine::{Engine, EngineRegisters, Error as EngineError, Options, Request, Wire};
use heapwire_schema::{table_file, CompiledSchema};

use crate::regs::{self, Caps, EngineKind, Header, Status};

/// Makes the engine a slot runs for an installed schema.
pub trait EngineFactory: Send {
    fn kind(&self) -> EngineKind;
    /// Pointer widths (bytes, as a bit set: `1 << 4 | 1 << 8`) the engine builds images with.
    fn ptr_widths(&self) -> u32 {
        (1 << 4) | (1 << 8)
    }
    fn make(&self, schema: Arc<CompiledSchema>) -> Result<Box<dyn Engine + Send>, String>;
    /// The `sim` engine's processes of the loadable protobuf program (None: another engine).
    fn sim_pool(&self) -> Option<heapwire_sim::verilated::PoolStats> {
        None
    }
}

/// The CPU engine behind a device.
pub struct CpuFactory;

impl EngineFactory for CpuFactory {
    fn kind(&self) -> EngineKind {
        EngineKind::Cpu
    }
    fn make(&self, schema: Arc<CompiledSchema>) -> Result<Box<dyn Engine + Send>, String> {
        Ok(Box::new(heapwire_cpu::CpuEngine::new(schema)))
    }
}

/// The generated Verilog cores behind a device: per slot, Verilator-built simulators of
/// the schema's protobuf core (and objgraph core, when it has classes), each inside its
/// AXI bus wrapper and driven through the device register map over AXI4-Lite, the input
/// over AXI4-Stream and the image from the wrapper's AXI4 master (`Config::bus`), one
/// process alive across requests (`heapwire_sim::VerilatedEngine`), their memories the
/// device's. The protobuf core is the build with run-time-loaded tables
/// (`Config::tables`): one verilation for every schema that fits it, and a slot install
/// loads the schema's table words over AXI4-Lite into a running process (the factory's
/// [`heapwire_sim::verilated::Pool`]: the slot's previous engine gives its process back
/// when the install starts); a schema that does not fit gets its own ROM build, with a
/// note on stderr saying why.
pub struct SimFactory {
    config: heapwire_sim::verilated::Config,
    pool: heapwire_sim::verilated::Pool,
}

impl SimFactory {
    /// A factory for a device of `dev`'s memory sizes (powers of two: the cores' address
    /// widths).
    pub fn new(dev: &Config) -> Result<SimFactory, String> {
        let config = heapwire_sim::verilated::Config {
            in_bytes: dev.in_bytes as u64,
            out_bytes: dev.out_bytes as u64,
            bus: true,
            tables: true,
            ..Default::default()
        };
        config.validate().map_err(|e| format!("the sim engine's memories: {e}"))?;
        Ok(SimFactory { config, pool: Default::default() })
    }

    /// The same factory with the per-schema ROM build of the protobuf core (`tables`
    /// false: one verilation per schema).
    pub fn with_tables(mut self, tables: bool) -> SimFactory {
        self.config.tables = tables;
        self
    }
}

impl EngineFactory for SimFactory {
    fn kind(&self) -> EngineKind {
        EngineKind::Sim
    }
    /// Builds (or finds in the build cache) and starts the simulators now, so that the
    /// install, not the first request, waits for Verilator.
    fn make(&self, schema: Arc<CompiledSchema>) -> Result<Box<dyn Engine + Send>, String> {
        let mut e = heapwire_sim::VerilatedEngine::with_pool(schema.clone(), self.config.clone(), self.pool.clone()).map_err(|e| e.to_string())?;
        if let Some(why) = e.tables_fallback() {
            eprintln!("note: sim engine: this schema's protobuf core is verilated for it (ROM build): {why}");
        }
        let wires = [Wire::Protobuf].into_iter().chain((!schema.classes.is_empty()).then_some(Wire::Objgraph));
        for w in wires {
            // a schema a core does not support is refused per request, by `check`
            match e.start(w) {
                Ok(()) | Err(heapwire_sim::SimError::Unsupported(_)) => {}
                Err(err) => return Err(err.to_string()),
            }
        }
        Ok(Box::new(e))
    }
    fn sim_pool(&self) -> Option<heapwire_sim::verilated::PoolStats> {
        Some(self.pool.stats())
    }
}

/// The engine named `engine` (`cpu`, `sim`, or `sim-rom`: `sim` with the protobuf core
/// verilated per schema) for a device of `config`.
pub fn factory(engine: &str, config: &Config) -> Result<Box<dyn EngineFactory>, String> {
    match engine {
        "cpu" => Ok(Box::new(CpuFactory)),
        "sim" => Ok(Box::new(SimFactory::new(config)?)),
        // the protobuf core verilated per schema (its ROM build), as before the loaded tables
        "sim-rom" => Ok(Box::new(SimFactory::new(config)?.with_tables(false))),
        e => Err(format!("engine '{e}' (cpu, sim or sim-rom)")),
    }
}

/// A device's fixed resources.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    pub slots: u32,
    /// Input memory, bytes: the longest input a request can have.
    pub in_bytes: u32,
    /// Output memory, bytes: the largest image.
    pub out_bytes: u32,
    /// Largest table file a slot takes.
    pub table_bytes: u32,
}

impl Default for Config {
    fn default() -> Self {
        Config { slots: 4, in_bytes: 4 << 20, out_bytes: 32 << 20, table_bytes: 4 << 20 }
    }
}

/// A request the device refused before any engine saw it, or a failed operation. Each
/// has a code for the error register (64 and up; rejections of the input keep
/// `heapwire_engine::RejectKind`'s codes below 64).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DeviceError {
    NoRegister(u32),
    ReadOnly(u32),
    NoSlot { slot: u32, slots: u32 },
    SlotEmpty(u32),
    NoMessage { msg: u32, types: usize },
    BadWire(u32),
    /// The input does not fit the input memory.
    InputTooLarge { len: u64, max: u32 },
    /// A memory access outside the memory.
    OutOfRange { what: &'static str, offset: u64, len: u64, size: u32 },
    TableTooLarge { len: u32, max: u32 },
    /// A table chunk that does not continue the load in progress.
    LoadOrder { slot: u32, offset: u32, have: u32 },
    TableChecksum { slot: u32, got: u32, expected: u32 },
    BadTable(String),
    TooManyTypes { types: usize, max: u32 },
    /// The engine cannot serve the request (see `heapwire_engine::Error::Engine`).
    Engine(String),
    /// A message the device could not parse (the server answers with this).
    Protocol(String),
    /// The slot holds another schema than the request names.
    SlotHoldsOther { slot: u32, holds: u32, wanted: u32 },
}

/// Each device error's code for the error register and what the code means, from one
/// list: `DeviceError::code` and `device_error_meaning` (for paths that carry only the
/// code: the register path has no text register).
macro_rules! device_error_codes {
    ($($variant:ident = $code:literal: $meaning:literal,)*) => {
        impl DeviceError {
            pub fn code(&self) -> u32 {
                match self {
                    $(DeviceError::$variant { .. } => $code,)*
                }
            }
        }

        /// What a device error code means (see `device_error_codes`).
        pub fn device_error_meaning(code: u32) -> &'static str {
            match code {
                $($code => $meaning,)*
                _ => "unknown device error",
            }
        }
    };
}

device_error_codes! {
    NoRegister = 64: "no such register",
    ReadOnly = 65: "register is read-only",
    NoSlot = 66: "no such slot",
    SlotEmpty = 67: "slot holds no schema",
    NoMessage = 68: "message index out of range for the slot's schema",
    BadWire = 69: "unknown wire format",
    InputTooLarge = 70: "input does not fit the input memory",
    OutOfRange = 71: "memory access out of range",
    TableTooLarge = 72: "table file too large for a slot",
    LoadOrder = 73: "table chunk out of order",
    TableChecksum = 74: "table file checksum mismatch",
    BadTable = 75: "table file invalid",
    TooManyTypes = 76: "schema has more types than a slot has type registers",
    Engine = 77: "engine failed",
    Protocol = 78: "protocol error",
    SlotHoldsOther = 79: "slot holds another schema",
}

impl std::fmt::Display for DeviceError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DeviceError::NoRegister(a) => write!(f, "no register at {a:#x}"),
            DeviceError::ReadOnly(a) => write!(f, "register {a:#x} is read-only"),
            DeviceError::NoSlot { slot, slots } => write!(f, "slot {slot} does not exist (the device has {slots})"),
            DeviceError::SlotEmpty(s) => write!(f, "slot {s} holds no schema"),
            DeviceError::NoMessage { msg, types } => write!(f, "message index {msg} out of range (the slot's schema has {types})"),
            DeviceError::BadWire(w) => write!(f, "wire format {w} (0 = protobuf, 1 = objgraph)"),
            DeviceError::InputTooLarge { len, max } => {
                write!(f, "input of {len} bytes does not fit the device's input memory ({max} bytes)")
            }
            DeviceError::OutOfRange { what, offset, len, size } => {
                write!(f, "{what} access of {len} bytes at {offset} is outside its {size} bytes")
            }
            DeviceError::TableTooLarge { len, max } => write!(f, "table file of {len} bytes (a slot takes {max})"),
            DeviceError::LoadOrder { slot, offset, have } => {
                write!(f, "slot {slot}: table chunk at byte {offset}, but {have} bytes are loaded")
            }
            DeviceError::TableChecksum { slot, got, expected } => {
                write!(f, "slot {slot}: table file checksum {got:#010x}, expected {expected:#010x}")
            }
            DeviceError::BadTable(m) => write!(f, "table file: {m}"),
            DeviceError::TooManyTypes { types, max } => write!(f, "schema of {types} types (a slot has {max} type registers)"),
            DeviceError::Engine(m) => write!(f, "engine: {m}"),
            DeviceError::Protocol(m) => write!(f, "protocol: {m}"),
            DeviceError::SlotHoldsOther { slot, holds, wanted } => {
                write!(f, "slot {slot} holds schema {holds:#010x}, the request is for {wanted:#010x}")
            }
        }
    }
}

impl std::error::Error for DeviceError {}

/// A request for the go bit (or write&go): what the control registers hold.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Go {
    pub slot: u32,
    pub msg: u32,
    /// 0 = protobuf, 1 = objgraph.
    pub wire: u32,
    pub base: u64,
    pub max_depth: u32,
    /// 0 = the output memory's size.
    pub max_image: u32,
    /// The table checksum the slot must hold (0: any), so that a request never runs on
    /// a schema another host installed meanwhile.
    pub checksum: u32,
}

/// The verdict of one request, as the control registers show it afterwards.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Outcome {
    /// 0 = the image is in the output memory; below 64 a `RejectKind` code; 64 and up a
    /// [`DeviceError`] code.
    pub err: u32,
    pub offset: u64,
    pub needed: u64,
    pub image_len: u32,
    /// Engine cycles (sim) or nanoseconds (cpu).
    pub time: u64,
    /// The error's text (device errors and engine failures; empty otherwise).
    pub text: String,
}

impl Outcome {
    fn device_error(e: &DeviceError) -> Outcome {
        Outcome { err: e.code(), text: e.to_string(), ..Outcome::default() }
    }
}

/// The counters, in `regs::COUNTER_NAMES` order.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counters(pub [u64; 7]);

const C_REQUESTS: usize = 0;
const C_BYTES_IN: usize = 1;
const C_BYTES_OUT: usize = 2;
const C_REJECTIONS: usize = 3;
const C_PROTOCOL_ERRORS: usize = 4;
const C_RELOADS: usize = 5;
const C_RELOAD_BYTES: usize = 6;

struct Loading {
    name: String,
    total: u32,
    checksum: u32,
    buf: Vec<u8>,
}

#[derive(Default)]
struct Slot {
    name: String,
    checksum: u32,
    table_len: u32,
    schema: Option<Arc<CompiledSchema>>,
    engine: Option<Box<dyn Engine + Send>>,
    /// Per-type header words; empty until one is written (then every type has one).
    type_words: Vec<u64>,
    loading: Option<Loading>,
}

impl Slot {
    fn state(&self) -> u32 {
        if self.loading.is_some() {
            regs::SLOT_LOADING
        } else if self.engine.is_some() {
            regs::SLOT_READY
        } else {
            regs::SLOT_EMPTY
        }
    }
}

/// One device. Requests run to completion one at a time (the server serializes them).
pub struct Device {
    cfg: Config,
    factory: Box<dyn EngineFactory>,
    slots: Vec<Slot>,
    input: Vec<u8>,
    output: Vec<u8>,
    go: Go,
    in_len: u32,
    last: Outcome,
    status: u32,
    counters: Counters,
}

impl Device {
    pub fn new(cfg: Config, factory: Box<dyn EngineFactory>) -> Device {
        let slots = (0..cfg.slots).map(|_| Slot::default()).collect();
        Device {
            input: vec![0; cfg.in_bytes as usize],
            output: vec![0; cfg.out_bytes as usize],
            cfg,
            factory,
            slots,
            go: Go { max_depth: 100, ..Go::default() },
            in_len: 0,
            last: Outcome::default(),
            status: 0,
            counters: Counters::default(),
        }
    }

    /// The factory that makes the slots' engines.
    pub fn factory(&self) -> &dyn EngineFactory {
        self.factory.as_ref()
    }

    pub fn header(&self) -> Header {
        let kind = self.factory.kind();
        Header {
            version: regs::VERSION,
            caps: Caps::PROTOBUF | Caps::OBJGRAPH | Caps::WRITE_GO | Caps::RELOAD | Caps::TYPE_REGS,
            slots: self.cfg.slots,
            in_bytes: self.cfg.in_bytes,
            out_bytes: self.cfg.out_bytes,
            ptr_widths: self.factory.ptr_widths(),
            engine: kind as u32,
            type_regs: regs::MAX_TYPES,
            table_bytes: self.cfg.table_bytes,
            time_unit: (kind == EngineKind::Cpu) as u32,
        }
    }

    pub fn counters(&self) -> Counters {
        self.counters
    }

    /// Counts a message the server could not parse.
    pub fn count_protocol_error(&mut self) {
        self.counters.0[C_PROTOCOL_ERRORS] += 1;
    }

    fn slot(&self, slot: u32) -> Result<&Slot, DeviceError> {
        self.slots.get(slot as usize).ok_or(DeviceError::NoSlot { slot, slots: self.cfg.slots })
    }

    fn slot_mut(&mut self, slot: u32) -> Result<&mut Slot, DeviceError> {
        let slots = self.cfg.slots;
        self.slots.get_mut(slot as usize).ok_or(DeviceError::NoSlot { slot, slots })
    }

    pub fn read_reg(&self, addr: u32) -> Result<u32, DeviceError> {
        let lo = |v: u64| v as u32;
        let hi = |v: u64| (v >> 32) as u32;
        Ok(match addr {
            a if a < regs::HEADER_WORDS => self.header().words()[a as usize],
            regs::C_CTRL => (self.status & Status::BUSY != 0) as u32,
            regs::C_STATUS => self.status,
            regs::C_SLOT => self.go.slot,
            regs::C_MSG => self.go.msg,
            regs::C_WIRE => self.go.wire,
            regs::C_BASE => lo(self.go.base),
            a if a == regs::C_BASE + 1 => hi(self.go.base),
            regs::C_IN_LEN => self.in_len,
            regs::C_MAX_DEPTH => self.go.max_depth,
            regs::C_MAX_IMAGE => self.go.max_image,
            regs::C_ERR_KIND => self.last.err,
            regs::C_ERR_OFFSET => lo(self.last.offset),
            a if a == regs::C_ERR_OFFSET + 1 => hi(self.last.offset),
            regs::C_IMAGE_LEN => self.last.image_len,
            regs::C_TIME => lo(self.last.time),
            a if a == regs::C_TIME + 1 => hi(self.last.time),
            regs::C_NEEDED => lo(self.last.needed),
            a if a == regs::C_NEEDED + 1 => hi(self.last.needed),
            a if (regs::N_REQUESTS..regs::COUNTERS_END).contains(&a) => {
                let i = (a - regs::N_REQUESTS) as usize;
                let v = self.counters.0[i / 2];
                if i % 2 == 0 {
                    lo(v)
                } else {
                    hi(v)
                }
            }
            a if a >= regs::SLOT_STRIDE => {
                let (slot, r) = (a / regs::SLOT_STRIDE - 1, a % regs::SLOT_STRIDE);
                let s = self.slot(slot).map_err(|_| DeviceError::NoRegister(addr))?;
                match r {
                    regs::S_STATE => s.state(),
                    regs::S_CHECKSUM => s.checksum,
                    regs::S_TABLE_LEN => s.table_len,
                    regs::S_NUM_TYPES => s.schema.as_ref().map_or(0, |x| x.messages.len() as u32),
                    r if (regs::S_NAME..regs::S_NAME + regs::NAME_BYTES as u32 / 4).contains(&r) => {
                        let i = 4 * (r - regs::S_NAME) as usize;
                        let mut w = [0u8; 4];
                        for (k, b) in s.name.as_bytes().iter().skip(i).take(4).enumerate() {
                            w[k] = *b;
                        }
                        u32::from_le_bytes(w)
                    }
                    r if r >= regs::S_TYPE => {
                        let t = ((r - regs::S_TYPE) / 2) as usize;
                        let v = s.type_words.get(t).copied().unwrap_or(t as u64);
                        if (r - regs::S_TYPE) % 2 == 0 {
                            lo(v)
                        } else {
                            hi(v)
                        }
                    }
                    _ => return Err(DeviceError::NoRegister(addr)),
                }
            }
            _ => return Err(DeviceError::NoRegister(addr)),
        })
    }

    pub fn write_reg(&mut self, addr: u32, v: u32) -> Result<(), DeviceError> {
        let set_lo = |x: &mut u64| *x = (*x & !0xFFFF_FFFF) | v as u64;
        let set_hi = |x: &mut u64| *x = (*x & 0xFFFF_FFFF) | ((v as u64) << 32);
        match addr {
            regs::C_CTRL => {
                if v & 1 != 0 {
                    self.go();
                }
            }
            regs::C_SLOT => self.go.slot = v,
            regs::C_MSG => self.go.msg = v,
            regs::C_WIRE => self.go.wire = v,
            regs::C_BASE => set_lo(&mut self.go.base),
            a if a == regs::C_BASE + 1 => set_hi(&mut self.go.base),
            regs::C_IN_LEN => self.in_len = v,
            regs::C_MAX_DEPTH => self.go.max_depth = v,
            regs::C_MAX_IMAGE => self.go.max_image = v,
            a if a < regs::CONTROL_END || (regs::N_REQUESTS..regs::COUNTERS_END).contains(&a) => {
                return Err(DeviceError::ReadOnly(addr))
            }
            a if a >= regs::SLOT_STRIDE => {
                let (slot, r) = (a / regs::SLOT_STRIDE - 1, a % regs::SLOT_STRIDE);
                let s = self.slot_mut(slot).map_err(|_| DeviceError::NoRegister(addr))?;
                if r < regs::S_TYPE {
                    return Err(DeviceError::ReadOnly(addr));
                }
                let t = ((r - regs::S_TYPE) / 2) as usize;
                let types = s.schema.as_ref().map_or(0, |x| x.messages.len());
                if t >= types {
                    return Err(DeviceError::NoRegister(addr));
                }
                if s.type_words.is_empty() {
                    s.type_words = (0..types as u64).collect();
                }
                if (r - regs::S_TYPE) % 2 == 0 {
                    set_lo(&mut s.type_words[t]);
                } else {
                    set_hi(&mut s.type_words[t]);
                }
            }
            _ => return Err(DeviceError::NoRegister(addr)),
        }
        Ok(())
    }

    pub fn write_input(&mut self, offset: u32, bytes: &[u8]) -> Result<(), DeviceError> {
        let end = offset as u64 + bytes.len() as u64;
        if end > self.input.len() as u64 {
            return Err(DeviceError::OutOfRange {
                what: "input memory",
                offset: offset as u64,
                len: bytes.len() as u64,
                size: self.cfg.in_bytes,
            });
        }
        self.input[offset as usize..end as usize].copy_from_slice(bytes);
        Ok(())
    }

    pub fn read_output(&self, offset: u32, len: u32) -> Result<&[u8], DeviceError> {
        let end = offset as u64 + len as u64;
        if end > self.output.len() as u64 {
            return Err(DeviceError::OutOfRange {
                what: "output memory",
                offset: offset as u64,
                len: len as u64,
                size: self.cfg.out_bytes,
            });
        }
        Ok(&self.output[offset as usize..end as usize])
    }

    /// The go bit: runs the request the control registers describe on the first `C_IN_LEN`
    /// bytes of the input memory, to completion.
    pub fn go(&mut self) -> &Outcome {
        self.status = Status::BUSY;
        let out = match self.run(self.go.clone(), self.in_len as u64) {
            Ok(o) => o,
            Err(e) => Outcome::device_error(&e),
        };
        // An engine with a STATUS register of its own has had it checked against this
        // verdict (`outcome_from_registers`), so the error bit follows from `err` alike.
        self.status = Status::DONE | if out.err != 0 { Status::ERROR } else { 0 };
        self.last = out;
        &self.last
    }

    /// Write&go: the input written at offset 0, then the go bit, in one operation. The
    /// image (when there is one) is `output[..image_len]`.
    pub fn write_go(&mut self, go: &Go, input: &[u8]) -> (&Outcome, &[u8]) {
        if input.len() > self.input.len() {
            let e = DeviceError::InputTooLarge { len: input.len() as u64, max: self.cfg.in_bytes };
            self.last = Outcome::device_error(&e);
            self.status = Status::DONE | Status::ERROR;
        } else {
            self.input[..input.len()].copy_from_slice(input);
            self.go = go.clone();
            self.in_len = input.len() as u32;
            self.go();
        }
        let n = if self.last.err == 0 { self.last.image_len as usize } else { 0 };
        (&self.last, &self.output[..n])
    }

    fn run(&mut self, go: Go, in_len: u64) -> Result<Outcome, DeviceError> {
        if in_len > self.input.len() as u64 {
            return Err(DeviceError::InputTooLarge { len: in_len, max: self.cfg.in_bytes });
        }
        let wire = match go.wire {
            0 => Wire::Protobuf,
            1 => Wire::Objgraph,
            w => return Err(DeviceError::BadWire(w)),
        };
        let out_bytes = self.cfg.out_bytes;
        let slots = self.cfg.slots;
        let s = self.slots.get_mut(go.slot as usize).ok_or(DeviceError::NoSlot { slot: go.slot, slots })?;
        let types = s.schema.as_ref().map_or(0, |x| x.messages.len());
        let engine = s.engine.as_mut().ok_or(DeviceError::SlotEmpty(go.slot))?;
        if go.checksum != 0 && go.checksum != s.checksum {
            return Err(DeviceError::SlotHoldsOther { slot: go.slot, holds: s.checksum, wanted: go.checksum });
        }
        if go.msg as usize >= types {
            return Err(DeviceError::NoMessage { msg: go.msg, types });
        }
        let max_image = if go.max_image == 0 { out_bytes } else { go.max_image.min(out_bytes) };
        let options = Options {
            base: go.base,
            max_depth: go.max_depth,
            max_image_bytes: max_image as u64,
            // lent to the request and given back below: no allocation per request
            type_words: std::mem::take(&mut s.type_words),
        };
        let input = &self.input[..in_len as usize];
        let req = Request { msg: go.msg as usize, wire, input, options: &options };
        let t0 = Instant::now();
        let r = engine.decode_into(&req, &mut self.output[..max_image as usize]);
        let nanos = t0.elapsed().as_nanos() as u64;
        s.type_words = options.type_words;
        let time = if self.factory.kind() == EngineKind::Cpu { nanos } else { engine.last_cycles().unwrap_or(0) };
        if let Some(regs) = engine.last_registers() {
            return self.outcome_from_registers(&regs, r);
        }
        self.counters.0[C_REQUESTS] += 1;
        self.counters.0[C_BYTES_IN] += in_len;
        Ok(match r {
            Ok(d) => {
                self.counters.0[C_BYTES_OUT] += d.len as u64;
                Outcome { image_len: d.len as u32, time, ..Outcome::default() }
            }
            Err(EngineError::Rejected(rej)) => {
                self.counters.0[C_REJECTIONS] += 1;
                Outcome {
                    err: rej.kind.code(),
                    offset: rej.offset,
                    needed: rej.needed,
                    time,
                    ..Outcome::default()
                }
            }
            Err(EngineError::Engine(m)) => return Err(DeviceError::Engine(m)),
        })
    }

    /// The outcome and counters of a request whose engine has registers of its own (the
    /// `sim` engine's bus wrappers): taken from those registers, after checking that they
    /// say what the engine's answer `r` says.
    fn outcome_from_registers(&mut self, regs: &EngineRegisters, r: Result<heapwire_engine::Decoded, EngineError>) -> Result<Outcome, DeviceError> {
        let (done, error) = (regs.status & Status::DONE != 0, regs.status & Status::ERROR != 0);
        let agrees = match &r {
            Ok(d) => done && !error && regs.err_kind == 0 && regs.image_len as usize == d.len,
            Err(EngineError::Rejected(rej)) => error && regs.err_kind == rej.kind.code() && regs.err_offset == rej.offset,
            Err(EngineError::Engine(m)) => return Err(DeviceError::Engine(m.clone())),
        };
        if !agrees {
            return Err(DeviceError::Engine(format!(
                "the engine's registers ({regs:?}) disagree with its answer ({:?})",
                r.map(|d| d.len)
            )));
        }
        for (c, add) in [C_REQUESTS, C_BYTES_IN, C_BYTES_OUT, C_REJECTIONS, C_PROTOCOL_ERRORS].into_iter().zip(regs.counted) {
            self.counters.0[c] += add;
        }
        let needed = match r {
            Err(EngineError::Rejected(rej)) => rej.needed,
            _ => 0,
        };
        Ok(Outcome { err: regs.err_kind, offset: regs.err_offset, needed, image_len: regs.image_len, time: regs.time, text: String::new() })
    }

    /// One chunk of a table file for `slot`: the chunk at offset 0 starts a load (the
    /// slot is empty until the last chunk arrives and the whole file checks out).
    /// Returns true when the schema is installed.
    pub fn install_chunk(
        &mut self,
        slot: u32,
        name: &str,
        total: u32,
        checksum: u32,
        offset: u32,
        bytes: &[u8],
    ) -> Result<bool, DeviceError> {
        let max = self.cfg.table_bytes;
        if total > max {
            return Err(DeviceError::TableTooLarge { len: total, max });
        }
        let s = self.slot_mut(slot)?;
        if offset == 0 {
            *s = Slot {
                loading: Some(Loading {
                    name: name.chars().take(regs::NAME_BYTES).collect(),
                    total,
                    checksum,
                    buf: Vec::with_capacity(total as usize),
                }),
                ..Slot::default()
            };
        }
        let Some(l) = s.loading.as_mut() else {
            return Err(DeviceError::LoadOrder { slot, offset, have: 0 });
        };
        if offset as usize != l.buf.len() || l.total != total || l.checksum != checksum {
            return Err(DeviceError::LoadOrder { slot, offset, have: l.buf.len() as u32 });
        }
        if l.buf.len() + bytes.len() > total as usize {
            return Err(DeviceError::TableTooLarge { len: (l.buf.len() + bytes.len()) as u32, max: total });
        }
        l.buf.extend_from_slice(bytes);
        if l.buf.len() < total as usize {
            return Ok(false);
        }
        let l = s.loading.take().expect("a load in progress");
        let got = crate::checksum(&l.buf);
        if got != l.checksum {
            return Err(DeviceError::TableChecksum { slot, got, expected: l.checksum });
        }
        let schema = table_file::read(&l.buf).map_err(|e| DeviceError::BadTable(e.to_string()))?;
        if schema.messages.len() > regs::MAX_TYPES as usize {
            return Err(DeviceError::TooManyTypes { types: schema.messages.len(), max: regs::MAX_TYPES });
        }
        let schema = Arc::new(schema);
        let engine = self.factory.make(schema.clone()).map_err(DeviceError::Engine)?;
        let s = self.slot_mut(slot)?;
        *s = Slot {
            name: l.name,
            checksum: l.checksum,
            table_len: total,
            schema: Some(schema),
            engine: Some(engine),
            type_words: Vec::new(),
            loading: None,
        };
        self.counters.0[C_RELOADS] += 1;
        self.counters.0[C_RELOAD_BYTES] += total as u64;
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_device_error_code_has_a_meaning() {
        let all = [
            DeviceError::NoRegister(0),
            DeviceError::ReadOnly(0),
            DeviceError::NoSlot { slot: 0, slots: 0 },
            DeviceError::SlotEmpty(0),
            DeviceError::NoMessage { msg: 0, types: 0 },
            DeviceError::BadWire(0),
            DeviceError::InputTooLarge { len: 0, max: 0 },
            DeviceError::OutOfRange { what: "", offset: 0, len: 0, size: 0 },
            DeviceError::TableTooLarge { len: 0, max: 0 },
            DeviceError::LoadOrder { slot: 0, offset: 0, have: 0 },
            DeviceError::TableChecksum { slot: 0, got: 0, expected: 0 },
            DeviceError::BadTable(String::new()),
            DeviceError::TooManyTypes { types: 0, max: 0 },
            DeviceError::Engine(String::new()),
            DeviceError::Protocol(String::new()),
            DeviceError::SlotHoldsOther { slot: 0, holds: 0, wanted: 0 },
        ];
        let mut meanings = std::collections::HashSet::new();
        for e in &all {
            let m = device_error_meaning(e.code());
            assert_ne!(m, "unknown device error", "{e:?}");
            assert!(meanings.insert(m), "two codes share the meaning {m:?}");
        }
        assert_eq!(device_error_meaning(63), "unknown device error");
        assert_eq!(device_error_meaning(80), "unknown device error");
    }
}

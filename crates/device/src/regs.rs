//! The register map (docs/device.md "Register map"): 32-bit registers at word addresses,
//! 64-bit values as a low word and the high word after it, as on an AXI4-Lite bus.
//!
//! - `0x000` header block (read only): what the host reads first.
//! - `0x040` control and status of the request in the input memory (the go bit).
//! - `0x080` counters (read only, 64-bit).
//! - `0x1000 * (1 + slot)`: one block per slot: the installed schema's identity and the
//!   per-type header-word registers.

/// "HWDV" read as a little-endian word.
pub const MAGIC: u32 = u32::from_le_bytes(*b"HWDV");
/// The register map's version; a host refuses a device with another.
pub const VERSION: u32 = 1;

// ---------------------------------------------------------------- header block
pub const H_MAGIC: u32 = 0x000;
pub const H_VERSION: u32 = 0x001;
/// [`Caps`] bits.
pub const H_CAPS: u32 = 0x002;
pub const H_SLOTS: u32 = 0x003;
pub const H_IN_BYTES: u32 = 0x004;
pub const H_OUT_BYTES: u32 = 0x005;
/// Pointer widths the engine builds images with, as a bit set of byte counts (bit 4, bit 8).
pub const H_PTR_WIDTHS: u32 = 0x006;
/// [`EngineKind`].
pub const H_ENGINE: u32 = 0x007;
/// Per-type header-word registers per slot.
pub const H_TYPE_REGS: u32 = 0x008;
/// Largest table file a slot takes, in bytes.
pub const H_TABLE_BYTES: u32 = 0x009;
/// Unit of the per-request counter `C_TIME`: 0 = engine cycles, 1 = nanoseconds.
pub const H_TIME_UNIT: u32 = 0x00A;
pub const HEADER_WORDS: u32 = 0x00B;

/// Capability bits of `H_CAPS`.
pub struct Caps;
impl Caps {
    pub const PROTOBUF: u32 = 1 << 0;
    pub const OBJGRAPH: u32 = 1 << 1;
    pub const WRITE_GO: u32 = 1 << 2;
    /// Slots are reloaded with another schema at run time.
    pub const RELOAD: u32 = 1 << 3;
    pub const TYPE_REGS: u32 = 1 << 4;
}

/// The engine behind a device (`H_ENGINE`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum EngineKind {
    Cpu = 1,
    Sim = 2,
}

impl EngineKind {
    pub fn name(self) -> &'static str {
        match self {
            EngineKind::Cpu => "cpu",
            EngineKind::Sim => "sim",
        }
    }
    pub fn from_u32(v: u32) -> Option<EngineKind> {
        match v {
            1 => Some(EngineKind::Cpu),
            2 => Some(EngineKind::Sim),
            _ => None,
        }
    }
}

// ---------------------------------------------------------------- control and status
/// Write 1: start the request described by the registers below on the input memory.
pub const C_CTRL: u32 = 0x040;
/// [`Status`] bits.
pub const C_STATUS: u32 = 0x041;
pub const C_SLOT: u32 = 0x042;
pub const C_MSG: u32 = 0x043;
/// 0 = protobuf, 1 = objgraph.
pub const C_WIRE: u32 = 0x044;
pub const C_BASE: u32 = 0x045; // and 0x046
pub const C_IN_LEN: u32 = 0x047;
pub const C_MAX_DEPTH: u32 = 0x048;
/// Largest image accepted (0 = the output memory's size).
pub const C_MAX_IMAGE: u32 = 0x049;
/// The last request's verdict: 0 = image written, else an error code ([`crate::model::DeviceError::code`]
/// for device errors, `heapwire_engine::RejectKind::code` for rejections).
pub const C_ERR_KIND: u32 = 0x04A;
pub const C_ERR_OFFSET: u32 = 0x04B; // and 0x04C
pub const C_IMAGE_LEN: u32 = 0x04D;
/// The last request's engine cycles (sim) or nanoseconds (cpu), see `H_TIME_UNIT`.
pub const C_TIME: u32 = 0x04E; // and 0x04F
/// The last rejection's `needed` (buffer too small: the image size).
pub const C_NEEDED: u32 = 0x050; // and 0x051
pub const CONTROL_END: u32 = 0x052;

/// Bits of `C_STATUS`.
pub struct Status;
impl Status {
    pub const BUSY: u32 = 1 << 0;
    pub const DONE: u32 = 1 << 1;
    pub const ERROR: u32 = 1 << 2;
}

// ---------------------------------------------------------------- counters (64-bit)
pub const N_REQUESTS: u32 = 0x080;
pub const N_BYTES_IN: u32 = 0x082;
pub const N_BYTES_OUT: u32 = 0x084;
pub const N_REJECTIONS: u32 = 0x086;
pub const N_PROTOCOL_ERRORS: u32 = 0x088;
pub const N_RELOADS: u32 = 0x08A;
pub const N_RELOAD_BYTES: u32 = 0x08C;
pub const COUNTERS_END: u32 = 0x08E;

/// Counter names in register order (for `heapwire device info`).
pub const COUNTER_NAMES: [&str; 7] =
    ["requests", "bytes_in", "bytes_out", "rejections", "protocol_errors", "reloads", "reload_bytes"];

// ---------------------------------------------------------------- slot blocks
pub const SLOT_STRIDE: u32 = 0x1000;
/// 0 = empty, 1 = loading, 2 = ready.
pub const S_STATE: u32 = 0x000;
/// CRC-32C of the installed table file.
pub const S_CHECKSUM: u32 = 0x001;
pub const S_TABLE_LEN: u32 = 0x002;
pub const S_NUM_TYPES: u32 = 0x003;
/// The table-load port of the hardware variant built with run-time-loaded tables
/// (`rtl/hw_axi_wrap.v` with TABLES=1; docs/device.md "The hardware variant"), slot 0
/// only; the software device has no such registers. `S_TABLE_CTRL`: write bit 0 = 1
/// begins a load, 0 ends it; reads bit 0 loading, bit 1 tables loaded and valid.
pub const S_TABLE_CTRL: u32 = 0x004;
/// The next table word's address (counts up by one after each word).
pub const S_TABLE_ADDR: u32 = 0x005;
/// A 64-bit table word: the low word is held, writing the high word (`0x007`) writes it.
pub const S_TABLE_DATA: u32 = 0x006; // and 0x007
/// The schema's name, [`NAME_BYTES`] bytes, NUL-padded, 4 per register.
pub const S_NAME: u32 = 0x010;
pub const NAME_BYTES: usize = 64;
/// Per-type header words: type `t`'s 64-bit register at `S_TYPE + 2 * t`.
pub const S_TYPE: u32 = 0x040;
/// Types a slot has registers for.
pub const MAX_TYPES: u32 = (SLOT_STRIDE - S_TYPE) / 2;

/// Address of register `reg` of slot `slot`.
pub fn slot_reg(slot: u32, reg: u32) -> u32 {
    SLOT_STRIDE * (1 + slot) + reg
}

/// Slot states (`S_STATE`).
pub const SLOT_EMPTY: u32 = 0;
pub const SLOT_LOADING: u32 = 1;
pub const SLOT_READY: u32 = 2;

/// The header block as the host reads it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Header {
    pub version: u32,
    pub caps: u32,
    pub slots: u32,
    pub in_bytes: u32,
    pub out_bytes: u32,
    pub ptr_widths: u32,
    pub engine: u32,
    pub type_regs: u32,
    pub table_bytes: u32,
    pub time_unit: u32,
}

impl Header {
    /// The header from the words at `H_MAGIC..HEADER_WORDS`; checks the magic and version.
    pub fn parse(words: &[u32]) -> Result<Header, String> {
        if words.len() < HEADER_WORDS as usize {
            return Err(format!("header block of {} words, expected {HEADER_WORDS}", words.len()));
        }
        if words[0] != MAGIC {
            return Err(format!("not a heapwire device: magic {:#010x}, expected {MAGIC:#010x}", words[0]));
        }
        if words[1] != VERSION {
            return Err(format!("device register map version {}, this host speaks {VERSION}", words[1]));
        }
        Ok(Header {
            version: words[1],
            caps: words[2],
            slots: words[3],
            in_bytes: words[4],
            out_bytes: words[5],
            ptr_widths: words[6],
            engine: words[7],
            type_regs: words[8],
            table_bytes: words[9],
            time_unit: words[10],
        })
    }

    pub fn words(&self) -> Vec<u32> {
        vec![
            MAGIC,
            self.version,
            self.caps,
            self.slots,
            self.in_bytes,
            self.out_bytes,
            self.ptr_widths,
            self.engine,
            self.type_regs,
            self.table_bytes,
            self.time_unit,
        ]
    }

    pub fn engine_name(&self) -> &'static str {
        EngineKind::from_u32(self.engine).map_or("unknown", EngineKind::name)
    }
}

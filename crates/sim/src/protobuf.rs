//! The protobuf core in simulation: `heapwire_emit::verilog::protobuf`'s core for the
//! schema, in `heapwire_emit::testbench::protobuf`'s testbench, with memories sized so
//! that no input of the given length can overflow them.

use heapwire_emit::testbench::protobuf::{testbench, Params};
use heapwire_emit::testbench::Memories;
use heapwire_emit::verilog::log2_ceil;
use heapwire_emit::verilog::protobuf::{check_supported, generate, generate_loadable, slots, tables_hex, TableLimits, SOURCES};
use heapwire_engine::RejectKind;
use heapwire_schema::CompiledSchema;

use crate::run::{check_request, Run};
use crate::{SimError, SimOutput};

/// How the core is built and run.
#[derive(Clone, Debug)]
pub struct Options {
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
    /// The core's TABLES parameter: the schema-independent build with run-time-loaded
    /// tables (`generate_loadable`, default table sizes), the schema's table image loaded
    /// before the start (`tables_hex`; a schema that does not fit is
    /// [`SimError::Unsupported`]); else the build with the schema's ROMs (default).
    pub tables: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options { base: 0, max_depth: 100, max_cycles: 0, out_width: 64, in_width: 64, one_pass: true, out2_wr: true, tables: false }
    }
}

/// The kind of the core's error-register value `code`: the protobuf core numbers its
/// errors as [`RejectKind::code`] does (1-14).
pub fn error_kind(code: u32) -> Option<RejectKind> {
    RejectKind::from_code(code).filter(|k| k.code() <= RejectKind::Unsupported.code())
}

/// The states of `hw_pb_core` by state number (its `localparam S_...` list; a test keeps
/// the two equal), for reading a [`StateHistogram`].
pub const STATES: &[(u8, &str)] = &[
    (0, "S_IDLE"), (1, "S_START"), (3, "S_ROOT2"), (4, "S_TAG"), (5, "S_MSG"), (6, "S_MSG2"), (7, "S_MSG3"),
    (8, "S_MSG4"), (9, "S_MSG5"), (10, "S_NI"), (11, "S_NI_INIT"), (12, "S_ENTER"), (13, "S_STR"), (14, "S_STR2"),
    (15, "S_STR3"), (16, "S_STR4"), (17, "S_STR5"), (18, "S_STR_UW"), (19, "S_SCAL"), (20, "S_ELEM"),
    (21, "S_EVAL"), (22, "S_EVAL2"), (23, "S_ERRW"), (24, "S_EMIT_END"), (25, "S_UNK"), (26, "S_UNK2"),
    (27, "S_SKV"), (28, "S_GRP"), (29, "S_UNK_END"), (30, "S_NE0"), (31, "S_NE1"), (32, "S_SCRET"), (33, "S_UA0"), (34, "S_UA1"),
    (35, "S_SP0"), (36, "S_SP_W1"), (37, "S_SP_W2"), (38, "S_SP_W1B"), (39, "S_SP_OO"), (40, "S_ZERO"), (41, "S_CONS"),
    (42, "S_STR_U"), (43, "S_PASS_END"), (44, "S_REQ0"), (45, "S_REQ1"), (46, "S_REQ_W1"), (47, "S_REQ_W2"), (48, "S_REQ_W1B"),
    (49, "S_DONE"), (50, "S_ERR"), (51, "S_HDR"), (53, "S_EMIT_END2"), (54, "S_DROP1"), (55, "S_DROP2"),
    (56, "S_RESTRICT"), (58, "S_SCAN"), (59, "S_SCANPK"), (60, "S_RZF"), (61, "S_SCANME"),
    (62, "S_BAIL"),
];

/// Cycles the testbench saw in each (pass, state number of `hw_pb_core`): see [`STATES`].
pub type StateHistogram = Vec<(u8, u8, u64)>;

/// Memory sizes that can never overflow for an `n`-byte input (docs/image-layout.md "Size
/// bound"; every message instance costs at least 2 input bytes), rounded up to powers of
/// two with floors so that small inputs share one simulator build.
pub(crate) fn params(schema: &CompiledSchema, root: usize, n: usize, opts: &Options) -> Params {
    let Options { max_depth, out_width, in_width, one_pass, out2_wr, tables, .. } = *opts;
    let n = n as u64;
    let k = schema.messages.iter().map(|m| ((m.size as u64 + 7) & !7) / 2 + 8).max().unwrap_or(0).max(16);
    let img = ((schema.messages[root].size as u64 + 7) & !7) + n * k + 64;
    let (mut max_nc, mut max_ns) = (1u64, 1u64);
    for m in &schema.messages {
        let s = slots(m);
        max_nc = max_nc.max(s.n_counts as u64);
        max_ns = max_ns.max(s.n_state as u64);
    }
    let (inst_bits, cnt_bits, st_bits) = instance_bits(n, max_nc, max_ns);
    Params {
        memories: Memories {
            in_aw: log2_ceil(n.div_ceil(8) + 1).max(10),
            out_aw: log2_ceil(img.div_ceil(out_width as u64 / 8)).max(14 - log2_ceil(out_width as u64 / 64)),
            in_width,
            out_width,
        },
        max_depth,
        inst_bits,
        cnt_bits,
        st_bits,
        one_pass,
        out2_wr,
        tables,
    }
}

/// Address bits of the instance, count and state memories (INST_BITS, CNT_BITS, ST_BITS)
/// that never overflow for an `n`-byte input with at most `max_nc` count and `max_ns` state
/// slots per message instance (each instance costs at least 2 input bytes), with floors so
/// that small inputs share one simulator build.
pub(crate) fn instance_bits(n: u64, max_nc: u64, max_ns: u64) -> (u32, u32, u32) {
    let inst = n / 2 + 2;
    (log2_ceil(inst).max(12), log2_ceil(inst * max_nc).max(13), log2_ceil(inst * max_ns).max(13))
}

/// Runs the generated core on `input` (protobuf binary of message `root`) in Icarus
/// Verilog and returns the image it wrote, or the verdict its error register holds.
pub fn simulate(schema: &CompiledSchema, root: usize, input: &[u8], opts: &Options) -> Result<SimOutput, SimError> {
    simulate_inner(schema, root, input, opts, false).map(|r| r.0)
}

/// [`simulate`], also returning the cycles spent per (pass, state) of the core.
pub fn simulate_with_histogram(schema: &CompiledSchema, root: usize, input: &[u8], opts: &Options) -> Result<(SimOutput, StateHistogram), SimError> {
    simulate_inner(schema, root, input, opts, true)
}

fn simulate_inner(schema: &CompiledSchema, root: usize, input: &[u8], opts: &Options, hist: bool) -> Result<(SimOutput, StateHistogram), SimError> {
    check_supported(schema).map_err(SimError::Unsupported)?;
    if root >= schema.messages.len() {
        return Err(SimError::Tool("message index out of range".into()));
    }
    check_request(input, opts.in_width, opts.out_width)?;
    let p = params(schema, root, input.len(), opts);
    let (core, files) = if opts.tables {
        let hex = tables_hex(schema, "schema", &TableLimits::default()).map_err(SimError::Unsupported)?;
        (generate_loadable(), vec![("tables", hex)])
    } else {
        (generate(schema, "schema"), Vec::new())
    };
    let vvp = crate::cache::compile_simulator("", SOURCES, &[("schema_core.gen.v", &core), ("tb.v", &testbench(&p))])?;
    let trace = std::env::var_os("HEAPWIRE_RTL_TRACE").is_some();
    let run = Run {
        vvp: &vvp,
        input,
        root,
        base: opts.base,
        max_cycles: if opts.max_cycles > 0 { opts.max_cycles } else { 100_000 + 400 * input.len() as u64 },
        args: [trace.then_some("+trace"), hist.then_some("+hist")].into_iter().flatten().map(String::from).collect(),
        files,
        error_kind,
    };
    let (out, text) = run.run()?;
    if trace {
        eprintln!("{text}");
    }
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
    Ok((out, histogram))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::localparams;

    #[test]
    fn states_are_the_cores() {
        let want: Vec<(&str, u32)> = STATES.iter().map(|&(n, s)| (s, n as u32)).collect();
        assert_eq!(localparams(SOURCES[0].1, "S_", "7'd"), want, "STATES differs from rtl/hw_pb_core.v's states");
    }

    #[test]
    fn error_codes_are_the_kinds_of_the_same_name() {
        let codes = localparams(SOURCES[0].1, "E_", "8'd");
        assert!(codes.len() >= 12, "rtl/hw_pb_core.v's error codes not found");
        for (name, code) in codes {
            let kind = RejectKind::from_name(&name["E_".len()..].to_lowercase());
            assert_eq!(error_kind(code), kind, "rtl/hw_pb_core.v {name} = {code}");
        }
        assert_eq!(error_kind(0), None);
        assert_eq!(error_kind(RejectKind::BufferTooSmall.code()), None);
    }
}

//! The objgraph core in simulation: `heapwire_emit::verilog::objgraph`'s core for the
//! schema's classes, in `heapwire_emit::testbench::objgraph`'s testbench, with memories
//! sized so that no input of the given length can overflow them.

use heapwire_emit::testbench::objgraph::{testbench, Params};
use heapwire_emit::testbench::Memories;
use heapwire_emit::verilog::log2_ceil;
use heapwire_emit::verilog::objgraph::{check_supported, generate, SOURCES};
use heapwire_engine::RejectKind;
use heapwire_schema::CompiledSchema;

use crate::run::{check_request, Run};
use crate::{SimError, SimOutput};

/// How the core is built and run (the CPU engine's `DecodeOptions` that apply).
#[derive(Clone, Debug)]
pub struct Options {
    pub base: u64,
    /// Header register values by message index (written through the register port);
    /// classes without a value keep the reset value, their message index.
    pub type_words: Vec<u64>,
    /// Largest image accepted (the CPU engine's `max_image_bytes`).
    pub max_image_bytes: u64,
    /// Output memory word width in bits (64, 128, 256).
    pub out_width: u32,
    /// Input memory word width in bits (32, 64, 128): IN_WIDTH/32 type ids per cycle.
    pub in_width: u32,
    /// Cycle budget (0 = derived from the input size).
    pub max_cycles: u64,
}

impl Default for Options {
    fn default() -> Self {
        Options { base: 0, type_words: Vec::new(), max_image_bytes: 1 << 30, out_width: 256, in_width: 64, max_cycles: 0 }
    }
}

/// The objgraph core's error register (`rtl/hw_og_core.v`, `E_...`), by code from 1: its
/// own numbering, not [`RejectKind::code`]'s.
pub const ERRORS: [RejectKind; 10] = {
    use RejectKind::*;
    [Truncated, CountTooLarge, UnknownType, BadReference, ReferenceType, RootType, TrailingBytes, ImageTooLarge, BadBase, Capacity]
};

/// The kind of the core's error-register value `code` (0 and unknown codes: none).
pub fn error_kind(code: u32) -> Option<RejectKind> {
    ERRORS.get((code as usize).checked_sub(1)?).copied()
}

/// Sizes that never overflow for an `n`-byte input: at most (n-4)/4 objects, each at most
/// the largest class (plus alignment); powers of two with floors so small inputs share one
/// simulator build.
pub(crate) fn params(schema: &CompiledSchema, n: usize, opts: &Options) -> Params {
    let n_max = (n.saturating_sub(4) / 4) as u64;
    let max_obj = schema.classes.iter().map(|c| c.size as u64 + c.align as u64).max().unwrap_or(8);
    let ob = opts.out_width as u64 / 8;
    let img = (n_max * max_obj).min(opts.max_image_bytes.min(u32::MAX as u64) + max_obj) + ob;
    Params {
        memories: Memories {
            in_aw: log2_ceil((n as u64).div_ceil(8) + 1).max(10),
            out_aw: log2_ceil(img.div_ceil(ob)).max(10),
            in_width: opts.in_width,
            out_width: opts.out_width,
        },
        obj_bits: log2_ceil(n_max.max(1)).max(8),
    }
}

/// Runs the generated objgraph core on `input` (objgraph wire bytes whose object 0 is of
/// message `root` or a subclass) in Icarus Verilog; returns the image or the verdict of
/// its error register.
pub fn simulate(schema: &CompiledSchema, root: usize, input: &[u8], opts: &Options) -> Result<SimOutput, SimError> {
    check_supported(schema).map_err(SimError::Unsupported)?;
    let Some(root_cls) = schema.class_of(root) else {
        return Err(SimError::rejected(RejectKind::NotAClass));
    };
    check_request(input, opts.in_width, opts.out_width)?;
    let p = params(schema, input.len(), opts);
    let ob = opts.out_width as u64 / 8;
    let max_image = opts.max_image_bytes.min(u32::MAX as u64);
    let img = (1u64 << p.memories.out_aw) * ob;
    let core = generate(schema, "schema");
    let vvp = crate::cache::compile_simulator("og-", SOURCES, &[("schema_og_core.gen.v", &core), ("tb.v", &testbench(schema, &p))])?;
    let mut files = Vec::new();
    if !opts.type_words.is_empty() {
        let regs: String = schema
            .classes
            .iter()
            .map(|c| format!("{:016x}\n", opts.type_words.get(c.message as usize).copied().unwrap_or(c.message as u64)))
            .collect();
        files.push(("regs", regs));
    }
    let run = Run {
        vvp: &vvp,
        input,
        root: root_cls,
        base: opts.base,
        max_cycles: if opts.max_cycles > 0 { opts.max_cycles } else { 100_000 + 64 * input.len() as u64 + img / ob * 2 },
        args: vec![format!("+maximage={max_image}")],
        files,
        error_kind,
    };
    run.run().map(|(out, _)| out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::localparams;

    #[test]
    fn error_codes_are_the_kinds_of_the_same_name() {
        let codes = localparams(SOURCES[0].1, "E_", "8'd");
        assert_eq!(codes.len(), ERRORS.len(), "rtl/hw_og_core.v's error codes: {codes:?}");
        for (name, code) in codes {
            let kind = RejectKind::from_name(&name["E_".len()..].to_lowercase());
            assert_eq!(error_kind(code), kind, "rtl/hw_og_core.v {name} = {code}");
        }
        assert_eq!(error_kind(0), None);
        assert_eq!(error_kind(ERRORS.len() as u32 + 1), None);
    }
}

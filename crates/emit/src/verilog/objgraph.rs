//! The objgraph core: tables generated from the compiled schema's classes for the
//! generic engine `rtl/hw_og_core.v`.
//!
//! Generated (`<stem>_og_core.gen.v`): `hw_og_desc_type` (type id → class index),
//! `hw_og_desc_class` (per class: size, alignment, wire bytes, wire-member count,
//! ancestor mask for the reference type check), `hw_og_desc_member` (per class and wire
//! member: wire width, for the truncation search), `hw_og_desc_step` (the member phase's
//! step schedule per class and step, one table per input/output width), and the wrapper
//! `heapwire_og_core` with the schema's parameters (pointer width, class count, header
//! register reset values). See `docs/hardware.md`.

use std::fmt::Write;

use heapwire_schema::{CompiledSchema, Kind, NONE};

use super::log2_ceil;

/// The hand-written RTL the generated objgraph core needs: (file name, text).
/// The same files, in the same order, as rtl/hw_og_core.f (the list the scripts read; a test in
/// tests/verilog.rs keeps the two equal).
pub const SOURCES: &[(&str, &str)] = &[
    ("hw_og_core.v", include_str!("../../../../rtl/hw_og_core.v")),
    ("hw_og_reader.v", include_str!("../../../../rtl/hw_og_reader.v")),
    ("hw_sdp_ram.v", include_str!("../../../../rtl/hw_sdp_ram.v")),
];

/// Bits of the largest wire type id (at least 1): the generated type ROM compares these,
/// and the engine checks that the bits above them are zero.
fn tid_bits(schema: &CompiledSchema) -> u32 {
    let max = schema.classes.iter().filter(|c| c.type_id != NONE).map(|c| c.type_id).max().unwrap_or(0);
    log2_ceil(max as u64 + 1).max(1)
}

/// Bits of a class index: room for every class plus one "no class" value.
pub(crate) fn cls_bits(schema: &CompiledSchema) -> u32 {
    log2_ceil(schema.classes.len() as u64 + 1).max(1)
}

fn log2_small(v: u32) -> u32 {
    match v {
        1 => 0,
        2 => 1,
        4 => 2,
        _ => 3,
    }
}

/// Conversion codes of `hw_og_core` (C_REF .. C_BITS).
fn conv_code(kind: Kind) -> u32 {
    match kind {
        Kind::Message | Kind::Group => 0,
        Kind::Bool => 3,
        Kind::Float | Kind::Double => 4,
        Kind::Int32 | Kind::Int64 | Kind::SInt32 | Kind::SInt64 | Kind::SFixed32 | Kind::SFixed64 | Kind::Enum => 1,
        _ => 2,
    }
}

/// Whether the objgraph core supports this schema.
pub fn check_supported(schema: &CompiledSchema) -> Result<(), String> {
    if schema.classes.is_empty() {
        return Err("the schema has no classes".into());
    }
    if schema.classes.len() > 4096 {
        return Err("more than 4096 classes".into());
    }
    for c in &schema.classes {
        if c.members.len() > 0xffff {
            return Err("a class with more than 65535 members".into());
        }
        // the engine aligns objects by adding 0 or 4 (sizes multiples of 4, alignment 4 or 8)
        if !(c.align == 4 || c.align == 8) || c.size % c.align != 0 || c.size >= 1 << 24 {
            return Err(format!("class {}: alignment {} / size {} not supported by the objgraph core", c.cpp_name, c.align, c.size));
        }
        let mut end = 0;
        for m in &c.members {
            if m.offset < end || m.wire_width > m.size || ![1, 2, 4, 8].contains(&m.size) {
                return Err(format!("class {}: member layout not supported by the objgraph core", c.cpp_name));
            }
            end = m.offset + m.size;
        }
    }
    Ok(())
}

/// Geometry of the member-phase step ROM for one (IN_WIDTH, OUT_WIDTH) of the engine:
/// `win` wire bytes a step may take (two input words), `nref` reference slots per step
/// (`win / 8`), `frag` image bytes a step may write (one output word). Must match the
/// derived parameters of `rtl/hw_og_core.v` (WIN, NREF, FRAG, SRC_N, SEL_BITS).
#[derive(Clone, Copy, Debug)]
struct StepGeom {
    win: u32,
    nref: u32,
    frag: u32,
}

impl StepGeom {
    fn new(in_width: u32, out_width: u32) -> Self {
        let win = 2 * in_width / 8;
        StepGeom { win, nref: win / 8, frag: out_width / 8 }
    }
    /// Byte sources of a fragment byte: 0 zero, header byte q, reference slot j byte q,
    /// window byte b, sign fill of window byte b, bool (0/1) of window byte b.
    fn src_n(&self) -> u32 {
        9 + 8 * self.nref + 3 * self.win
    }
    fn sel_bits(&self) -> u32 {
        log2_ceil(self.src_n() as u64)
    }
    fn hdr(&self, q: u32) -> u32 {
        1 + q
    }
    fn refb(&self, j: u32, q: u32) -> u32 {
        9 + 8 * j + q
    }
    fn wire(&self, b: u32) -> u32 {
        9 + 8 * self.nref + b
    }
    fn sign(&self, b: u32) -> u32 {
        9 + 8 * self.nref + self.win + b
    }
    fn boolb(&self, b: u32) -> u32 {
        9 + 8 * self.nref + 2 * self.win + b
    }
}

/// One member-phase step of a class: the wire bytes it takes (`nb`), whether it ends the
/// object, the image bytes [lo, lo+len) of the object it writes (every byte: header,
/// members, padding), its reference slots (window offset, target class) and, per image
/// byte, the source code (`StepGeom`).
#[derive(Clone, Debug)]
struct Step {
    nb: u32,
    last: bool,
    lo: u32,
    len: u32,
    refs: Vec<(u32, u64)>,
    sel: Vec<u32>,
}

/// The steps of class `ci`: greedy, in memory (= wire) order; a step takes members while
/// they fit the window, the reference slots and the fragment; the steps tile the object.
fn class_steps(schema: &CompiledSchema, ci: usize, g: StepGeom, none: u64) -> Vec<Step> {
    let c = &schema.classes[ci];
    let ptr = schema.ptr();
    let mems: Vec<_> = c.members.iter().filter(|m| m.wire_width > 0).collect();
    let mut steps = Vec::new();
    let mut lo = 0u32;
    let mut k = 0usize;
    loop {
        let first = steps.is_empty();
        let mut st = Step { nb: 0, last: false, lo, len: 0, refs: Vec::new(), sel: vec![0; g.frag as usize] };
        let mut hi = lo;
        if first {
            for q in 0..ptr {
                st.sel[q as usize] = g.hdr(q);
            }
            hi = ptr;
        }
        while k < mems.len() {
            let m = mems[k];
            let f = schema.member_field(m);
            let conv = conv_code(f.kind);
            let is_ref = conv == 0;
            if m.offset + m.size > lo + g.frag || st.nb + m.wire_width > g.win || (is_ref && st.refs.len() as u32 == g.nref) {
                break;
            }
            let wb = st.nb;
            for q in 0..m.size {
                let code = if is_ref {
                    g.refb(st.refs.len() as u32, q)
                } else if conv == 3 {
                    if q == 0 { g.boolb(wb) } else { 0 }
                } else if q < m.wire_width {
                    g.wire(wb + q)
                } else if conv == 1 {
                    g.sign(wb + m.wire_width - 1)
                } else {
                    0
                };
                st.sel[(m.offset + q - lo) as usize] = code;
            }
            if is_ref {
                let tgt = schema.class_of(f.sub as usize).map(|x| x as u64).unwrap_or(none);
                st.refs.push((wb, tgt));
            }
            st.nb += m.wire_width;
            hi = m.offset + m.size;
            k += 1;
        }
        if k == mems.len() {
            hi = hi.max(c.size.min(lo + g.frag));
        } else {
            hi = hi.max(mems[k].offset.min(lo + g.frag));
        }
        st.len = hi - lo;
        st.last = k == mems.len() && hi == c.size;
        let last = st.last;
        steps.push(st);
        lo = hi;
        if last {
            return steps;
        }
    }
}

/// `hw_og_desc_step`: the step ROM, one table per (WIN_BYTES, FRAG_BYTES) the engine can
/// be built with; row = {nb[5:0], last, lo[31:0], len[5:0], rv[NREF], roff[5*NREF],
/// rtgt[CLS_BITS*NREF], sel[SEL_BITS*FRAG]} (slot j / byte b at the low end).
fn write_step_rom(v: &mut String, schema: &CompiledSchema, cb: u32) {
    let none = (1u64 << cb) - 1;
    let _ = write!(v, "// per (class, step): the member phase's step schedule (rtl/hw_og_core.v, docs/hardware.md):
// wire bytes taken, last step of the object, image bytes [lo, lo+len) of the object written,
// reference slots (valid, window offset, target class), and per image byte its source
// (0 zero, 1+q header byte q, 9+8j+q reference slot j byte q, then window byte b, the sign
// fill of window byte b, the bool of window byte b). One table per (WIN_BYTES, FRAG_BYTES).
module hw_og_desc_step #(
    parameter WIN_BYTES = 16,   // wire bytes a step may take (2 * IN_WIDTH/8)
    parameter FRAG_BYTES = 32,  // image bytes a step may write (OUT_WIDTH/8)
    parameter NREF = WIN_BYTES / 8,
    parameter SEL_BITS = $clog2(9 + 8 * NREF + 3 * WIN_BYTES)
) (
    input  wire [{cbm}:0] s_cls,
    input  wire [15:0] s_idx,
    output wire [5:0]  s_nb,
    output wire        s_last,
    output wire [31:0] s_lo,
    output wire [5:0]  s_len,
    output wire [NREF-1:0] s_rv,
    output wire [5*NREF-1:0] s_roff,
    output wire [{cb}*NREF-1:0] s_rtgt,
    output wire [SEL_BITS*FRAG_BYTES-1:0] s_sel
);
localparam ROW = 45 + NREF * (6 + {cb}) + SEL_BITS * FRAG_BYTES;
wire [ROW-1:0] row;
assign {{s_nb, s_last, s_lo, s_len, s_rv, s_roff, s_rtgt, s_sel}} = row;
// (the walk never asks for a step past an object's last, so a table compares only the
// index bits its longest object needs: a short match in front of the ROM)
wire unused_s_idx = &{{1'b0, s_idx}};
generate
", cbm = cb - 1);
    let mut first = true;
    for in_w in [32u32, 64, 128] {
        for out_w in [64u32, 128, 256] {
            let g = StepGeom::new(in_w, out_w);
            let sb = g.sel_bits();
            let row_bits = 45 + g.nref * (6 + cb) + sb * g.frag;
            let _ = writeln!(v, "{}if (WIN_BYTES == {} && FRAG_BYTES == {}) begin : g_w{}_f{}", if first { "" } else { "end else " }, g.win, g.frag, g.win, g.frag);
            first = false;
            let steps: Vec<Vec<Step>> = (0..schema.classes.len()).map(|ci| class_steps(schema, ci, g, none)).collect();
            let ib = log2_ceil(steps.iter().map(|s| s.len()).max().unwrap_or(1).max(1) as u64);
            let key_expr = if ib == 0 { "s_cls".to_string() } else { format!("{{s_cls, s_idx[{}:0]}}", ib - 1) };
            let _ = writeln!(v, "    reg [{}:0] r;\n    always @* begin\n        case ({key_expr})", row_bits - 1);
            for (ci, c) in schema.classes.iter().enumerate() {
                for (si, st) in steps[ci].iter().enumerate() {
                    // bits, least significant first
                    let mut bits: Vec<bool> = Vec::with_capacity(row_bits as usize);
                    let mut put = |val: u64, w: u32| {
                        for i in 0..w {
                            bits.push((val >> i) & 1 == 1);
                        }
                    };
                    for b in 0..g.frag as usize {
                        put(st.sel[b] as u64, sb);
                    }
                    for j in 0..g.nref as usize {
                        put(st.refs.get(j).map(|r| r.1).unwrap_or(0), cb);
                    }
                    for j in 0..g.nref as usize {
                        put(st.refs.get(j).map(|r| r.0 as u64).unwrap_or(0), 5);
                    }
                    for j in 0..g.nref as usize {
                        put((j < st.refs.len()) as u64, 1);
                    }
                    put(st.len as u64, 6);
                    put(st.lo as u64, 32);
                    put(st.last as u64, 1);
                    put(st.nb as u64, 6);
                    let mut hex = String::new();
                    let nd = (row_bits as usize).div_ceil(4);
                    for d in (0..nd).rev() {
                        let mut x = 0;
                        for i in 0..4 {
                            if bits.get(4 * d + i).copied().unwrap_or(false) {
                                x |= 1 << i;
                            }
                        }
                        hex.push(char::from_digit(x, 16).unwrap());
                    }
                    let key = ((ci as u64) << ib) | si as u64;
                    let _ = writeln!(v, "        {}'d{key}: r = {row_bits}'h{hex}; // {} step {si}", cb + ib, schema.messages[c.message as usize].full_name);
                }
            }
            let _ = writeln!(v, "        default: r = {{{row_bits}{{1'b0}}}};\n        endcase\n    end\n    assign row = r;");
        }
    }
    v.push_str("end else begin : g_none\n    assign row = {ROW{1'b0}};\nend\nendgenerate\nendmodule\n\n");
}

/// The generated Verilog for the classes of `schema`.
pub fn generate(schema: &CompiledSchema, name: &str) -> String {
    let nc = schema.classes.len().max(1);
    let cb = cls_bits(schema);

    let mut v = super::header(
        &format!("{name}_og_core.gen.v"),
        "objgraph.rs",
        &format!(
            "Class tables for the generic objgraph engine rtl/hw_og_core.v, and its wrapper heapwire_og_core.\n\
             {} classes, pointer width {} bytes.",
            schema.classes.len(),
            schema.ptr()
        ),
    );

    // ---- type ids
    let tb = tid_bits(schema);
    let _ = write!(v, "// wire type id -> class index, from the id's low {tb} bits (the largest id's width; the\n// engine checks that the bits above are zero: parameter TID_BITS)\nmodule hw_og_desc_type (\n    input  wire [{tbm}:0] t_lo,\n    output wire        t_hit,\n    output wire [{cbm}:0] t_cls\n);\nassign {{t_hit, t_cls}} = rom(t_lo);\nfunction [{cb}:0] rom;\n    input [{tbm}:0] t_lo;\nbegin\n    case (t_lo)\n", cbm = cb - 1, tbm = tb - 1);
    for (ci, c) in schema.classes.iter().enumerate() {
        if c.type_id != NONE {
            let _ = writeln!(v, "    {tb}'d{}: rom = {{1'b1, {cb}'d{ci}}}; // {}", c.type_id, schema.messages[c.message as usize].full_name);
        }
    }
    let _ = write!(v, "    default: rom = {{1'b0, {cb}'d0}};\n    endcase\nend\nendfunction\nendmodule\n\n");

    // ---- classes
    let _ = write!(v, "// per class: object size, alignment, wire bytes of its members, wire members,\n// ancestor mask (bit t: the class is class t or derives from it)\nmodule hw_og_desc_class (\n    input  wire [{cbm}:0] c_idx,\n    output wire [31:0] c_size,\n    output wire [31:0] c_align,\n    output wire [31:0] c_wsize,\n    output wire [15:0] c_nwire,\n    output wire [{ncm}:0] c_anc\n);\nassign {{c_size, c_align, c_wsize, c_nwire, c_anc}} = rom(c_idx);\nfunction [32*3+16+{ncm}:0] rom;\n    input [{cbm}:0] c_idx;\nbegin\n    case (c_idx)\n", cbm = cb - 1, ncm = nc - 1);
    for (ci, c) in schema.classes.iter().enumerate() {
        let wsize: u32 = c.members.iter().map(|m| m.wire_width).sum();
        let nwire = c.members.iter().filter(|m| m.wire_width > 0).count();
        let mut anc = vec!['0'; nc];
        for (t, a) in anc.iter_mut().enumerate() {
            if schema.is_subclass(ci, t) {
                *a = '1';
            }
        }
        anc.reverse();
        let anc: String = anc.into_iter().collect();
        let _ = writeln!(v, "    {cb}'d{ci}: rom = {{32'd{}, 32'd{}, 32'd{wsize}, 16'd{nwire}, {nc}'b{anc}}}; // {}", c.size, c.align,
            schema.messages[c.message as usize].full_name);
    }
    let _ = write!(v, "    default: rom = {{32'd0, 32'd8, 32'd0, 16'd0, {nc}'d0}};\n    endcase\nend\nendfunction\nendmodule\n\n");

    // ---- members (the truncation search only needs the wire widths)
    let _ = write!(v, "// per (class, wire member k): log2 wire width (the truncation search)\nmodule hw_og_desc_member (\n    input  wire [{cbm}:0] m_cls,\n    input  wire [15:0] m_k,\n    output wire [1:0]  m_wl\n);\nassign m_wl = rom(m_cls, m_k);\nfunction [1:0] rom;\n    input [{cbm}:0] m_cls;\n    input [15:0] m_k;\nbegin\n    case ({{m_cls, m_k}})\n", cbm = cb - 1);
    for (ci, c) in schema.classes.iter().enumerate() {
        for (k, m) in c.members.iter().filter(|m| m.wire_width > 0).enumerate() {
            let f = schema.member_field(m);
            let key = ((ci as u64) << 16) | k as u64;
            let _ = writeln!(v, "    {}'d{key}: rom = 2'd{}; // {}.{}", cb + 16, log2_small(m.wire_width), schema.messages[c.message as usize].full_name, f.name);
        }
    }
    let _ = write!(v, "    default: rom = 2'd0;\n    endcase\nend\nendfunction\nendmodule\n\n");

    // ---- steps
    write_step_rom(&mut v, schema, cb);

    // ---- wrapper
    let mut init = String::new();
    for c in schema.classes.iter().rev() {
        if !init.is_empty() {
            init.push_str(", ");
        }
        let _ = write!(init, "64'd{}", c.message);
    }
    let _ = write!(v, "// the objgraph engine with this schema's parameters
module heapwire_og_core #(
    parameter IN_WIDTH = 64,        // input memory word width (32, 64, 128)
    parameter IN_ADDR_WIDTH = 12,   // input memory word address bits
    parameter OUT_WIDTH = 256,      // output memory word width (64, 128, 256)
    parameter OUT_ADDR_WIDTH = 12,  // output memory word address bits
    parameter OBJ_BITS = 8          // log2 object-pointer table entries
) (
    input  wire clk, input wire rst,
    input  wire start, input wire [31:0] in_len, input wire [{cbm}:0] root_cls, input wire [63:0] base,
    input  wire [63:0] max_image,
    output wire busy, output wire done, output wire [7:0] err_code, output wire [31:0] err_offset,
    output wire [31:0] image_size, output wire [63:0] cycles,
    input  wire hdr_wr_en, input wire [{cbm}:0] hdr_wr_idx, input wire [63:0] hdr_wr_data,
    output wire in_rd_en, output wire [IN_ADDR_WIDTH-1:0] in_addr, input wire [IN_WIDTH-1:0] in_rd_data,
    output wire in2_rd_en, output wire [IN_ADDR_WIDTH-1:0] in2_addr, input wire [IN_WIDTH-1:0] in2_rd_data,
    output wire out_wr_en, output wire [OUT_ADDR_WIDTH-1:0] out_wr_addr, output wire [OUT_WIDTH-1:0] out_wr_data
);
hw_og_core #(
    .IN_WIDTH(IN_WIDTH), .IN_ADDR_WIDTH(IN_ADDR_WIDTH), .OUT_WIDTH(OUT_WIDTH), .OUT_ADDR_WIDTH(OUT_ADDR_WIDTH),
    .OBJ_BITS(OBJ_BITS), .NCLS({nc}), .CLS_BITS({cb}), .TID_BITS({tb}), .PTR_BYTES({ptr}),
    .HDR_INIT({{{init}}})
) core (
    .clk(clk), .rst(rst), .start(start), .in_len(in_len), .root_cls(root_cls), .base(base), .max_image(max_image),
    .busy(busy), .done(done), .err_code(err_code), .err_offset(err_offset), .image_size(image_size), .cycles(cycles),
    .hdr_wr_en(hdr_wr_en), .hdr_wr_idx(hdr_wr_idx), .hdr_wr_data(hdr_wr_data),
    .in_rd_en(in_rd_en), .in_addr(in_addr), .in_rd_data(in_rd_data),
    .in2_rd_en(in2_rd_en), .in2_addr(in2_addr), .in2_rd_data(in2_rd_data),
    .out_wr_en(out_wr_en), .out_wr_addr(out_wr_addr), .out_wr_data(out_wr_data)
);
endmodule
", cbm = cb - 1, ptr = schema.ptr());
    v.push_str(&super::axi_wrapper(&super::AxiWrapper {
        module: "heapwire_og_axi",
        core_params: "    parameter OBJ_BITS = 8,         // log2 object-pointer table entries\n",
        core: &og_axi_core(cb),
        glue: &og_axi_glue(schema, cb),
        wrap_params: format!(".WIRE(1), .PTR_BYTES({}), .NUM_TYPES({}), .MAX_DEPTH(0), .ERR_MAP({OG_ERR_MAP}), .NAME({})",
            schema.ptr(), schema.messages.len().max(1), super::name_param(name)),
    }));
    super::footer(&mut v);
    v
}

/// hw_og_core's error codes 1..10 as heapwire_engine::RejectKind's codes (byte c = code c):
/// truncated 1, count_too_large 32, unknown_type 33, bad_reference 34, reference_type 35,
/// root_type 36, trailing_bytes 37, image_too_large 11, bad_base 12, capacity 13. The AXI
/// testbench (rtl/tb/heapwire_axi) checks the kinds against `heapwire decode`.
const OG_ERR_MAP: &str = "128'h00000000_000d0c0b_25242322_21200100";

/// heapwire_og_axi's heapwire_og_core.
fn og_axi_core(cb: u32) -> String {
    format!("heapwire_og_core #(
    .IN_WIDTH(IN_WIDTH), .IN_ADDR_WIDTH(IN_ADDR_WIDTH), .OUT_WIDTH(OUT_WIDTH), .OUT_ADDR_WIDTH(OUT_ADDR_WIDTH), .OBJ_BITS(OBJ_BITS)
) core (
    .clk(clk), .rst(rst), .start(core_start), .in_len(core_in_len), .root_cls(root_cls), .base(core_base),
    .max_image(core_max_image), .busy(core_busy), .done(core_done), .err_code(core_err_code), .err_offset(core_err_offset),
    .image_size(core_image_size), .cycles(core_cycles),
    .hdr_wr_en(core_type_wr_en && hdr_cls != {cb}'d{none}), .hdr_wr_idx(hdr_cls), .hdr_wr_data(core_type_wr_data),
    .in_rd_en(core_in_rd_en), .in_addr(core_in_addr), .in_rd_data(core_in_rd_data),
    .in2_rd_en(core_in2_rd_en), .in2_addr(core_in2_addr), .in2_rd_data(core_in2_rd_data),
    .out_wr_en(core_out_wr_en), .out_wr_addr(core_out_wr_addr), .out_wr_data(core_out_wr_data)
);
", none = (1u64 << cb) - 1)
}

/// heapwire_og_axi's glue: the device's message index (MSG, the S_TYPE registers) to the
/// core's class index (all ones: no class; such a root is refused by the core as
/// root_type, such a register write dropped); the output memory ports the objgraph core
/// lacks.
fn og_axi_glue(schema: &CompiledSchema, cb: u32) -> String {
    let none = (1u64 << cb) - 1;
    let mut v = format!("// message index -> class index ({cb}'d{none}: no class)\nfunction [{cbm}:0] class_of;\n    input [15:0] m;\nbegin\n    case (m)\n", cbm = cb - 1);
    for (ci, c) in schema.classes.iter().enumerate() {
        let _ = writeln!(v, "    16'd{}: class_of = {cb}'d{ci}; // {}", c.message, schema.messages[c.message as usize].full_name);
    }
    let _ = write!(v, "    default: class_of = {cb}'d{none};\n    endcase\nend\nendfunction\n\
        wire [{cbm}:0] root_cls = class_of(core_root);\nwire [{cbm}:0] hdr_cls = class_of(core_type_wr_idx);\n\
        assign core_out_wr_be = {{(OUT_WIDTH/8){{1'b1}}}};  // whole-word writes\n\
        assign core_out_rd_en = 1'b0;\nassign core_out_rd_addr = {{OUT_ADDR_WIDTH{{1'b0}}}};\n\
        assign core_out2_wr_en = 1'b0;\nassign core_out2_wr_addr = {{OUT_ADDR_WIDTH{{1'b0}}}};\n\
        assign core_out2_wr_data = {{OUT_WIDTH{{1'b0}}}};\nassign core_out2_wr_be = {{(OUT_WIDTH/8){{1'b0}}}};\n\
        assign core_tables_ok = 1'b1;  // no table-load port: the tables are built in\n", cbm = cb - 1);
    v
}

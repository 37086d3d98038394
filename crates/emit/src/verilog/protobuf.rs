//! The protobuf core: the schema's descriptor ROMs and the `heapwire_core` wrapper around
//! the generic engine `rtl/hw_pb_core.v` (which instantiates `hw_stream_reader`,
//! `hw_varint_decoder`, `hw_utf8_check`, `hw_pb_writer`, `hw_pb_fields`, its input stage
//! `hw_pb_input`, its memories `hw_pb_frames`, `hw_pb_counts` and `hw_pb_insts`, and its
//! zeroer `hw_pb_zeroer`: the files of rtl/hw_pb_core.f).

use std::fmt::Write;

use heapwire_schema::{CompiledSchema, Kind, Presence, NONE};

/// The hand-written RTL the generated core needs, embedded so that every tool works from
/// any directory: (file name, text).
/// The same files, in the same order, as rtl/hw_pb_core.f (the list the scripts read; a test in
/// tests/verilog.rs keeps the two equal).
pub const SOURCES: &[(&str, &str)] = &[
    ("hw_pb_core.v", include_str!("../../../../rtl/hw_pb_core.v")),
    ("hw_stream_reader.v", include_str!("../../../../rtl/hw_stream_reader.v")),
    ("hw_varint_decoder.v", include_str!("../../../../rtl/hw_varint_decoder.v")),
    ("hw_utf8_check.v", include_str!("../../../../rtl/hw_utf8_check.v")),
    ("hw_pb_writer.v", include_str!("../../../../rtl/hw_pb_writer.v")),
    ("hw_pb_fields.v", include_str!("../../../../rtl/hw_pb_fields.v")),
    ("hw_pb_input.v", include_str!("../../../../rtl/hw_pb_input.v")),
    ("hw_pb_frames.v", include_str!("../../../../rtl/hw_pb_frames.v")),
    ("hw_pb_counts.v", include_str!("../../../../rtl/hw_pb_counts.v")),
    ("hw_pb_insts.v", include_str!("../../../../rtl/hw_pb_insts.v")),
    ("hw_pb_zeroer.v", include_str!("../../../../rtl/hw_pb_zeroer.v")),
];

/// heapwire_core's parameters beyond the memories' (heapwire_axi passes them on).
const PB_AXI_PARAMS: &str = "    parameter MAX_DEPTH = 100,      // deepest nesting below the root
    parameter INST_BITS = 10,       // log2 message instances per input
    parameter CNT_BITS = 11,        // log2 count-memory entries
    parameter ST_BITS = 11,         // log2 state-memory entries
    parameter DROP_BITS = 8,        // log2 dropped-map-entry list entries
    parameter ONE_PASS = 1,         // 1 = one pass first, two passes when needed; 0 = always two
    parameter OUT2_WR = 1,          // 1 = short strings through the second output write port
";

/// heapwire_core's (and heapwire_axi's) TABLES parameter, defaulting to `tables`, and the
/// table sizes (`TableLimits::default()`); `more`: parameters follow (a comma after the last).
fn table_params(tables: u8, more: bool) -> String {
    let comma = if more { "," } else { "" };
    let TableLimits { field_rows, ovf_rows, msg_rows, enum_rows, enum_vals } = TableLimits::default();
    format!("    parameter TABLES = {tables},         // 1 = descriptor tables loaded at run time (tbl_wr_*), 0 = the ROMs
    parameter FIELD_ROWS = {field_rows},   // TABLES=1 sizes: field rows, overflow keys, message rows, enums
    parameter OVF_ROWS = {ovf_rows},
    parameter MSG_ROWS = {msg_rows},
    parameter ENUM_ROWS = {enum_rows},
    parameter ENUM_VALS = {enum_vals}{comma}   // TABLES=1: closed-enum values
")
}

/// heapwire_axi's heapwire_core (the table-load port on hw_axi_wrap's S_TABLE_ registers).
const PB_AXI_CORE: &str = "heapwire_core #(
    .IN_WIDTH(IN_WIDTH), .IN_ADDR_WIDTH(IN_ADDR_WIDTH), .OUT_WIDTH(OUT_WIDTH), .OUT_ADDR_WIDTH(OUT_ADDR_WIDTH),
    .MAX_DEPTH(MAX_DEPTH), .INST_BITS(INST_BITS), .CNT_BITS(CNT_BITS), .ST_BITS(ST_BITS), .DROP_BITS(DROP_BITS),
    .ONE_PASS(ONE_PASS), .OUT2_WR(OUT2_WR),
    .TABLES(TABLES), .FIELD_ROWS(FIELD_ROWS), .OVF_ROWS(OVF_ROWS), .MSG_ROWS(MSG_ROWS), .ENUM_ROWS(ENUM_ROWS), .ENUM_VALS(ENUM_VALS)
) core (
    .clk(clk), .rst(rst), .start(core_start), .in_len(core_in_len), .root_msg(core_root), .base(core_base),
    .busy(core_busy), .done(core_done), .err_code(core_err_code), .err_offset(core_err_offset),
    .image_size(core_image_size), .cycles(core_cycles),
    .type_wr_en(core_type_wr_en), .type_wr_idx(core_type_wr_idx), .type_wr_data(core_type_wr_data),
    .in_rd_en(core_in_rd_en), .in_addr(core_in_addr), .in_rd_data(core_in_rd_data),
    .out_wr_en(core_out_wr_en), .out_wr_addr(core_out_wr_addr), .out_wr_data(core_out_wr_data), .out_wr_be(core_out_wr_be),
    .out_rd_en(core_out_rd_en), .out_rd_addr(core_out_rd_addr), .out_rd_data(core_out_rd_data),
    .out2_wr_en(core_out2_wr_en), .out2_wr_addr(core_out2_wr_addr), .out2_wr_data(core_out2_wr_data), .out2_wr_be(core_out2_wr_be),
    .table_load(core_table_load), .tbl_wr_en(core_tbl_wr_en), .tbl_wr_addr(core_tbl_wr_addr), .tbl_wr_data(core_tbl_wr_data),
    .tables_ok(core_tables_ok)
);
";

/// `heapwire_axi`: `heapwire_core` in the bus wrapper; its TABLES parameter defaults to
/// `tables` (with TABLES=1: the wrapper's table-load registers, 32- or 64-bit pointers and
/// MSG_ROWS - 1 type registers, no name; else the schema's pointer width, `n_msgs` and `name`).
fn pb_axi(tables: u8, ptr: u32, n_msgs: usize, name: &str) -> String {
    super::axi_wrapper(&super::AxiWrapper {
        module: "heapwire_axi",
        core_params: &format!("{PB_AXI_PARAMS}{}", table_params(tables, true)),
        core: PB_AXI_CORE,
        // the protobuf core has one input read port
        glue: "assign core_in2_rd_en = 1'b0;\nassign core_in2_addr = {IN_ADDR_WIDTH{1'b0}};\n",
        // error codes are RejectKind's (hw_axi_wrap's default ERR_MAP)
        wrap_params: format!(".WIRE(0), .PTR_BYTES({ptr}), .NUM_TYPES(TABLES != 0 ? MSG_ROWS - 1 : {}), .MAX_DEPTH(MAX_DEPTH),
    .NAME(TABLES != 0 ? 512'd0 : {}), .TABLES(TABLES)", n_msgs.max(1), super::name_param(name)),
    })
}

/// Slot numbering shared with the CPU engine (`crates/cpu/src/protobuf/decode/tables.rs`, `MsgInfo`):
/// per message, repeated fields get count slots 0.., singular message fields state
/// slots 0..; the unknown-bytes count slot follows the repeated ones, the oneof case
/// slots follow the message ones.
pub struct Slots {
    pub slot: Vec<u32>,
    pub n_counts: u32,
    pub n_msg_state: u32,
    pub n_state: u32,
}

pub fn slots(m: &heapwire_schema::Message) -> Slots {
    let mut slot = vec![0u32; m.fields.len()];
    let (mut nc, mut ns) = (0u32, 0u32);
    for (i, f) in m.fields.iter().enumerate() {
        if f.is_repeated() {
            slot[i] = nc;
            nc += 1;
        } else if f.kind.is_message() {
            slot[i] = ns;
            ns += 1;
        }
    }
    Slots { slot, n_counts: nc + 1, n_msg_state: ns, n_state: ns + m.oneofs.len() as u32 }
}

/// The CPU engine (the reference) does not enforce proto2 `required` when parsing, like
/// the official parsers; the core's required check stays in the RTL, switched off.
const ENFORCE_REQUIRED: bool = false;

/// Bits of one `hw_pb_desc_msg` entry: {size, size8, hasoff, unkoff, nc, ns, nms, req,
/// hwords, map}.
const MSG_ENTRY_BITS: u32 = 32 * 4 + 8 * 4 + 2;

/// One `hw_pb_desc_msg` entry, packed as the module's output concatenation.
#[allow(clippy::too_many_arguments)]
fn msg_entry(size: u32, hasoff: u32, unkoff: u32, nc: u32, ns: u32, nms: u32, req: bool, hwords: u32, map: bool) -> WideBits {
    let mut e = WideBits::default();
    for (val, bits) in [(size, 32), (align8(size), 32), (hasoff, 32), (unkoff, 32), (nc, 8), (ns, 8), (nms, 8), (req as u32, 1), (hwords, 8), (map as u32, 1)] {
        e.push(val, bits);
    }
    e
}

/// A bit string wider than 128 bits, built from its most significant field down, printed in
/// hex.
#[derive(Default)]
struct WideBits {
    hi: u128,
    lo: u128,
}

impl WideBits {
    fn push(&mut self, val: u32, bits: u32) {
        let val = (val as u128) & ((1u128 << bits) - 1);
        self.hi = (self.hi << bits) | (self.lo >> (128 - bits));
        self.lo = (self.lo << bits) | val;
    }
}

impl WideBits {
    /// The low 256 bits as four 64-bit lanes, lane 0 the lowest.
    fn lanes(&self) -> [u64; 4] {
        [self.lo as u64, (self.lo >> 64) as u64, self.hi as u64, (self.hi >> 64) as u64]
    }
}

impl std::fmt::LowerHex for WideBits {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.hi == 0 { write!(f, "{:x}", self.lo) } else { write!(f, "{:x}{:032x}", self.hi, self.lo) }
    }
}

fn align8(v: u32) -> u32 {
    (v + 7) & !7
}

/// Whether the engine supports everything this schema needs (message count, widths).
pub fn check_supported(schema: &CompiledSchema) -> Result<(), String> {
    if schema.messages.len() > 0xffff {
        return Err("more than 65535 message types".into());
    }
    for m in &schema.messages {
        let s = slots(m);
        if s.n_counts > 255 || s.n_state > 255 || m.hasbit_count > 255 * 32 {
            return Err(format!("{}: more than 254 repeated fields or 255 state slots", m.full_name));
        }
    }
    Ok(())
}

/// The generated Verilog for `schema`: `hw_pb_desc_msg`, `hw_pb_desc_field`,
/// `hw_pb_desc_enum`, `hw_pb_desc_req`, the wrapper `heapwire_core` and its bus wrapper
/// `heapwire_axi` (`rtl/hw_axi_wrap.v` around `heapwire_core`).
pub fn generate(schema: &CompiledSchema, name: &str) -> String {
    let mut v = super::header(
        &format!("{name}_core.gen.v"),
        "protobuf.rs",
        &format!(
            "Descriptor ROMs for the generic engine rtl/hw_pb_core.v, and its wrapper heapwire_core.\n\
             {} message types, {} enums, pointer width {} bytes, header words {}.",
            schema.messages.len(),
            schema.enums.len(),
            schema.ptr(),
            schema.layout.header_words
        ),
    );

    // ---- messages
    // A memory initialised from the compiled schema with a registered read (block RAM with
    // its output register: a DP16KD on ECP5), addressed with the index of the next cycle so
    // that its output is always the entry of the index register the engine holds.
    let n_msgs = schema.messages.len();
    let _ = write!(v, "// per message: struct size (and rounded to 8), presence-word and unknown-field offsets,\n// count slots (repeated fields + 1), state slots (message fields + oneofs), message state slots,\n// has required fields, presence words, is a map entry.\n// Registered read: the outputs in a cycle are the entry of the m_idx_next of the cycle before\n// (the engine passes the next value of its index register). Entry {n_msgs}: any index past the\n// last message.\nmodule hw_pb_desc_msg (\n    input  wire        clk,\n    input  wire [15:0] m_idx_next,\n    output wire [31:0] m_size,\n    output wire [31:0] m_size8,\n    output wire [31:0] m_hasoff,\n    output wire [31:0] m_unkoff,\n    output wire [7:0]  m_nc,\n    output wire [7:0]  m_ns,\n    output wire [7:0]  m_nms,\n    output wire        m_req,\n    output wire [7:0]  m_hwords,\n    output wire        m_map\n);\nlocalparam [15:0] LAST = 16'd{n_msgs};\n(* ram_style = \"block\" *)\nreg [{w}:0] mem [0:{n_msgs}];\nreg [{w}:0] q;\nwire [{aw1}:0] addr = (m_idx_next < LAST) ? m_idx_next[{aw1}:0] : LAST[{aw1}:0];\ninitial begin\n", w = MSG_ENTRY_BITS - 1, aw1 = (usize::BITS - n_msgs.leading_zeros()).max(1) - 1);
    for (i, m) in schema.messages.iter().enumerate() {
        let s = slots(m);
        let req = m.fields.iter().any(|f| f.is_required());
        let e = msg_entry(m.size, m.hasbits_offset, m.unknown_offset, s.n_counts, s.n_state, s.n_msg_state, req, m.hasbit_count.div_ceil(32), m.is_map_entry());
        let _ = writeln!(v, "    mem[{i}] = {MSG_ENTRY_BITS}'h{e:x}; // {}", m.full_name);
    }
    let _ = writeln!(v, "    mem[{n_msgs}] = {MSG_ENTRY_BITS}'h{:x}; // (no such message)", msg_entry(0, 0, 0, 1, 0, 0, false, 0, false));
    v.push_str("end\nalways @(posedge clk) q <= mem[addr];\nassign {m_size, m_size8, m_hasoff, m_unkoff, m_nc, m_ns, m_nms, m_req, m_hwords, m_map} = q;\nendmodule\n\n");

    // ---- fields
    // The rows of every (message, field number), looked up a cycle ahead into registers: the
    // lookup interface of rtl/hw_pb_fields.v (the TABLES=1 build's table), so the core drives
    // both builds' field tables with the same selects.
    let mut nums: Vec<u32> = schema.messages.iter().flat_map(|m| m.fields.iter().map(|f| f.number)).collect();
    nums.sort_unstable();
    nums.dedup();
    let _ = write!(v, "// per (message, field number): kind, wire type of one value, flags, offset, presence\n// (0 implicit, 1 presence bit, 2 oneof, 3 pointer) and its index, sub-type, slot, element\n// size (repeated), scalar size, and for oneof members the case word and union storage:\n// the row {{f_hit, f_kind, f_kwt, f_rep, f_closed, f_utf8, f_packable, f_off, f_pres, f_pidx,\n// f_sub, f_slot, f_elem, f_size, f_ocase, f_ostor, f_osize, f_map}} ({FIELD_ROW_BITS} bits, f_hit on top;\n// a miss: all zero).\n// Lookahead with registered rows, the lookup side of rtl/hw_pb_fields.v: PORTS lookups, each\n// given the NEXT cycle's (message, field number), its row out one cycle later from registers.\n// The message is one of MC candidates (l_msgs bits 16c+15:16c) chosen by the one-hot l_msel\n// (none: every port misses); port p's number is l_num bits 32p+31:32p, or with REPEAT bit p\n// the number port q looked up the cycle before, q chosen by the one-hot l_rep bits\n// PORTS*p+PORTS-1:PORTS*p. Each candidate is decoded against the schema's messages and each\n// number against its field numbers before the selects (a repeated number's decode is\n// registered), so after the late selects only one AND per row and the OR of the rows remain\n// before the row registers.\nmodule hw_pb_desc_field #(\n    parameter PORTS = 1,\n    parameter MC = 1,\n    parameter [7:0] REPEAT = 8'd0\n) (\n    input  wire                          clk,\n    input  wire [16*MC-1:0]              l_msgs,\n    input  wire [MC-1:0]                 l_msel,\n    input  wire [32*PORTS-1:0]           l_num,\n    input  wire [PORTS*PORTS-1:0]        l_rep,\n    output wire [PORTS-1:0]              hit,\n    output wire [{FIELD_ROW_BITS}*PORTS-1:0]       row\n);\nlocalparam W = {FIELD_ROW_BITS};\nlocalparam NM = {nm};  // messages\nlocalparam NN = {nn};  // distinct field numbers\n// the schema's field numbers, in order\nfunction [31:0] fnum;\n    input integer k;\nbegin\n    case (k)\n", nm = schema.messages.len().max(1), nn = nums.len().max(1));
    for (j, n) in nums.iter().enumerate() {
        let _ = writeln!(v, "    {j}: fnum = 32'd{n};");
    }
    v.push_str("    default: fnum = 32'd0;\n    endcase\nend\nendfunction\n");
    v.push_str("// the message: each candidate decoded to one bit per message, then selected (each block\n// builds its result in local variables and stores it once: a store wakes the readers)\nreg  [NM-1:0] moh;\nalways @* begin : g_moh\n    reg  [NM-1:0] o;\n    integer c, m;\n    o = {NM{1'b0}};\n    for (c = 0; c < MC; c = c + 1)\n        for (m = 0; m < NM; m = m + 1)\n            o[m] = o[m] | (l_msel[c] && {16'd0, l_msgs[16 * c +: 16]} == m);\n    moh = o;\nend\n");
    v.push_str("// the number, per port: one bit per field number; a repeating port selects a registered one\nreg  [NN*PORTS-1:0] noh, noh_q = {NN*PORTS{1'b0}};\nalways @* begin : g_noh\n    reg  [NN*PORTS-1:0] o;\n    integer p, q, j;\n    for (p = 0; p < PORTS; p = p + 1) begin\n        o[NN * p +: NN] = {NN{1'b0}};\n        if (REPEAT[p]) begin\n            for (q = 0; q < PORTS; q = q + 1)\n                o[NN * p +: NN] = o[NN * p +: NN] | ({NN{l_rep[PORTS * p + q]}} & noh_q[NN * q +: NN]);\n        end else begin\n            for (j = 0; j < NN; j = j + 1)\n                o[NN * p + j] = l_num[32 * p +: 32] == fnum(j);\n        end\n    end\n    noh = o;\nend\n");
    v.push_str("// the rows: (message, number) entries, at most one of them hit\nreg  [W*PORTS-1:0] r, r_q = {W*PORTS{1'b0}};\nalways @* begin : g_rows\n    reg  [W*PORTS-1:0] o;\n    reg  [W-1:0] rp;\n    reg  [NN-1:0] np;\n    integer p;\n    for (p = 0; p < PORTS; p = p + 1) begin\n        np = noh[NN * p +: NN];\n        rp = {W{1'b0}};\n");
    for (mi, m) in schema.messages.iter().enumerate() {
        let s = slots(m);
        for (fi, f) in m.fields.iter().enumerate() {
            let j = nums.binary_search(&f.number).expect("every field number is listed");
            let _ = writeln!(v, "        rp = rp | ({{W{{moh[{mi}] & np[{j}]}}}} & {FIELD_ROW_BITS}'h{:x}); // {}.{}", field_bits(schema, m, &s, fi), m.full_name, f.name);
        }
    }
    v.push_str("        o[W * p +: W] = rp;\n    end\n    r = o;\nend\nalways @(posedge clk) begin\n    noh_q <= noh;\n    r_q <= r;\nend\nassign row = r_q;\ngenvar g;\ngenerate\nfor (g = 0; g < PORTS; g = g + 1) begin : g_hit\n    assign hit[g] = r_q[W * g + W - 1];\nend\nendgenerate\nendmodule\n\n");

    // ---- closed enums
    v.push_str("// closed (proto2) enums: is the value declared?\nmodule hw_pb_desc_enum (\n    input  wire [15:0] e_idx,\n    input  wire [31:0] e_val,\n    output wire        e_known\n);\nassign e_known = rom(e_idx, e_val);\nfunction rom;\n    input [15:0] e_idx;\n    input [31:0] e_val;\n    reg e_known;\nbegin\n    e_known = 1'b1;\n    case (e_idx)\n");
    for (ei, e) in schema.enums.iter().enumerate() {
        if !e.closed {
            continue;
        }
        let mut vals: Vec<u32> = e.values.iter().map(|x| x.number as u32).collect();
        vals.sort_unstable();
        vals.dedup();
        let _ = writeln!(v, "    16'd{ei}: begin // {}\n        case (e_val)", e.full_name);
        for chunk in vals.chunks(16) {
            let list: Vec<String> = chunk.iter().map(|x| format!("32'd{x}")).collect();
            let _ = writeln!(v, "        {}: e_known = 1'b1;", list.join(", "));
        }
        v.push_str("        default: e_known = 1'b0;\n        endcase\n    end\n");
    }
    v.push_str("    default: ;\n    endcase\n    rom = e_known;\nend\nendfunction\nendmodule\n\n");

    // ---- required
    v.push_str("// proto2 required fields: mask of required presence bits in presence word r_word\nmodule hw_pb_desc_req (\n    input  wire [15:0] r_msg,\n    input  wire [7:0]  r_word,\n    output wire [31:0] r_mask\n);\nassign r_mask = rom(r_msg, r_word);\nfunction [31:0] rom;\n    input [15:0] r_msg;\n    input [7:0] r_word;\n    reg [31:0] r_mask;\nbegin\n    r_mask = 32'd0;\n    case ({r_msg, r_word})\n");
    let mut any_req = false;
    for (mi, m) in schema.messages.iter().enumerate() {
        let mut words = vec![0u32; m.hasbit_count.div_ceil(32) as usize];
        for f in &m.fields {
            if f.is_required() {
                if let Presence::HasBit(b) = f.presence {
                    words[(b / 32) as usize] |= 1 << (b % 32);
                    any_req = true;
                }
            }
        }
        for (w, &mask) in words.iter().enumerate() {
            if mask != 0 {
                let _ = writeln!(v, "    24'd{}: r_mask = 32'h{mask:08x}; // {}", ((mi as u32) << 8) | w as u32, m.full_name);
            }
        }
    }
    v.push_str("    default: ;\n    endcase\n    rom = r_mask;\nend\nendfunction\nendmodule\n\n");

    // ---- wrapper
    let schema_params = format!(".PTR_BYTES({}), .HEADER_WORDS({}), .NUM_MSGS({}), .HAS_REQUIRED({})",
        schema.ptr(), schema.layout.header_words as u8, schema.messages.len().max(1), (any_req && ENFORCE_REQUIRED) as u8);
    v.push_str(&core_wrapper("the engine with this schema's parameters (TABLES=1: with run-time-loaded tables instead)", 0, &schema_params));
    v.push_str(&pb_axi(0, schema.ptr(), schema.messages.len(), name));
    super::footer(&mut v);
    v
}

/// `heapwire_core`: `hw_pb_core` with `schema_params` (`.PTR_BYTES(8), ...`), its TABLES
/// parameter defaulting to `tables`.
fn core_wrapper(title: &str, tables: u8, schema_params: &str) -> String {
    let table_params = table_params(tables, false);
    format!("// {title}
module heapwire_core #(
    parameter IN_WIDTH = 64,        // input memory word width (32, 64, 128)
    parameter IN_ADDR_WIDTH = 12,   // input memory word address bits
    parameter OUT_WIDTH = 64,       // output memory word width (64, 128, 256)
    parameter OUT_ADDR_WIDTH = 12,  // output memory word address bits
{params}{table_params}) (
    input  wire clk, input wire rst,
    input  wire start, input wire [31:0] in_len, input wire [15:0] root_msg, input wire [63:0] base,
    output wire busy, output wire done, output wire [7:0] err_code, output wire [31:0] err_offset,
    output wire [31:0] image_size, output wire [63:0] cycles,
    input  wire type_wr_en, input wire [15:0] type_wr_idx, input wire [63:0] type_wr_data,
    input  wire table_load, input wire tbl_wr_en, input wire [23:0] tbl_wr_addr, input wire [63:0] tbl_wr_data,
    output wire tables_ok,
    output wire in_rd_en, output wire [IN_ADDR_WIDTH-1:0] in_addr, input wire [IN_WIDTH-1:0] in_rd_data,
    output wire out_wr_en, output wire [OUT_ADDR_WIDTH-1:0] out_wr_addr, output wire [OUT_WIDTH-1:0] out_wr_data,
    output wire [OUT_WIDTH/8-1:0] out_wr_be, output wire out_rd_en, output wire [OUT_ADDR_WIDTH-1:0] out_rd_addr,
    input  wire [OUT_WIDTH-1:0] out_rd_data,
    output wire out2_wr_en, output wire [OUT_ADDR_WIDTH-1:0] out2_wr_addr, output wire [OUT_WIDTH-1:0] out2_wr_data,
    output wire [OUT_WIDTH/8-1:0] out2_wr_be
);
hw_pb_core #(
    .IN_WIDTH(IN_WIDTH), .IN_ADDR_WIDTH(IN_ADDR_WIDTH), .OUT_WIDTH(OUT_WIDTH), .OUT_ADDR_WIDTH(OUT_ADDR_WIDTH),
    .MAX_DEPTH(MAX_DEPTH), .INST_BITS(INST_BITS), .CNT_BITS(CNT_BITS), .ST_BITS(ST_BITS), .DROP_BITS(DROP_BITS), .ONE_PASS(ONE_PASS), .OUT2_WR(OUT2_WR),
    {schema_params},
    .TABLES(TABLES), .FIELD_ROWS(FIELD_ROWS), .OVF_ROWS(OVF_ROWS), .MSG_ROWS(MSG_ROWS), .ENUM_ROWS(ENUM_ROWS), .ENUM_VALS(ENUM_VALS)
) core (
    .clk(clk), .rst(rst), .start(start), .in_len(in_len), .root_msg(root_msg), .base(base),
    .busy(busy), .done(done), .err_code(err_code), .err_offset(err_offset), .image_size(image_size), .cycles(cycles),
    .type_wr_en(type_wr_en), .type_wr_idx(type_wr_idx), .type_wr_data(type_wr_data),
    .table_load(table_load), .tbl_wr_en(tbl_wr_en), .tbl_wr_addr(tbl_wr_addr), .tbl_wr_data(tbl_wr_data), .tables_ok(tables_ok),
    .in_rd_en(in_rd_en), .in_addr(in_addr), .in_rd_data(in_rd_data),
    .out_wr_en(out_wr_en), .out_wr_addr(out_wr_addr), .out_wr_data(out_wr_data), .out_wr_be(out_wr_be),
    .out_rd_en(out_rd_en), .out_rd_addr(out_rd_addr), .out_rd_data(out_rd_data),
    .out2_wr_en(out2_wr_en), .out2_wr_addr(out2_wr_addr), .out2_wr_data(out2_wr_data), .out2_wr_be(out2_wr_be)
);
endmodule
", params = PB_AXI_PARAMS)
}

/// The sizes of the run-time-loaded tables (`hw_pb_core`'s FIELD_ROWS, OVF_ROWS, MSG_ROWS,
/// ENUM_ROWS); the default is the core's default.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TableLimits {
    /// field rows: every message's direct region and the overflow rows (at most 65536)
    pub field_rows: u32,
    /// overflow keys: field numbers above their message's direct region (at most 256)
    pub ovf_rows: u32,
    /// message rows: the schema's messages plus one (at most 65536)
    pub msg_rows: u32,
    /// enum rows: every closed enum's index must be below it
    pub enum_rows: u32,
    /// closed-enum values: every closed enum's declared values together (at most 256)
    pub enum_vals: u32,
}

impl Default for TableLimits {
    fn default() -> Self {
        TableLimits { field_rows: 1024, ovf_rows: 64, msg_rows: 256, enum_rows: 64, enum_vals: 64 }
    }
}

/// The schema-independent core with run-time-loaded tables: `heapwire_core` with TABLES=1
/// (no ROMs; the schema parameters are the loaded configuration's, docs/hardware.md
/// "Run-time-loaded tables") and `heapwire_axi` around it, whose table-load registers take
/// the words over AXI4-Lite (docs/device.md). One build serves every schema [`table_image`]
/// accepts.
pub fn generate_loadable() -> String {
    let mut v = super::header(
        "heapwire_core_tables.gen.v",
        "protobuf.rs",
        "The protobuf core with descriptor tables loaded at run time (TABLES=1): schema-independent;\n\
         load a schema's table image (table_image, <stem>_core_tables.gen.hex) through tbl_wr_* first.",
    );
    v.push_str(&core_wrapper("the engine with run-time-loaded tables", 1, ".PTR_BYTES(8), .HEADER_WORDS(0), .NUM_MSGS(1), .HAS_REQUIRED(0)"));
    v.push_str(&pb_axi(1, 8, 1, ""));
    super::footer(&mut v);
    v
}

/// The direct span of a message's field region (docs/hardware.md "Run-time-loaded tables"):
/// the largest field number n of the message with n <= 2 * (its fields numbered <= n) + 16;
/// fields above it go to the overflow rows. Dense numbering costs at most a third of the
/// rows in holes; a sparse number (2047, 536870911) costs one overflow key.
pub fn direct_span(numbers: &[u32]) -> u32 {
    let mut sorted: Vec<u32> = numbers.to_vec();
    sorted.sort_unstable();
    let mut span = 0;
    for (j, &n) in sorted.iter().enumerate() {
        if (n as u64) <= 2 * (j as u64 + 1) + 16 {
            span = n;
        }
    }
    span
}

/// The widths of a field row's fields (`hw_pb_desc_field`'s `row`, `hw_pb_fields`' rows),
/// in the row's concatenation order (the hit bit first, on top).
const FIELD_BITS: [u32; 18] = [1, 5, 3, 1, 1, 1, 1, 32, 2, 16, 16, 8, 32, 4, 32, 32, 32, 1];

/// The width of a field row (the sum of [`FIELD_BITS`]; the core's FW).
const FIELD_ROW_BITS: u32 = {
    let mut n = 0;
    let mut i = 0;
    while i < FIELD_BITS.len() {
        n += FIELD_BITS[i];
        i += 1;
    }
    n
};

/// One field's row ({f_hit, f_kind, f_kwt, f_rep, f_closed, f_utf8,
/// f_packable, f_off, f_pres, f_pidx, f_sub, f_slot, f_elem, f_size, f_ocase, f_ostor,
/// f_osize, f_map}, widths [`FIELD_BITS`]): the ROM's row and the loaded tables' row.
fn field_values(schema: &CompiledSchema, m: &heapwire_schema::Message, s: &Slots, fi: usize) -> [u32; 18] {
    let f = &m.fields[fi];
    let (pres, pidx, oo) = match f.presence {
        Presence::Implicit => (0, 0, None),
        Presence::HasBit(b) => (1, b, None),
        Presence::Oneof(o) => (2, o, Some(&m.oneofs[o as usize])),
        Presence::Pointer => (3, 0, None),
    };
    let sub = if f.sub == NONE { 0 } else { f.sub };
    let elem = if f.is_repeated() { schema.element_size(f) } else { 0 };
    let size = f.kind.scalar_size().unwrap_or(0);
    let closed = f.kind == Kind::Enum && f.is_closed_enum();
    let (ocase, ostor, osize) = oo.map_or((0, 0, 0), |o| (o.case_offset, o.storage_offset, o.storage_size));
    let utf8 = f.validates_utf8() && f.kind == Kind::String;
    [
        1, f.kind as u32, f.kind.wire_type() as u32, f.is_repeated() as u32, closed as u32, utf8 as u32, f.kind.is_packable() as u32,
        f.offset, pres, pidx, sub, s.slot[fi], elem, size, ocase, ostor, osize, f.is_map() as u32,
    ]
}

/// One field row (the bits of a field-table row, hit bit on top) as four 64-bit
/// lanes, lane 0 the low bits.
fn field_row(schema: &CompiledSchema, m: &heapwire_schema::Message, s: &Slots, fi: usize) -> [u64; 4] {
    field_bits(schema, m, s, fi).lanes()
}

/// One field row's bits ([`FIELD_ROW_BITS`]).
fn field_bits(schema: &CompiledSchema, m: &heapwire_schema::Message, s: &Slots, fi: usize) -> WideBits {
    let mut e = WideBits::default();
    for (val, bits) in field_values(schema, m, s, fi).into_iter().zip(FIELD_BITS) {
        e.push(val, bits);
    }
    e
}

/// The run-time-loaded tables of `schema` for a core with table sizes `limits`: the words
/// to write through `tbl_wr_*`, as (address, data), in load order (one word a cycle).
/// Refuses, naming what does not fit, a schema whose tables exceed `limits`.
pub fn table_image(schema: &CompiledSchema, limits: &TableLimits) -> Result<Vec<(u32, u64)>, String> {
    check_supported(schema)?;
    let n_msgs = schema.messages.len() as u32;
    if n_msgs + 1 > limits.msg_rows {
        return Err(format!("loadable tables: {n_msgs} message types, the core's message table holds {} (MSG_ROWS - 1)", limits.msg_rows - 1));
    }
    let mut words: Vec<(u32, u64)> = Vec::new();
    let at = |region: u32, idx: u32| (region << 20) | idx;
    // direct spans and overflow fields
    let mut spans = Vec::with_capacity(schema.messages.len());
    let mut ovf: Vec<(usize, usize)> = Vec::new();
    for (mi, m) in schema.messages.iter().enumerate() {
        let span = direct_span(&m.fields.iter().map(|f| f.number).collect::<Vec<_>>());
        ovf.extend(m.fields.iter().enumerate().filter(|(_, f)| f.number > span).map(|(fi, _)| (mi, fi)));
        spans.push(span);
    }
    let direct_rows: u64 = spans.iter().map(|&s| s as u64).sum();
    if ovf.len() as u32 > limits.ovf_rows {
        return Err(format!("loadable tables: {} sparse field numbers need overflow keys, the core has {} (OVF_ROWS)", ovf.len(), limits.ovf_rows));
    }
    if direct_rows + ovf.len() as u64 > limits.field_rows as u64 {
        return Err(format!("loadable tables: {} field rows needed ({direct_rows} direct, {} overflow), the core has {} (FIELD_ROWS)",
            direct_rows + ovf.len() as u64, ovf.len(), limits.field_rows));
    }
    // enums: a closed flag per enum (indices past the last closed one read as open), and
    // every closed enum's declared values as keys
    let n_enums = schema.enums.iter().rposition(|e| e.closed).map_or(0, |i| i as u32 + 1);
    if n_enums > limits.enum_rows {
        let e = &schema.enums[n_enums as usize - 1];
        return Err(format!("loadable tables: closed enum {} is enum {}, the core's enum table holds {} (ENUM_ROWS)", e.full_name, n_enums - 1, limits.enum_rows));
    }
    let mut enum_words: Vec<(u32, u64)> = (0..n_enums).map(|ei| (at(4, ei), schema.enums[ei as usize].closed as u64)).collect();
    let mut n_vals = 0u32;
    for (ei, e) in schema.enums.iter().enumerate().filter(|(_, e)| e.closed) {
        let mut vals: Vec<u32> = e.values.iter().map(|x| x.number as u32).collect();
        vals.sort_unstable();
        vals.dedup();
        for v in vals {
            enum_words.push((at(5, n_vals), ((ei as u64) << 32) | v as u64));
            n_vals += 1;
        }
    }
    if n_vals > limits.enum_vals {
        return Err(format!("loadable tables: closed enums declare {n_vals} values, the core's closed-enum value table holds {} (ENUM_VALS)", limits.enum_vals));
    }
    // configuration
    let cfg = (1u64 << 60) | (n_vals as u64) << 51 | (schema.layout.header_words as u64) << 49 | ((schema.ptr() == 8) as u64) << 48
        | (ovf.len() as u64) << 32 | (n_enums as u64) << 16 | n_msgs as u64;
    words.push((at(0, 0), cfg));
    // messages: the entry in words 0-2, {span, base} in word 3; row n_msgs for an index past the last
    let mut start = 0u32;
    for (mi, m) in schema.messages.iter().enumerate() {
        let s = slots(m);
        let req = m.fields.iter().any(|f| f.is_required());
        let e = msg_entry(m.size, m.hasbits_offset, m.unknown_offset, s.n_counts, s.n_state, s.n_msg_state, req, m.hasbit_count.div_ceil(32), m.is_map_entry()).lanes();
        let row = mi as u32 * 4;
        for (w, &x) in e.iter().take(3).enumerate() {
            words.push((at(1, row + w as u32), x));
        }
        let base = start.wrapping_sub(1) & 0xffff;
        words.push((at(1, row + 3), ((spans[mi] as u64) << 16) | base as u64));
        start += spans[mi];
    }
    let none = msg_entry(0, 0, 0, 1, 0, 0, false, 0, false).lanes();
    for (w, &x) in none.iter().take(3).enumerate() {
        words.push((at(1, n_msgs * 4 + w as u32), x));
    }
    // fields: direct rows (a hole is its top lane, the hit bit, cleared), then overflow rows and keys
    let mut row = 0u32;
    for (mi, m) in schema.messages.iter().enumerate() {
        let s = slots(m);
        for n in 1..=spans[mi] {
            match m.fields.iter().position(|f| f.number == n) {
                Some(fi) => {
                    for (w, &x) in field_row(schema, m, &s, fi).iter().enumerate() {
                        words.push((at(2, row * 4 + w as u32), x));
                    }
                }
                None => words.push((at(2, row * 4 + 3), 0)),
            }
            row += 1;
        }
    }
    for (k, &(mi, fi)) in ovf.iter().enumerate() {
        let m = &schema.messages[mi];
        for (w, &x) in field_row(schema, m, &slots(m), fi).iter().enumerate() {
            words.push((at(2, row * 4 + w as u32), x));
        }
        words.push((at(3, k as u32), ((row as u64) << 48) | ((mi as u64) << 32) | m.fields[fi].number as u64));
        row += 1;
    }
    words.extend(enum_words);
    Ok(words)
}

/// [`table_image`] as the file `heapwire compile --rtl` writes (`<stem>_core_tables.gen.hex`):
/// a do-not-edit header, then one `{address[23:0], data[63:0]}` word a line in hex (22
/// digits; `$readmemh` reads it into an 88-bit memory).
pub fn tables_hex(schema: &CompiledSchema, stem: &str, limits: &TableLimits) -> Result<String, String> {
    let words = table_image(schema, limits)?;
    let mut t = format!(
        "// {stem}_core_tables.gen.hex -- GENERATED by heapwire (crates/emit/src/verilog/protobuf.rs) from the compiled schema; do not edit.\n\
         // The protobuf core's run-time-loaded tables (TABLES=1, FIELD_ROWS={} OVF_ROWS={} MSG_ROWS={} ENUM_ROWS={} ENUM_VALS={}): {} words,\n\
         // each {{address[23:0], data[63:0]}}, written in this order through tbl_wr_* while table_load is high.\n",
        limits.field_rows, limits.ovf_rows, limits.msg_rows, limits.enum_rows, limits.enum_vals, words.len()
    );
    for (a, d) in words {
        let _ = writeln!(t, "{a:06x}{d:016x}");
    }
    Ok(t)
}

/*
 * hw_og_core -- the objgraph deserializer engine (docs/objgraph-wire.md, the MSR paper's
 * sections 4-5 generalized). The schema-specific tables come from the generated modules
 * hw_og_desc_type, hw_og_desc_class and hw_og_desc_member (crates/rtl/src/objgraph.rs),
 * which a generated wrapper heapwire_og_core instantiates this engine with.
 *
 * Semantics are exactly crates/cpu/src/objgraph/decode.rs (the reference): same image,
 * same error kind and byte offset (offsets in the wire bytes; the request's base address
 * comes on the `base` port).
 *
 *   COUNT   read n; count_too_large when 4 + 4n exceeds the input; capacity when n is
 *           more than the object-pointer table holds (2^OBJ_BITS entries).
 *   TYPES   allocation phase, one type id per cycle: type id -> class (unknown_type),
 *           root class check (root_type), align and place the object, image size checks
 *           (image_too_large, then capacity against the output memory); the class index
 *           and image offset go into the object-pointer table (block RAM, registered reads).
 *   CHECK   members' total length against the input: longer input is trailing_bytes;
 *           shorter runs a "dry" member walk that stops at the first member running past
 *           the end (truncated, at that member). 32-bit pointers: base + size <= 2^32.
 *   WALK    member phase, a 2-stage pipeline. Stage 1 issues one op per cycle: the
 *           object's header word (from the per-class header register) or one wire member
 *           through the Stream Reader (1/2/4/8-byte unaligned reads); a reference's index
 *           addresses the table's second read port. Stage 2 checks references in wire
 *           order (bad_reference, reference_type, bad_base for a reference to object 0 at
 *           base 0), widens primitives (sign/zero extension, bools to 0/1), relocates
 *           references to base + offset, and hands the bytes to the image writer.
 *   FLUSH   the image writer's last word, and zero words to the end of the image.
 *
 * Image writer: the image is produced in strictly increasing address order (objects are
 * contiguous in wire order, members in memory order), so the core assembles each output
 * word in an accumulator and writes every word of the image exactly once, whole, zeros
 * included: no separate zeroing pass, no read-modify-write. A gap of untouched words
 * costs one cycle per word (none when OUT_WIDTH/8 >= the object size).
 *
 * Error codes (err_code): 0 ok, 1 truncated, 2 count_too_large, 3 unknown_type,
 * 4 bad_reference, 5 reference_type, 6 root_type, 7 trailing_bytes, 8 image_too_large,
 * 9 bad_base, 10 capacity (the core's memories are too small; the CPU engine has no such
 * limit).
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module hw_og_core #(
    // Input memory word width in bits (the Stream Reader's datapath): 32, 64 or 128.
    parameter IN_WIDTH = 64,
    // Input memory word address bits.
    parameter IN_ADDR_WIDTH = 12,
    // Output memory word width in bits: 64, 128 or 256.
    parameter OUT_WIDTH = 64,
    // Output memory word address bits (the core never writes outside 2^OUT_ADDR_WIDTH words).
    parameter OUT_ADDR_WIDTH = 12,
    // log2 of the object-pointer table entries (the paper: N = 8).
    parameter OBJ_BITS = 8,
    // Number of classes and the width of a class index.
    parameter NCLS = 1,
    parameter CLS_BITS = 1,
    // Pointer width in bytes: 4 (the paper's layout) or 8.
    parameter PTR_BYTES = 8,
    // Reset values of the per-class header registers (class c at bits 64c+63:64c).
    parameter [NCLS*64-1:0] HDR_INIT = {NCLS*64{1'b0}}
) (
    input  wire                      clk,
    input  wire                      rst,            // synchronous, active high

    // control and status
    input  wire                      start,          // pulse: decode in_len wire bytes
    input  wire [31:0]               in_len,
    input  wire [CLS_BITS-1:0]       root_cls,       // class index of the requested type
    input  wire [63:0]               base,           // image address (pointers relocated to it)
    input  wire [63:0]               max_image,      // largest image accepted (bytes)
    output wire                      busy,
    output wire                      done,
    output wire [7:0]                err_code,
    output wire [31:0]               err_offset,
    output wire [31:0]               image_size,
    output wire [63:0]               cycles,

    // per-class header (vtable) registers
    input  wire                      hdr_wr_en,
    input  wire [CLS_BITS-1:0]       hdr_wr_idx,
    input  wire [63:0]               hdr_wr_data,

    // input memory read port (1-cycle latency)
    output wire                      in_rd_en,
    output wire [IN_ADDR_WIDTH-1:0]  in_addr,
    input  wire [IN_WIDTH-1:0]       in_rd_data,

    // output memory write port (whole words)
    output wire                      out_wr_en,
    output wire [OUT_ADDR_WIDTH-1:0] out_wr_addr,
    output wire [OUT_WIDTH-1:0]      out_wr_data
);

// ---------------------------------------------------------------- derived parameters
// bytes per output word and its log2
localparam OUT_BYTES = OUT_WIDTH / 8;
localparam OUT_SHIFT = (OUT_BYTES == 32) ? 5 : (OUT_BYTES == 16) ? 4 : 3;
// object-pointer table entries
localparam OBJ_N = 1 << OBJ_BITS;
// log2 of the pointer width
localparam [1:0] PTR_LOG = (PTR_BYTES == 8) ? 2'd3 : 2'd2;

initial begin
    if (OUT_WIDTH != 64 && OUT_WIDTH != 128 && OUT_WIDTH != 256) begin
        $error("Error: OUT_WIDTH must be 64, 128 or 256 (instance %m)");
        $finish;
    end
    if (PTR_BYTES != 4 && PTR_BYTES != 8) begin
        $error("Error: PTR_BYTES must be 4 or 8 (instance %m)");
        $finish;
    end
    if (OBJ_BITS < 1 || OBJ_BITS > 30) begin
        $error("Error: OBJ_BITS must be in 1..30 (instance %m)");
        $finish;
    end
    if (NCLS < 1 || (1 << CLS_BITS) < NCLS) begin
        $error("Error: NCLS must be >= 1 and fit CLS_BITS (instance %m)");
        $finish;
    end
    if (OUT_ADDR_WIDTH + OUT_SHIFT > 32) begin
        $error("Error: OUT_ADDR_WIDTH + log2(OUT_WIDTH/8) must be <= 32 (instance %m)");
        $finish;
    end
end

// ---------------------------------------------------------------- error codes
localparam [7:0] E_TRUNC = 8'd1, E_COUNT = 8'd2, E_TYPE = 8'd3, E_REF = 8'd4, E_REFTYPE = 8'd5,
                 E_ROOT = 8'd6, E_TRAIL = 8'd7, E_IMAGE = 8'd8, E_BASE = 8'd9, E_CAP = 8'd10;

// ---------------------------------------------------------------- states
localparam [2:0] S_IDLE = 3'd0, S_COUNT = 3'd1, S_TYPES = 3'd2, S_CHECK = 3'd3, S_LOAD = 3'd4,
                 S_WALK = 3'd5, S_FLUSH = 3'd6, S_DONE = 3'd7;

// member conversions (generated tables)
// (2 unsigned and 4 bits: the value as read)
localparam [2:0] C_REF = 3'd0, C_SIGNED = 3'd1, C_BOOL = 3'd3;

// ---------------------------------------------------------------- registers
reg [2:0]            state_reg = S_IDLE, state_next;
reg [31:0]           len_reg = 32'd0, len_next;
reg [63:0]           base_reg = 64'd0, base_next;
reg [63:0]           maxim_reg = 64'd0, maxim_next;
reg [CLS_BITS-1:0]   root_reg = {CLS_BITS{1'b0}}, root_next;
reg [31:0]           n_reg = 32'd0, n_next;           // object count
reg [31:0]           i_reg = 32'd0, i_next;           // object index (TYPES, WALK)
reg [63:0]           top_reg = 64'd0, top_next;       // image bytes allocated
reg [63:0]           wtot_reg = 64'd0, wtot_next;     // wire bytes the objects need
reg                  dry_reg = 1'b0, dry_next;        // truncation walk: no checks, no writes
reg                  hdr_reg = 1'b0, hdr_next;        // stage 1: the current object's header is next
reg [15:0]           k_reg = 16'd0, k_next;           // stage 1: wire member index
reg [CLS_BITS-1:0]   c_reg = {CLS_BITS{1'b0}}, c_next; // current object's class
reg [31:0]           o_reg = 32'd0, o_next;           // current object's image offset
reg [7:0]            err_reg = 8'd0, err_next;
reg [31:0]           erroff_reg = 32'd0, erroff_next;
reg [63:0]           cyc_reg = 64'd0, cyc_next;
reg                  done_reg = 1'b0, done_next;

// stage 2
reg                  s2_valid_reg = 1'b0, s2_valid_next;
reg                  s2_ref_reg = 1'b0, s2_ref_next;      // a reference (else header or primitive)
reg                  s2_null_reg = 1'b0, s2_null_next;
reg                  s2_oob_reg = 1'b0, s2_oob_next;      // index >= n
reg                  s2_zero_reg = 1'b0, s2_zero_next;    // index == 0
reg [CLS_BITS-1:0]   s2_tgt_reg = {CLS_BITS{1'b0}}, s2_tgt_next;
reg [31:0]           s2_addr_reg = 32'd0, s2_addr_next;   // image offset of the bytes
reg [1:0]            s2_szl_reg = 2'd0, s2_szl_next;      // log2 bytes in memory
reg [63:0]           s2_data_reg = 64'd0, s2_data_next;
reg [31:0]           s2_woff_reg = 32'd0, s2_woff_next;   // wire offset (error offset)
reg                  s2_hdr_reg = 1'b0, s2_hdr_next;      // also the object's header word (same output word)
reg [63:0]           s2_hval_reg = 64'd0, s2_hval_next;
reg [OUT_SHIFT-1:0]  s2_hlane_reg = {OUT_SHIFT{1'b0}}, s2_hlane_next;

// image writer
reg [OUT_WIDTH-1:0]  acc_reg = {OUT_WIDTH{1'b0}}, acc_next;
reg [31:0]           accw_reg = 32'd0, accw_next;         // word index of acc
reg                  wr_en_reg = 1'b0, wr_en_next;
reg [31:0]           wr_addr_reg = 32'd0, wr_addr_next;
reg [OUT_WIDTH-1:0]  wr_data_reg = {OUT_WIDTH{1'b0}}, wr_data_next;

// per-class header registers
reg [63:0]           hdr_regs [0:NCLS-1];
integer hi;
initial for (hi = 0; hi < NCLS; hi = hi + 1) hdr_regs[hi] = HDR_INIT[64*hi +: 64];
always @(posedge clk) begin
    if (rst) begin
        for (hi = 0; hi < NCLS; hi = hi + 1) hdr_regs[hi] <= HDR_INIT[64*hi +: 64];
    end else if (hdr_wr_en && {{32-CLS_BITS{1'b0}}, hdr_wr_idx} < NCLS) begin
        hdr_regs[hdr_wr_idx] <= hdr_wr_data;
    end
end

// ---------------------------------------------------------------- object-pointer table
// Block RAM style: one write port (allocation phase), two registered read ports (the
// walk's next object, and reference targets).
reg [CLS_BITS-1:0]   tcls_mem [0:OBJ_N-1];
reg [31:0]           toff_mem [0:OBJ_N-1];
reg                  t_we;
reg [OBJ_BITS-1:0]   t_wa;
reg [CLS_BITS-1:0]   t_wcls;
reg [31:0]           t_woff;
reg [OBJ_BITS-1:0]   ta_ra;                 // port A: next object
reg [CLS_BITS-1:0]   ta_cls_q = {CLS_BITS{1'b0}};
reg [31:0]           ta_off_q = 32'd0;
reg                  tb_re;
reg [OBJ_BITS-1:0]   tb_ra;                 // port B: reference target
reg [CLS_BITS-1:0]   tb_cls_q = {CLS_BITS{1'b0}};
reg [31:0]           tb_off_q = 32'd0;
always @(posedge clk) begin
    if (t_we) begin
        tcls_mem[t_wa] <= t_wcls;
        toff_mem[t_wa] <= t_woff;
    end
    ta_cls_q <= tcls_mem[ta_ra];
    ta_off_q <= toff_mem[ta_ra];
    if (tb_re) begin
        tb_cls_q <= tcls_mem[tb_ra];
        tb_off_q <= toff_mem[tb_ra];
    end
end

// ---------------------------------------------------------------- stream reader
wire         rd_valid;
wire [1:0]   rd_size;
wire         rd_ready;
wire [63:0]  rd_data;
wire [31:0]  rd_offset;
wire         rd_past_end;
hw_stream_reader #(.DATA_WIDTH(IN_WIDTH), .ADDR_WIDTH(IN_ADDR_WIDTH), .WIN_BYTES(16)) reader (
    .clk(clk), .rst(rst), .start(start), .in_len(in_len),
    .mem_rd_en(in_rd_en), .mem_addr(in_addr), .mem_rd_data(in_rd_data),
    .rd_valid(rd_valid), .rd_ready(rd_ready), .rd_skip(1'b0), .rd_size(rd_size), .rd_skip_len(32'd0),
    .rd_data(rd_data), .rd_offset(rd_offset), .rd_past_end(rd_past_end),
    /* verilator lint_off PINCONNECTEMPTY */
    .win_data(), .win_avail(), .win_eof(), .offset(), .rem_bytes(), .at_end(), .past_end()
    /* verilator lint_on PINCONNECTEMPTY */
);

// ---------------------------------------------------------------- generated tables
// type id -> class (allocation phase)
wire                 ty_hit;
wire [CLS_BITS-1:0]  ty_cls;
hw_og_desc_type desc_type (.t_id(rd_data[31:0]), .t_hit(ty_hit), .t_cls(ty_cls));

// class rows: the class just read (allocation), the current object (walk), a reference
// target (stage 2)
wire [31:0]          ca_size, ca_align, ca_wsize, cw_size, cw_align, cw_wsize, cr_size, cr_align, cr_wsize;
wire [15:0]          ca_nwire, cw_nwire, cr_nwire;
wire [NCLS-1:0]      ca_anc, cw_anc, cr_anc;
hw_og_desc_class desc_ca (.c_idx(ty_cls), .c_size(ca_size), .c_align(ca_align), .c_wsize(ca_wsize), .c_nwire(ca_nwire), .c_anc(ca_anc));
hw_og_desc_class desc_cw (.c_idx(c_reg), .c_size(cw_size), .c_align(cw_align), .c_wsize(cw_wsize), .c_nwire(cw_nwire), .c_anc(cw_anc));
hw_og_desc_class desc_cr (.c_idx(tb_cls_q), .c_size(cr_size), .c_align(cr_align), .c_wsize(cr_wsize), .c_nwire(cr_nwire), .c_anc(cr_anc));

// the current object's wire member k
wire [1:0]           m_wl, m_sl;
wire [31:0]          m_off;
wire [2:0]           m_conv;
wire [CLS_BITS-1:0]  m_tgt;
hw_og_desc_member desc_m (.m_cls(c_reg), .m_k(k_reg), .m_wl(m_wl), .m_sl(m_sl), .m_off(m_off), .m_conv(m_conv), .m_tgt(m_tgt));

// ---------------------------------------------------------------- combinational helpers
// widened primitive: sign/zero extension from the wire width, bools to 0/1
reg [63:0] widened;
always @* begin
    case (m_conv)
        C_SIGNED: case (m_wl)
            2'd0: widened = {{56{rd_data[7]}}, rd_data[7:0]};
            2'd1: widened = {{48{rd_data[15]}}, rd_data[15:0]};
            2'd2: widened = {{32{rd_data[31]}}, rd_data[31:0]};
            default: widened = rd_data;
        endcase
        C_BOOL: widened = {63'd0, rd_data != 64'd0};
        default: widened = rd_data;
    endcase
end

// allocation: align the next object
wire [63:0] al_mask = {32'd0, ca_align} - 64'd1;
wire [63:0] al_addr = (top_reg + al_mask) & ~al_mask;
wire [63:0] al_top  = al_addr + {32'd0, ca_size};
// output memory capacity in bytes
wire [63:0] out_cap = 64'd1 << (OUT_ADDR_WIDTH + OUT_SHIFT);
// image words
wire [63:0] tot_words64 = (top_reg + {{(63-OUT_SHIFT){1'b0}}, 1'b1, {OUT_SHIFT{1'b0}}} - 64'd1) >> OUT_SHIFT;
wire [31:0] tot_words = tot_words64[31:0];

// stage 2: the bytes to write, placed in an output word
wire [OUT_SHIFT-1:0] s2_lane = s2_addr_reg[OUT_SHIFT-1:0];
wire [31:0]          s2_word = s2_addr_reg >> OUT_SHIFT;
wire [63:0]          s2_val = s2_ref_reg ? (s2_null_reg ? 64'd0 : base_reg + {32'd0, tb_off_q}) : s2_data_reg;
reg  [63:0]          s2_bmask;
always @* begin
    case (s2_szl_reg)
        2'd0: s2_bmask = 64'h00000000000000ff;
        2'd1: s2_bmask = 64'h000000000000ffff;
        2'd2: s2_bmask = 64'h00000000ffffffff;
        default: s2_bmask = 64'hffffffffffffffff;
    endcase
end
localparam [63:0] PTR_MASK = (PTR_BYTES == 8) ? 64'hffffffffffffffff : 64'h00000000ffffffff;
wire [OUT_WIDTH-1:0] s2_hmask = s2_hdr_reg ? ({{OUT_WIDTH-64{1'b0}}, PTR_MASK} << {s2_hlane_reg, 3'b000}) : {OUT_WIDTH{1'b0}};
wire [OUT_WIDTH-1:0] s2_hdata = s2_hdr_reg ? ({{OUT_WIDTH-64{1'b0}}, s2_hval_reg & PTR_MASK} << {s2_hlane_reg, 3'b000}) : {OUT_WIDTH{1'b0}};
wire [OUT_WIDTH-1:0] s2_wmask = ({{OUT_WIDTH-64{1'b0}}, s2_bmask} << {s2_lane, 3'b000}) | s2_hmask;
wire [OUT_WIDTH-1:0] s2_wdata = ({{OUT_WIDTH-64{1'b0}}, s2_val & s2_bmask} << {s2_lane, 3'b000}) | s2_hdata;
// the current object's header and its first wire member land in the same output word:
// one stage-1 cycle does both
wire [31:0] m_addr = o_reg + m_off;
wire        hdr_merge = hdr_reg && cw_nwire != 16'd0 && (o_reg >> OUT_SHIFT) == (m_addr >> OUT_SHIFT);
// stage 2 errors, in the CPU engine's order
wire s2_err_ref  = s2_ref_reg && !s2_null_reg && s2_oob_reg;
wire s2_err_type = s2_ref_reg && !s2_null_reg && !s2_oob_reg && !(cr_anc[s2_tgt_reg] && s2_tgt_reg < NCLS);
wire s2_err_base = s2_ref_reg && !s2_null_reg && !s2_oob_reg && s2_zero_reg && base_reg == 64'd0;
// stage 2 empties this cycle (no error, its bytes go in the accumulator or the next word)
wire s2_frees = !s2_valid_reg ||
    (!s2_err_ref && !s2_err_type && !s2_err_base && (s2_word == accw_reg || s2_word == accw_reg + 32'd1));
// Stream Reader requests (kept out of the next-state block: rd_data depends on rd_size)
assign rd_valid = (state_reg == S_COUNT) || (state_reg == S_TYPES) || (state_reg == S_WALK && (!hdr_reg || hdr_merge) && s2_frees);
assign rd_size = (state_reg == S_WALK) ? m_wl : 2'd2;

// ---------------------------------------------------------------- next state
reg s2_free;     // stage 2 is empty after this cycle: stage 1 may issue
reg last_obj;
always @* begin
    state_next = state_reg;
    len_next = len_reg; base_next = base_reg; maxim_next = maxim_reg; root_next = root_reg;
    n_next = n_reg; i_next = i_reg; top_next = top_reg; wtot_next = wtot_reg; dry_next = dry_reg;
    hdr_next = hdr_reg; k_next = k_reg; c_next = c_reg; o_next = o_reg;
    err_next = err_reg; erroff_next = erroff_reg; done_next = done_reg;
    cyc_next = (state_reg != S_IDLE && state_reg != S_DONE) ? cyc_reg + 64'd1 : cyc_reg;
    s2_valid_next = s2_valid_reg; s2_ref_next = s2_ref_reg; s2_null_next = s2_null_reg; s2_oob_next = s2_oob_reg;
    s2_zero_next = s2_zero_reg; s2_tgt_next = s2_tgt_reg; s2_addr_next = s2_addr_reg; s2_szl_next = s2_szl_reg;
    s2_data_next = s2_data_reg; s2_woff_next = s2_woff_reg;
    s2_hdr_next = s2_hdr_reg; s2_hval_next = s2_hval_reg; s2_hlane_next = s2_hlane_reg;
    acc_next = acc_reg; accw_next = accw_reg;
    wr_en_next = 1'b0; wr_addr_next = wr_addr_reg; wr_data_next = wr_data_reg;
    t_we = 1'b0; t_wa = i_reg[OBJ_BITS-1:0]; t_wcls = ty_cls; t_woff = al_addr[31:0];
    tb_re = 1'b0; tb_ra = rd_data[OBJ_BITS-1:0];
    s2_free = 1'b0;
    last_obj = (i_reg + 32'd1 == n_reg);

    case (state_reg)
    S_IDLE, S_DONE: ;
    S_COUNT: begin
        if (rd_ready) begin
            n_next = rd_data[31:0];
            i_next = 32'd0;
            wtot_next = {30'd0, rd_data[31:0], 2'b00} + 64'd4;
            if (rd_data[31:0] > ((len_reg - 32'd4) >> 2)) begin
                err_next = E_COUNT; erroff_next = 32'd0; state_next = S_DONE;
            end else if (rd_data[31:0] > OBJ_N) begin
                err_next = E_CAP; erroff_next = 32'd0; state_next = S_DONE;
            end else if (rd_data[31:0] == 32'd0) begin
                state_next = S_CHECK;
            end else begin
                state_next = S_TYPES;
            end
        end
    end
    S_TYPES: begin
        if (rd_ready) begin
            if (!ty_hit) begin
                err_next = E_TYPE; erroff_next = rd_offset; state_next = S_DONE;
            end else if (i_reg == 32'd0 && !(ca_anc[root_reg] && root_reg < NCLS)) begin
                err_next = E_ROOT; erroff_next = rd_offset; state_next = S_DONE;
            end else if (al_top > maxim_reg) begin
                err_next = E_IMAGE; erroff_next = rd_offset; state_next = S_DONE;
            end else if (al_top > out_cap) begin
                err_next = E_CAP; erroff_next = rd_offset; state_next = S_DONE;
            end else begin
                t_we = 1'b1;
                top_next = al_top;
                wtot_next = wtot_reg + {32'd0, ca_wsize};
                i_next = i_reg + 32'd1;
                if (last_obj) state_next = S_CHECK;
            end
        end
    end
    S_CHECK: begin
        i_next = 32'd0;
        hdr_next = 1'b1;
        k_next = 16'd0;
        if (wtot_reg > {32'd0, len_reg}) begin
            dry_next = 1'b1;
            state_next = S_LOAD;
        end else if (wtot_reg < {32'd0, len_reg}) begin
            err_next = E_TRAIL; erroff_next = wtot_reg[31:0]; state_next = S_DONE;
        end else if (PTR_BYTES == 4 && (base_reg[63:32] != 32'd0 || {32'd0, base_reg[31:0]} + top_reg > 64'h100000000)) begin
            err_next = E_BASE; erroff_next = 32'd0; state_next = S_DONE;
        end else if (n_reg == 32'd0) begin
            state_next = S_FLUSH;
        end else begin
            dry_next = 1'b0;
            state_next = S_LOAD;
        end
    end
    S_LOAD: begin
        // port A shows object 0 now
        c_next = ta_cls_q;
        o_next = ta_off_q;
        state_next = S_WALK;
    end
    S_WALK: begin
        // ---- stage 2 (older): checks, then the image writer
        if (s2_valid_reg) begin
            if (s2_err_ref) begin
                err_next = E_REF; erroff_next = s2_woff_reg; state_next = S_DONE;
            end else if (s2_err_type) begin
                err_next = E_REFTYPE; erroff_next = s2_woff_reg; state_next = S_DONE;
            end else if (s2_err_base) begin
                err_next = E_BASE; erroff_next = s2_woff_reg; state_next = S_DONE;
            end else if (s2_word == accw_reg) begin
                acc_next = (acc_reg & ~s2_wmask) | s2_wdata;
                s2_free = 1'b1;
            end else begin
                // the bytes are in a later word: write the accumulator out, move on
                wr_en_next = 1'b1;
                wr_addr_next = accw_reg;
                wr_data_next = acc_reg;
                accw_next = accw_reg + 32'd1;
                if (s2_word == accw_reg + 32'd1) begin
                    acc_next = s2_wdata;
                    s2_free = 1'b1;
                end else begin
                    acc_next = {OUT_WIDTH{1'b0}};
                end
            end
        end else begin
            s2_free = 1'b1;
        end
        if (s2_free) s2_valid_next = 1'b0;
        // ---- stage 1: issue the header or the next member
        if (state_next == S_WALK && s2_free) begin
            if (hdr_reg && !hdr_merge) begin
                s2_valid_next = !dry_reg;
                s2_hdr_next = 1'b0;
                s2_ref_next = 1'b0;
                s2_addr_next = o_reg;
                s2_szl_next = PTR_LOG;
                s2_data_next = hdr_regs[c_reg];
                hdr_next = 1'b0;
                k_next = 16'd0;
                if (cw_nwire == 16'd0) begin
                    // no wire members: next object
                    hdr_next = 1'b1;
                    i_next = i_reg + 32'd1;
                    c_next = ta_cls_q;
                    o_next = ta_off_q;
                    if (last_obj) state_next = dry_reg ? S_DONE : S_FLUSH;
                    if (last_obj && dry_reg) begin
                        err_next = E_TRUNC; erroff_next = len_reg;
                    end
                end
            end else begin
                if (rd_ready) begin
                    if (dry_reg && rd_past_end) begin
                        err_next = E_TRUNC; erroff_next = rd_offset; state_next = S_DONE;
                    end else begin
                        tb_re = (m_conv == C_REF);
                        s2_valid_next = !dry_reg;
                        s2_ref_next = (m_conv == C_REF);
                        s2_null_next = (rd_data[31:0] == 32'hffffffff);
                        s2_oob_next = (rd_data[31:0] >= n_reg);
                        s2_zero_next = (rd_data[31:0] == 32'd0);
                        s2_tgt_next = m_tgt;
                        s2_addr_next = m_addr;
                        s2_szl_next = m_sl;
                        s2_data_next = widened;
                        s2_woff_next = rd_offset;
                        s2_hdr_next = hdr_reg;
                        s2_hval_next = hdr_regs[c_reg];
                        s2_hlane_next = o_reg[OUT_SHIFT-1:0];
                        hdr_next = 1'b0;
                        k_next = k_reg + 16'd1;
                        if (k_reg + 16'd1 == cw_nwire) begin
                            hdr_next = 1'b1;
                            k_next = 16'd0;
                            i_next = i_reg + 32'd1;
                            c_next = ta_cls_q;
                            o_next = ta_off_q;
                            if (last_obj) state_next = dry_reg ? S_DONE : S_FLUSH;
                            if (last_obj && dry_reg) begin
                                err_next = E_TRUNC; erroff_next = len_reg;
                            end
                        end
                    end
                end
            end
        end
    end
    S_FLUSH: begin
        // drain stage 2 first (it may still hold the last member)
        if (s2_valid_reg) begin
            if (s2_err_ref) begin
                err_next = E_REF; erroff_next = s2_woff_reg; state_next = S_DONE;
            end else if (s2_err_type) begin
                err_next = E_REFTYPE; erroff_next = s2_woff_reg; state_next = S_DONE;
            end else if (s2_err_base) begin
                err_next = E_BASE; erroff_next = s2_woff_reg; state_next = S_DONE;
            end else if (s2_word == accw_reg) begin
                acc_next = (acc_reg & ~s2_wmask) | s2_wdata;
                s2_valid_next = 1'b0;
            end else begin
                wr_en_next = 1'b1;
                wr_addr_next = accw_reg;
                wr_data_next = acc_reg;
                accw_next = accw_reg + 32'd1;
                if (s2_word == accw_reg + 32'd1) begin
                    acc_next = s2_wdata;
                    s2_valid_next = 1'b0;
                end else begin
                    acc_next = {OUT_WIDTH{1'b0}};
                end
            end
        end else if (accw_reg < tot_words) begin
            wr_en_next = 1'b1;
            wr_addr_next = accw_reg;
            wr_data_next = acc_reg;
            accw_next = accw_reg + 32'd1;
            acc_next = {OUT_WIDTH{1'b0}};
        end else begin
            state_next = S_DONE;
        end
    end
    default: state_next = S_IDLE;
    endcase

    if (state_next == S_DONE && state_reg != S_DONE) done_next = 1'b1;

    if (start) begin
        state_next = S_COUNT;
        len_next = in_len; base_next = base; maxim_next = max_image; root_next = root_cls;
        n_next = 32'd0; i_next = 32'd0; top_next = 64'd0; wtot_next = 64'd0; dry_next = 1'b0;
        hdr_next = 1'b1; k_next = 16'd0;
        err_next = 8'd0; erroff_next = 32'd0; cyc_next = 64'd0; done_next = 1'b0;
        s2_valid_next = 1'b0; acc_next = {OUT_WIDTH{1'b0}}; accw_next = 32'd0;
        if (base[2:0] != 3'd0) begin
            err_next = E_BASE; state_next = S_DONE; done_next = 1'b1;
        end else if (in_len < 32'd4) begin
            err_next = E_TRUNC; state_next = S_DONE; done_next = 1'b1;
        end
    end
    // port A address: object 0 while loading, else the object after the next current one
    ta_ra = (state_next == S_LOAD) ? {OBJ_BITS{1'b0}} : i_next[OBJ_BITS-1:0] + {{OBJ_BITS-1{1'b0}}, 1'b1};
end

always @(posedge clk) begin
    if (rst) begin
        state_reg <= S_IDLE;
        done_reg <= 1'b0;
        err_reg <= 8'd0;
        erroff_reg <= 32'd0;
        cyc_reg <= 64'd0;
        s2_valid_reg <= 1'b0;
        wr_en_reg <= 1'b0;
        top_reg <= 64'd0;
    end else begin
        state_reg <= state_next;
        done_reg <= done_next;
        err_reg <= err_next;
        erroff_reg <= erroff_next;
        cyc_reg <= cyc_next;
        s2_valid_reg <= s2_valid_next;
        wr_en_reg <= wr_en_next;
        top_reg <= top_next;
    end
    len_reg <= len_next; base_reg <= base_next; maxim_reg <= maxim_next; root_reg <= root_next;
    n_reg <= n_next; i_reg <= i_next; wtot_reg <= wtot_next; dry_reg <= dry_next;
    hdr_reg <= hdr_next; k_reg <= k_next; c_reg <= c_next; o_reg <= o_next;
    s2_ref_reg <= s2_ref_next; s2_null_reg <= s2_null_next; s2_oob_reg <= s2_oob_next; s2_zero_reg <= s2_zero_next;
    s2_tgt_reg <= s2_tgt_next; s2_addr_reg <= s2_addr_next; s2_szl_reg <= s2_szl_next; s2_data_reg <= s2_data_next;
    s2_woff_reg <= s2_woff_next;
    s2_hdr_reg <= s2_hdr_next; s2_hval_reg <= s2_hval_next; s2_hlane_reg <= s2_hlane_next;
    acc_reg <= acc_next; accw_reg <= accw_next;
    wr_addr_reg <= wr_addr_next; wr_data_reg <= wr_data_next;
end

// ---------------------------------------------------------------- outputs
assign busy = state_reg != S_IDLE && state_reg != S_DONE;
assign done = done_reg;
assign err_code = err_reg;
assign err_offset = erroff_reg;
assign image_size = top_reg[31:0];
assign cycles = cyc_reg;
assign out_wr_en = wr_en_reg;
assign out_wr_addr = wr_addr_reg[OUT_ADDR_WIDTH-1:0];
assign out_wr_data = wr_data_reg;

// unused table outputs (every instance has all ports)
wire unused_ok = &{1'b0, cw_size, cw_align, cw_wsize, cw_anc, cr_size, cr_align, cr_wsize, cr_nwire, ca_nwire,
                   tot_words64[63:32], s2_word[31:OUT_ADDR_WIDTH], wr_addr_reg[31:OUT_ADDR_WIDTH]};

endmodule

`resetall
`default_nettype wire

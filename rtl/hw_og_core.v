/*
 * hw_og_core -- the objgraph deserializer engine (docs/objgraph-wire.md, the MSR paper's
 * sections 4-5 generalized and pipelined). The schema-specific tables come from the
 * generated modules hw_og_desc_type, hw_og_desc_class, hw_og_desc_member and
 * hw_og_desc_step (crates/emit/src/verilog/objgraph.rs), which a generated wrapper
 * heapwire_og_core instantiates this engine with.
 *
 * Semantics are exactly crates/cpu/src/objgraph/decode.rs (the reference): same image,
 * same error kind and byte offset (offsets in the wire bytes; the request's base address
 * comes on the `base` port). Every error is detected in one place per phase, in the CPU
 * engine's order, so the first error of the CPU engine is the one reported.
 *
 * The two phases run at the same time: the allocation phase reads the count and the type
 * ids through one read port of the input memory, the member phase reads the members
 * (from byte 4 + 4n on) through the other, each with its own reader (hw_og_reader: a
 * word FIFO and a window of WIN = 2*IN_WIDTH/8 bytes taken 0..WIN bytes a cycle). The
 * member phase follows the allocation phase through the object-pointer table: it issues
 * a step only when the table entries its walk prefetches are written (tab_ok_reg), and a
 * step whose reference names an object not yet allocated waits in M1c (rwait_reg) until
 * its entry is written. Its errors wait for the allocation phase's checks (JOIN), so the
 * verdict is the CPU engine's; an allocation-phase error stops both. (Every object the
 * walk writes has passed its capacity check, so even a rejected input never makes the
 * core write outside the output memory.)
 *
 * Flow control: the allocation pipeline never stalls (a group enters only when its bytes
 * are in the window; later stages always move). The member pipeline moves every cycle
 * (mv) except the cycle the image writer needs for a second word (see below) and while a
 * reference waits for its entry; then every member-stage register and the table copies'
 * read registers hold. Stale pipeline contents of an aborted decode are dropped on start.
 *
 *   COUNT    read n (COUNT), flags registered (COUNT2), decision (COUNT3):
 *            count_too_large when 4 + 4n exceeds the input; capacity when n is more than
 *            the object-pointer table holds (2^OBJ_BITS entries).
 *   TYPES    allocation phase: TPC = IN_WIDTH/32 type ids per cycle, a 7-stage pipeline
 *              T0 take TPC ids from the window     T1 type id -> class (ROM)
 *              T2 class -> size, alignment, wire bytes, root check
 *              T3 prefix sums of sizes and wire bytes in the group, and for both values
 *                 of top[2] the number of 4-byte alignment pads before each object
 *                 (sizes are multiples of 4, alignments 4 or 8: the generator checks)
 *              T3b the group's offsets for both values of top[2]
 *              T4 the only loop: top += delta[top[2]], wire length += group wire bytes
 *              T5 the comparisons (image_too_large, capacity, members past the end)
 *              T6 the first failing object of the group in object order (unknown_type,
 *                 root_type, image_too_large, capacity), the first truncated object, the
 *                 table write (one entry = the TPC objects of a group: one write port);
 *                 a failing group goes to TERR, which takes its first error from
 *                 registers a cycle later
 *   CHECK    (flags registered in CHECK0) members' total length against the input:
 *            longer input is trailing_bytes; shorter searches the first truncated
 *            object's members (TRUNC0..3, one member per 4 cycles: an error path) for the
 *            first member running past the end. 32-bit pointers: base + size <= 2^32;
 *            64-bit: base + size does not wrap (bad_base).
 *   JOIN     wait for the member phase; its first error, if any, is the verdict.
 * Member phase (wst_reg):
 *   SKIP     to the first member (byte 4 + 4n) in the member reader's window.
 *   LOAD     prefetch the first two table entries for the walk (once written).
 *   WALK     one STEP per cycle. A step is a precomputed slice of one
 *            object (hw_og_desc_step, per class and step index): up to WIN wire bytes,
 *            up to NREF = IN_WIDTH/32 references, up to FRAG = OUT_WIDTH/8 image bytes
 *            [lo, lo+len), header, padding and zeros included. An 11-stage pipeline:
 *              M0 the only loop: (class, step, object) -> next, reader take; the step
 *                 ROM for the next step is looked up for both "same object" and "next
 *                 object" in parallel, so the loop is ROM -> mux -> register; the next
 *                 objects' table entries are prefetched (walk copy of the table)
 *                 (a step issued while the pipeline is frozen waits in a skid slot)
 *              M1 reference indexes from the window
 *              M1a indexes registered; their wait compares (a cycle ahead, above)
 *              M1b table read (block RAM, one copy per reference slot, read data
 *                 registered twice: M1c, M2, the second the RAM's own output register
 *                 where it has one: hw_sdp_ram); the wait flag
 *              M1c -> bad_reference / null / zero flags; header register
 *              M2 table data -> referenced object's class and offset
 *              M3 reference_type / bad_base checks; relocation (base + offset); the
 *                 step's byte sources (ROM)
 *              M4 errors in wire order (first slot first); the fragment: each image byte
 *                 picked from zero / header / reference / window / sign / bool bytes
 *              M5, M5b the fragment rotated to its lane (high bits, then low bits)
 *              M6 image writer: merge into the accumulator word, write completed words
 *   FLUSH    the last partial word; END.
 *
 * Image writer: the image is produced in strictly increasing address order (objects are
 * contiguous in wire order; a step writes every byte of its slice), so the core writes
 * every word of the image exactly once, whole, zeros included: no zeroing pass, no
 * read-modify-write. Alignment gaps between objects (0 or 4 bytes) read as zeros. The
 * one case of two completed words in one cycle (a gap before a fragment that fills a
 * whole word) parks the second word and freezes the member pipeline for one cycle.
 *
 * Error codes (err_code): 0 ok, 1 truncated, 2 count_too_large, 3 unknown_type,
 * 4 bad_reference, 5 reference_type, 6 root_type, 7 trailing_bytes, 8 image_too_large,
 * 9 bad_base, 10 capacity (the core's memories are too small; the CPU engine has no such
 * limit). The E_ localparams bear the names of heapwire_engine::RejectKind's kinds
 * (crates/sim/src/objgraph.rs ERRORS maps the codes; its test checks the names).
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module hw_og_core #(
    // Input memory word width in bits: 32, 64 or 128 (IN_WIDTH/32 type ids per cycle).
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
    // Bits of the largest wire type id: the generated type ROM compares these (the bits
    // above must be zero).
    parameter TID_BITS = 32,
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

    // input memory read ports (1-cycle latency): the allocation phase reads the count and
    // the type ids through the first, the member phase the members through the second
    // (the two ports of one true dual-port block RAM, say)
    output wire                      in_rd_en,
    output wire [IN_ADDR_WIDTH-1:0]  in_addr,
    input  wire [IN_WIDTH-1:0]       in_rd_data,
    output wire                      in2_rd_en,
    output wire [IN_ADDR_WIDTH-1:0]  in2_addr,
    input  wire [IN_WIDTH-1:0]       in2_rd_data,

    // output memory write port (whole words)
    output wire                      out_wr_en,
    output wire [OUT_ADDR_WIDTH-1:0] out_wr_addr,
    output wire [OUT_WIDTH-1:0]      out_wr_data
);

// ---------------------------------------------------------------- derived parameters
// input bytes per word and its log2
localparam IB = IN_WIDTH / 8;
localparam IB_SH = (IB == 16) ? 4 : (IB == 8) ? 3 : 2;
// type ids per allocation cycle = objects per table entry, and its log2
localparam TPC = IB / 4;
localparam TPC_SH = IB_SH - 2;
localparam TPC_W = (TPC_SH > 0) ? TPC_SH : 1;
// wire bytes a member step may take, reference slots per step
localparam WIN = 2 * IB;
localparam NREF = WIN / 8;
// output bytes per word and its log2; image bytes a member step may write
localparam OB = OUT_WIDTH / 8;
localparam OUT_SHIFT = (OB == 32) ? 5 : (OB == 16) ? 4 : 3;
localparam FRAG = OB;
// fragment byte sources (see hw_og_desc_step) and the width of a source code
localparam SRC_N = 9 + 8 * NREF + 3 * WIN;
localparam SEL_BITS = $clog2(SRC_N);
// object-pointer table: entries of TPC objects (class index + 32-bit image offset)
localparam OBJ_N = 1 << OBJ_BITS;
localparam ENT_BITS = OBJ_BITS - TPC_SH;
localparam OBJ_W = CLS_BITS + 32;
localparam ENT_W = TPC * OBJ_W;
// sized constants
localparam [31:0] IB32 = IB;
localparam [31:0] TPC32 = TPC;
localparam [4:0] IB5 = IB32[4:0];
localparam [2:0] TPC3 = TPC32[2:0];
localparam [TPC_W-1:0] TPC_LAST = TPC32[TPC_W-1:0] - 1'b1;
localparam [63:0] PTR_MASK = (PTR_BYTES == 8) ? 64'hffffffffffffffff : 64'h00000000ffffffff;

initial begin
    if (IN_WIDTH != 32 && IN_WIDTH != 64 && IN_WIDTH != 128) begin
        $error("Error: IN_WIDTH must be 32, 64 or 128 (instance %m)");
        $finish;
    end
    if (OUT_WIDTH != 64 && OUT_WIDTH != 128 && OUT_WIDTH != 256) begin
        $error("Error: OUT_WIDTH must be 64, 128 or 256 (instance %m)");
        $finish;
    end
    if (PTR_BYTES != 4 && PTR_BYTES != 8) begin
        $error("Error: PTR_BYTES must be 4 or 8 (instance %m)");
        $finish;
    end
    if (OBJ_BITS <= TPC_SH || OBJ_BITS > 30) begin
        $error("Error: OBJ_BITS must be in log2(IN_WIDTH/32)+1..30 (instance %m)");
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
    if (IN_ADDR_WIDTH + IB_SH > 32) begin
        $error("Error: IN_ADDR_WIDTH + log2(IN_WIDTH/8) must be <= 32 (instance %m)");
        $finish;
    end
end

// ---------------------------------------------------------------- error codes, states
localparam [7:0] E_TRUNCATED = 8'd1, E_COUNT_TOO_LARGE = 8'd2, E_UNKNOWN_TYPE = 8'd3, E_BAD_REFERENCE = 8'd4, E_REFERENCE_TYPE = 8'd5,
                 E_ROOT_TYPE = 8'd6, E_TRAILING_BYTES = 8'd7, E_IMAGE_TOO_LARGE = 8'd8, E_BAD_BASE = 8'd9, E_CAPACITY = 8'd10;

// (every decision is taken on registered flags: COUNT2, CHECK0, TERR and TRUNC0..2 wait for them)
localparam [3:0] S_IDLE = 4'd0, S_COUNT = 4'd1, S_COUNT2 = 4'd2, S_COUNT3 = 4'd3, S_TYPES = 4'd4,
                 S_CHECK0 = 4'd5, S_CHECK = 4'd6, S_TRUNC0 = 4'd7, S_TRUNC1 = 4'd8, S_TRUNC2 = 4'd9,
                 S_TRUNC3 = 4'd10, S_JOIN = 4'd11, S_DONE = 4'd12, S_TERR = 4'd13;
// the member phase's own state machine (it runs beside the allocation phase)
localparam [2:0] W_IDLE = 3'd0, W_SKIP = 3'd1, W_LOAD0 = 3'd2, W_LOAD1 = 3'd3, W_LOAD2 = 3'd4,
                 W_WALK = 3'd5, W_FLUSH = 3'd6, W_END = 3'd7;

// ---------------------------------------------------------------- control registers
reg [3:0]            state_reg = S_IDLE, state_next;
reg [2:0]            wst_reg = W_IDLE, wst_next;   // the member phase
reg                  walk_reg = 1'b0;              // wst_reg == W_WALK (a register of its own: it fans out wide)
reg                  wwalk_reg = 1'b0;             // the same for the image writer (not cleared by start, so
                                                   // not merged with walk_reg: start empties M6 anyway)
reg                  load2_reg = 1'b0;             // wst_reg == W_LOAD2 (likewise, near the walk loop)
reg                  winit_reg = 1'b0;             // the same, for the writer (a different function
                                                   // of the same state, so not merged with load2_reg)
reg [31:0]           len_reg = 32'd0;
reg [63:0]           base_reg = 64'd0;
reg [64:0]           room_reg = 65'd0;                  // bytes from base to the end of the pointer range
reg                  base0_reg = 1'b0;                  // base == 0
reg [32:0]           maxim_reg = 33'd0;                 // min(max_image, 2^32-1)
reg [CLS_BITS-1:0]   root_reg = {CLS_BITS{1'b0}};
reg [31:0]           n_reg = 32'd0;                     // object count
reg [31:0]           lenq_reg = 32'd0;                  // (in_len - 4) / 4: most objects the input can hold
reg                  n_big_reg = 1'b0, n_cap_reg = 1'b0, n_zero_reg = 1'b0;   // n's checks, registered
reg [7:0]            err_reg = 8'd0;
reg [31:0]           erroff_reg = 32'd0;
reg [63:0]           cyc_reg = 64'd0;

// ---------------------------------------------------------------- per-class header registers
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

// ---------------------------------------------------------------- input: two readers
reg [31:0]           lw_reg = 32'd0;      // input words
wire                 rd_ok, mrd_ok;       // window full, or everything landed
wire [WIN*8-1:0]     window, mwindow;
wire [31:0]          pos_reg, mpos_reg;
wire [5:0]           take_q_reg, mtake_q_reg;
wire                 cnt_fire, t0_fire, skip_fire, w_fire;
wire                 a_start, m_start;
wire [31:0]          a_words, m_first, m_words;
reg [4:0]            ttk_reg = 5'd4;              // bytes the next type-id group takes (COUNT: 4)
reg [5:0]            w_nb_reg = 6'd0;             // bytes the next step takes (W_SKIP: to the members)
// (the readers stop a cycle after the decode or the walk ends, from registered state: one
// more word read, within the input, is harmless)
hw_og_reader #(.IN_WIDTH(IN_WIDTH), .IN_ADDR_WIDTH(IN_ADDR_WIDTH)) rd_alloc (
    .clk(clk), .rst(rst), .start(a_start), .first_word(32'd0), .nwords(a_words), .stop(state_reg == S_DONE),
    .fire(cnt_fire || t0_fire), .take_n({1'b0, ttk_reg}), .window(window), .ok(rd_ok), .pos(pos_reg), .pos_q(take_q_reg),
    .in_rd_en(in_rd_en), .in_addr(in_addr), .in_rd_data(in_rd_data));
hw_og_reader #(.IN_WIDTH(IN_WIDTH), .IN_ADDR_WIDTH(IN_ADDR_WIDTH)) rd_member (
    .clk(clk), .rst(rst), .start(m_start), .first_word(m_first), .nwords(m_words),
    .stop(state_reg == S_DONE || wst_reg == W_END),
    .fire(skip_fire || w_fire), .take_n(w_nb_reg), .window(mwindow), .ok(mrd_ok), .pos(mpos_reg), .pos_q(mtake_q_reg),
    .in_rd_en(in2_rd_en), .in_addr(in2_addr), .in_rd_data(in2_rd_data));

// ---------------------------------------------------------------- generated tables
// allocation: TPC type ids -> classes -> class rows
wire [TPC-1:0]          ty_hit;           // the id's low TID_BITS bits name a class
wire [TPC-1:0]          ty_hz0, ty_hz1;   // its high bits are zero (two halves)
wire [TPC*CLS_BITS-1:0] ty_cls;
reg  [TPC*32-1:0]       t1_ids = {TPC*32{1'b0}};
reg  [TPC*CLS_BITS-1:0] t2_cls = {TPC*CLS_BITS{1'b0}};
wire [TPC*32-1:0]       ca_size, ca_align, ca_wsize;
wire [TPC*16-1:0]       ca_nwire;
wire [TPC*NCLS-1:0]     ca_anc;
genvar gj;
generate
for (gj = 0; gj < TPC; gj = gj + 1) begin : g_tdesc
    hw_og_desc_type desc_type (.t_lo(t1_ids[32*gj +: TID_BITS]), .t_hit(ty_hit[gj]), .t_cls(ty_cls[CLS_BITS*gj +: CLS_BITS]));
    // (the high bits' zero check is registered in two halves and and-ed in T2: the
    // lookup's logic into T2 stays a few LUTs deep whatever the ids)
    wire [31:0] idhi = t1_ids[32*gj +: 32] >> TID_BITS;
    assign ty_hz0[gj] = idhi[15:0] == 16'd0;
    assign ty_hz1[gj] = idhi[31:16] == 16'd0;
    hw_og_desc_class desc_ca (.c_idx(t2_cls[CLS_BITS*gj +: CLS_BITS]), .c_size(ca_size[32*gj +: 32]), .c_align(ca_align[32*gj +: 32]),
        .c_wsize(ca_wsize[32*gj +: 32]), .c_nwire(ca_nwire[16*gj +: 16]), .c_anc(ca_anc[NCLS*gj +: NCLS]));
end
endgenerate

// truncation search: the first truncated object's wire members
reg  [CLS_BITS-1:0]  tr_cls_reg = {CLS_BITS{1'b0}};
reg  [15:0]          tr_k_reg = 16'd0;
wire [1:0]           tr_wl;
wire [31:0]          tr_size, tr_align, tr_wsize;
wire [15:0]          tr_nwire;
wire [NCLS-1:0]      tr_anc;
hw_og_desc_member desc_m (.m_cls(tr_cls_reg), .m_k(tr_k_reg), .m_wl(tr_wl));
hw_og_desc_class desc_ct (.c_idx(tr_cls_reg), .c_size(tr_size), .c_align(tr_align), .c_wsize(tr_wsize), .c_nwire(tr_nwire), .c_anc(tr_anc));

// ================================================================ allocation pipeline
wire [NCLS-1:0] ca_anc0 = ca_anc[NCLS-1:0];
wire t2_rootok = {{32-CLS_BITS{1'b0}}, root_reg} < NCLS && ca_anc0[root_reg];   // object 0's class vs the root
// T0 -> T1
reg                  t1_valid = 1'b0;
reg [TPC-1:0]        t1_mask = {TPC{1'b0}};       // which ids of the group are objects
reg                  t1_first = 1'b0, t1_lastg = 1'b0;
reg [31:0]           t1_off = 32'd0;              // wire offset of the group's first id
reg [5:0]            t1_offq = 6'd0;              // (plus this)
reg [ENT_BITS-1:0]   t1_g = {ENT_BITS{1'b0}};     // group (= table entry) index
reg [31:0]           trem_reg = 32'd0;            // objects not yet issued
reg                  trem_nz_reg = 1'b0;          // trem_reg != 0
reg                  tfirst_reg = 1'b0;
reg [ENT_BITS-1:0]   tg_reg = {ENT_BITS{1'b0}};
// T1 -> T2
reg                  t2_valid = 1'b0;
reg [TPC-1:0]        t2_mask = {TPC{1'b0}}, t2_lohit = {TPC{1'b0}}, t2_hz0 = {TPC{1'b0}}, t2_hz1 = {TPC{1'b0}};
wire [TPC-1:0]       t2_hit = t2_lohit & t2_hz0 & t2_hz1;   // the id names a class
reg                  t2_first = 1'b0, t2_lastg = 1'b0;
reg [31:0]           t2_off = 32'd0;
reg [ENT_BITS-1:0]   t2_g = {ENT_BITS{1'b0}};
// T2 -> T3
reg                  t3_valid = 1'b0;
reg [TPC-1:0]        t3_mask = {TPC{1'b0}}, t3_eu = {TPC{1'b0}}, t3_er = {TPC{1'b0}}, t3_al8 = {TPC{1'b0}};
reg [TPC*32-1:0]     t3_size = {TPC*32{1'b0}}, t3_wsize = {TPC*32{1'b0}};
reg [TPC*CLS_BITS-1:0] t3_cls = {TPC*CLS_BITS{1'b0}};
reg                  t3_lastg = 1'b0;
reg [31:0]           t3_off = 32'd0;
reg [ENT_BITS-1:0]   t3_g = {ENT_BITS{1'b0}};
// T3 -> T4
reg                  t4_valid = 1'b0;
reg [TPC-1:0]        t4_mask = {TPC{1'b0}}, t4_eu = {TPC{1'b0}}, t4_er = {TPC{1'b0}};
reg [TPC*CLS_BITS-1:0] t4_cls = {TPC*CLS_BITS{1'b0}};
reg [TPC*34-1:0]     t4_rel0 = {TPC*34{1'b0}}, t4_rel1 = {TPC*34{1'b0}};   // object offsets in the group (top[2] = 0 / 1)
reg [TPC*34-1:0]     t4_end0 = {TPC*34{1'b0}}, t4_end1 = {TPC*34{1'b0}};   // object ends in the group
reg [33:0]           t4_d0 = 34'd0, t4_d1 = 34'd0;                         // group delta
reg [TPC*34-1:0]     t4_wpre = {TPC*34{1'b0}}, t4_wend = {TPC*34{1'b0}};   // wire start / end of the members
reg [33:0]           t4_wsum = 34'd0;
reg                  t4_lastg = 1'b0;
reg [31:0]           t4_off = 32'd0;
reg [ENT_BITS-1:0]   t4_g = {ENT_BITS{1'b0}};
// T4 (loop) and T4 -> T5
reg [39:0]           top_reg = 40'd0;     // image bytes allocated
reg [55:0]           wpos_reg = 56'd0;    // wire bytes the objects so far need
reg                  t5_valid = 1'b0;
reg [TPC-1:0]        t5_mask = {TPC{1'b0}}, t5_eu = {TPC{1'b0}}, t5_er = {TPC{1'b0}};
reg [TPC*CLS_BITS-1:0] t5_cls = {TPC*CLS_BITS{1'b0}};
reg [TPC*40-1:0]     t5_o = {TPC*40{1'b0}}, t5_e = {TPC*40{1'b0}};
reg [TPC*56-1:0]     t5_ws = {TPC*56{1'b0}}, t5_we = {TPC*56{1'b0}};
reg                  t5_lastg = 1'b0;
reg [31:0]           t5_off = 32'd0;
reg [ENT_BITS-1:0]   t5_g = {ENT_BITS{1'b0}};
// T5 -> T6: the comparisons, registered
reg                  t6_valid = 1'b0;
reg [TPC-1:0]        t6_mask = {TPC{1'b0}}, t6_eu = {TPC{1'b0}}, t6_er = {TPC{1'b0}};
reg [TPC-1:0]        t6_eimg = {TPC{1'b0}}, t6_ecap = {TPC{1'b0}}, t6_tr = {TPC{1'b0}};
reg                  t6_bad = 1'b0;       // an object of the group fails a check (registered OR of
                                          // the masked flags: the verdict's control path is short)
reg [TPC*CLS_BITS-1:0] t6_cls = {TPC*CLS_BITS{1'b0}};
reg [TPC*32-1:0]     t6_o = {TPC*32{1'b0}};
reg [TPC*32-1:0]     t6_eo = {TPC*32{1'b0}};                 // wire offset of each type id
reg [TPC*34-1:0]     t6_ws = {TPC*34{1'b0}};
reg                  t6_lastg = 1'b0;
reg [ENT_BITS-1:0]   t6_g = {ENT_BITS{1'b0}};
// first truncated object (its class and wire start; the start is <= the input length)
reg                  tr_found_reg = 1'b0;
reg [33:0]           tr_pos_reg = 34'd0;
reg [33:0]           tr_end_reg = 34'd0;
reg                  tr_past_reg = 1'b0, tr_lastm_reg = 1'b0;
reg [1:0]            tr_wl_reg = 2'd0;
reg [15:0]           tr_nwire_reg = 16'd0;
// CHECK's comparisons, registered every cycle (CHECK0 waits for them)
reg                  ck_long_reg = 1'b0, ck_short_reg = 1'b0, ck_base_reg = 1'b0;

// T3: prefix sums of the sizes and wire bytes inside the group, and for both values of
// top[2] the number of 4-byte alignment pads up to each object (sizes are multiples of
// 4, alignments 4 or 8, so an object is padded iff it is 8-aligned and bit 2 of the
// position is set). T3b -> T4 adds them: offset_j = S_j + 4 * pads_j.
localparam T3W = 2 * TPC * 34 + 34 + 2 * TPC * 34 + 34 + 2 * TPC * 3;
function [T3W-1:0] group_sums;
    input [TPC-1:0]    mask, al8;
    input [TPC*32-1:0] size, wsize;
    reg [TPC*34-1:0] sb, se, wpre, wend;
    reg [TPC*3-1:0]  np0, np1;
    reg [33:0] sa, wa;
    reg [2:0] c0, c1;
    reg p0, p1;
    integer k;
begin
    sa = 34'd0; wa = 34'd0; c0 = 3'd0; c1 = 3'd0; p0 = 1'b0; p1 = 1'b1;
    for (k = 0; k < TPC; k = k + 1) begin
        sb[34*k +: 34] = sa;
        wpre[34*k +: 34] = wa;
        if (mask[k]) begin
            if (al8[k] && p0) begin c0 = c0 + 3'd1; p0 = 1'b0; end
            if (al8[k] && p1) begin c1 = c1 + 3'd1; p1 = 1'b0; end
            p0 = p0 ^ size[32*k + 2];
            p1 = p1 ^ size[32*k + 2];
            sa = sa + {2'b00, size[32*k +: 32]};
            wa = wa + {2'b00, wsize[32*k +: 32]};
        end
        se[34*k +: 34] = sa;
        wend[34*k +: 34] = wa;
        np0[3*k +: 3] = c0;
        np1[3*k +: 3] = c1;
    end
    group_sums = {sb, se, sa, wpre, wend, wa, np0, np1};
end
endfunction
wire [TPC*34-1:0]     t3_sb, t3_se, t3_wpre, t3_wend;
wire [33:0]           t3_st, t3_ws;
wire [TPC*3-1:0]      t3_np0, t3_np1;
assign {t3_sb, t3_se, t3_st, t3_wpre, t3_wend, t3_ws, t3_np0, t3_np1} = group_sums(t3_mask, t3_al8, t3_size, t3_wsize);
// T3b
reg                  t3b_valid = 1'b0;
reg [TPC-1:0]        t3b_mask = {TPC{1'b0}}, t3b_eu = {TPC{1'b0}}, t3b_er = {TPC{1'b0}};
reg [TPC*CLS_BITS-1:0] t3b_cls = {TPC*CLS_BITS{1'b0}};
reg [TPC*34-1:0]     t3b_sb = {TPC*34{1'b0}}, t3b_se = {TPC*34{1'b0}}, t3b_wpre = {TPC*34{1'b0}}, t3b_wend = {TPC*34{1'b0}};
reg [33:0]           t3b_st = 34'd0, t3b_ws = 34'd0;
reg [TPC*3-1:0]      t3b_np0 = {TPC*3{1'b0}}, t3b_np1 = {TPC*3{1'b0}};
reg                  t3b_lastg = 1'b0;
reg [31:0]           t3b_off = 32'd0;
reg [ENT_BITS-1:0]   t3b_g = {ENT_BITS{1'b0}};

// output memory capacity in bytes
localparam [39:0] OUT_CAP = 40'd1 << (OUT_ADDR_WIDTH + OUT_SHIFT);
// T6: the first object of the group with an error, and the first truncated one
// {code, offset, truncated found, its class, its wire start} (whether any object has an
// error is t6_bad, registered)
localparam T6W = 8 + 32 + 1 + CLS_BITS + 34;
function [T6W-1:0] group_checks;
    input [TPC-1:0]          mask, eu, er, eimg, ecap, tr;
    input [TPC*34-1:0]       ws;
    input [TPC*CLS_BITS-1:0] cls;
    input [TPC*32-1:0]       eo;
    reg trf;
    reg [7:0] code;
    reg [31:0] eoff;
    reg [CLS_BITS-1:0] trc;
    reg [33:0] trp;
    integer k;
begin
    code = 8'd0; eoff = 32'd0; trf = 1'b0; trc = {CLS_BITS{1'b0}}; trp = 34'd0;
    // highest index first, so the lowest object wins
    for (k = TPC - 1; k >= 0; k = k - 1) begin
        if (mask[k]) begin
            if (eu[k] || er[k] || eimg[k] || ecap[k]) begin
                eoff = eo[32*k +: 32];
                code = eu[k] ? E_UNKNOWN_TYPE : er[k] ? E_ROOT_TYPE : eimg[k] ? E_IMAGE_TOO_LARGE : E_CAPACITY;
            end
            if (tr[k]) begin
                trf = 1'b1;
                trc = cls[CLS_BITS*k +: CLS_BITS];
                trp = ws[34*k +: 34];
            end
        end
    end
    group_checks = {code, eoff, trf, trc, trp};
end
endfunction
// T5's comparisons (registered into T6, and OR-ed for t6_bad)
wire [TPC-1:0]       t5_eimg, t5_ecap;
generate
for (gj = 0; gj < TPC; gj = gj + 1) begin : g_t5cmp
    assign t5_eimg[gj] = t5_e[40*gj +: 40] > {7'd0, maxim_reg};
    assign t5_ecap[gj] = t5_e[40*gj +: 40] > OUT_CAP;
end
endgenerate
wire [7:0]           t6_code;
wire [31:0]          t6_eoff;
reg  [7:0]           t7_code = 8'd0;      // t6_code and t6_eoff registered (for TERR)
reg  [31:0]          t7_eoff = 32'd0;
wire                 t6_trf;
wire [CLS_BITS-1:0]  t6_trc;
wire [33:0]          t6_trp;
assign {t6_code, t6_eoff, t6_trf, t6_trc, t6_trp} =
    group_checks(t6_mask, t6_eu, t6_er, t6_eimg, t6_ecap, t6_tr, t6_ws, t6_cls, t6_eo);

// ================================================================ object-pointer table
reg                  pend_reg = 1'b0;     // a second completed word is parked: freeze
reg                  rwait_reg = 1'b0;    // M1c references an entry not yet written: freeze
wire                 mv = !pend_reg && !rwait_reg;   // the member pipeline moves this cycle
// allocation progress, for the member phase running behind it
reg [ENT_BITS:0]     ent_done_reg = {ENT_BITS+1{1'b0}};   // table entries written
reg                  alloc_fin_reg = 1'b0;                // every entry written
reg                  tab_ok_reg = 1'b0;   // the walk's prefetch queue holds an entry next cycle

// One entry per group of TPC objects ({class, image offset} each), written once per
// allocation cycle. Copies: one for the walk (sequential), one per reference slot; each
// is a simple dual-port memory (one write port, one registered read port): block RAM.
reg                  tw_en;
reg [ENT_BITS-1:0]   tw_addr;
reg [ENT_W-1:0]      tw_data;
// The walk reads its copy in order, ahead of use, into a small queue (PQ_N entries, LUT
// RAM): the block RAM's slow clock-to-output then only reaches the queue's write port,
// and the walk takes entries from the queue. An entry is read once written (counted in
// ent_done_reg), or any entry once every entry is (past the table: garbage, never used).
localparam PQ_N = 8;
reg [ENT_BITS:0]     pf_rd_reg = {ENT_BITS+1{1'b0}};   // next entry to read
reg                  pf_on_reg = 1'b0;    // prefetching (the member phase runs)
reg                  pf_v_reg = 1'b0;     // a read was issued last cycle (in the RAM's latch)
reg                  pf_v2_reg = 1'b0;    // ... two cycles ago: wq2 lands in the queue
reg [3:0]            pq_n_reg = 4'd0;     // entries in the queue
reg [3:0]            pf_cnt_reg = 4'd0;   // ... and on their way (pq_n + pf_v + pf_v2): 8 = full
reg [2:0]            pq_h_reg = 3'd0, pq_t_reg = 3'd0;   // head (next to take), tail
reg [ENT_W-1:0]      pq [0:PQ_N-1];
wire [ENT_W-1:0]     wq2;                 // walk copy read data (two registers after the read)
wire pf_issue = pf_on_reg && !pf_cnt_reg[3] &&
                (alloc_fin_reg || pf_rd_reg < ent_done_reg);
wire [ENT_W-1:0] pq_head = pq[pq_h_reg];
hw_sdp_ram #(.AW(ENT_BITS), .DW(ENT_W)) wram (
    .clk(clk), .we(tw_en), .wa(tw_addr), .wd(tw_data),
    .re(pf_issue), .ra(pf_rd_reg[ENT_BITS-1:0]), .q(wq2)
);
always @(posedge clk) begin
    if (pf_v2_reg) pq[pq_t_reg] <= wq2;
end
reg                      mv_q = 1'b0;     // the member pipeline moved at the last edge
wire [NREF*ENT_BITS-1:0] rra, rrb;        // reference copies: read addresses of M1b and M1c
wire [NREF*ENT_W-1:0]    rq;              // and registered data
generate
for (gj = 0; gj < NREF; gj = gj + 1) begin : g_rmem
    // read in M1b (the block RAM's output register holds it in M2); while the member
    // pipeline is frozen the RAM re-reads M1c's entry (it may have been written since)
    // and M2's entry is the one taken at M2's last move (qh holds it)
    wire [ENT_W-1:0] q2;
    reg  [ENT_W-1:0] qh = {ENT_W{1'b0}};
    wire [ENT_W-1:0] q = mv_q ? q2 : qh;
    hw_sdp_ram #(.AW(ENT_BITS), .DW(ENT_W)) rram (
        .clk(clk), .we(tw_en), .wa(tw_addr), .wd(tw_data),
        .re(1'b1), .ra(mv ? rra[ENT_BITS*gj +: ENT_BITS] : rrb[ENT_BITS*gj +: ENT_BITS]), .q(q2)
    );
    always @(posedge clk) qh <= q;
    assign rq[ENT_W*gj +: ENT_W] = q;
end
endgenerate

// ================================================================ member pipeline

// M0: walk state (the loop)
reg                  w_act_reg = 1'b0;    // steps left to issue
reg [CLS_BITS-1:0]   w_c_reg = {CLS_BITS{1'b0}};   // current object's class
reg [15:0]           w_s_reg = 16'd0;     // step index in the object
reg [31:0]           w_o_reg = 32'd0;     // current object's image offset
reg [31:0]           w_i_reg = 32'd0;     // current object index
reg                  w_lasto_reg = 1'b0;  // the current object is the last
reg [31:0]           w_rem_reg = 32'd0;   // objects after the current one
reg                  w_last_reg = 1'b0;   // ... and "last step of the object"
reg [ENT_W-1:0]      ent_cur = {ENT_W{1'b0}};   // table entry holding the current object
reg [ENT_W-1:0]      ent_nxt = {ENT_W{1'b0}};   // the entry after it
wire [TPC_W-1:0]     w_sub = w_i_reg[TPC_W-1:0] & ((1 << TPC_SH) - 1);
wire [TPC_W-1:0]     w_sub1 = w_sub + 1'b1;
wire                 w_cross = (TPC_SH == 0) || (w_sub == TPC_LAST);  // next object is in ent_nxt
wire [OBJ_W-1:0]     nx_obj = w_cross ? ent_nxt[OBJ_W-1:0] : ent_cur[w_sub1*OBJ_W +: OBJ_W];
wire [CLS_BITS-1:0]  nx_cls = load2_reg ? ent_cur[32 +: CLS_BITS] : nx_obj[32 +: CLS_BITS];
// step rows: next step of this object (a), first step of the next object (b), this step (m)
wire [5:0]  sa_nb, sb_nb, sm_nb, s3_nb;
wire        sa_last, sb_last, sm_last, s3_last;
wire [31:0] sa_lo, sb_lo, sm_lo, s3_lo;
wire [5:0]  sa_len, sb_len, sm_len, s3_len;
wire [NREF-1:0] sa_rv, sb_rv, sm_rv, s3_rv;
wire [5*NREF-1:0] sa_roff, sb_roff, sm_roff, s3_roff;
wire [CLS_BITS*NREF-1:0] sa_rtgt, sb_rtgt, sm_rtgt, s3_rtgt;
wire [SEL_BITS*FRAG-1:0] sa_sel, sb_sel, sm_sel, s3_sel;
hw_og_desc_step #(.WIN_BYTES(WIN), .FRAG_BYTES(FRAG), .NREF(NREF), .SEL_BITS(SEL_BITS)) desc_sa (
    .s_cls(w_c_reg), .s_idx(w_s_reg + 16'd1), .s_nb(sa_nb), .s_last(sa_last), .s_lo(sa_lo), .s_len(sa_len),
    .s_rv(sa_rv), .s_roff(sa_roff), .s_rtgt(sa_rtgt), .s_sel(sa_sel));
hw_og_desc_step #(.WIN_BYTES(WIN), .FRAG_BYTES(FRAG), .NREF(NREF), .SEL_BITS(SEL_BITS)) desc_sb (
    .s_cls(nx_cls), .s_idx(16'd0), .s_nb(sb_nb), .s_last(sb_last), .s_lo(sb_lo), .s_len(sb_len),
    .s_rv(sb_rv), .s_roff(sb_roff), .s_rtgt(sb_rtgt), .s_sel(sb_sel));
hw_og_desc_step #(.WIN_BYTES(WIN), .FRAG_BYTES(FRAG), .NREF(NREF), .SEL_BITS(SEL_BITS)) desc_sm (
    .s_cls(w_c_reg), .s_idx(w_s_reg), .s_nb(sm_nb), .s_last(sm_last), .s_lo(sm_lo), .s_len(sm_len),
    .s_rv(sm_rv), .s_roff(sm_roff), .s_rtgt(sm_rtgt), .s_sel(sm_sel));

// The consumers take bytes when the window is full (WIN bytes: every step and group fits)
// or the whole input has landed (then it holds every byte still needed): a comparison
// with a constant, not with the step's size.
// (the freeze is not in it: a step issued in a frozen cycle waits in the slot k_step, and
// the walk issues only into an empty slot, so the loop's control stays local)
reg  k_full_reg = 1'b0;
assign w_fire = walk_reg && !k_full_reg && w_act_reg && mrd_ok && tab_ok_reg;
assign skip_fire = (wst_reg == W_SKIP) && mrd_ok;
// (a step that crosses into the next entry, from registers only and kept apart, so the
// reader's late mrd_ok is the last AND before pq_pop, not the first of a chain)
(* keep *) wire w_xrdy = walk_reg && !k_full_reg && w_act_reg && tab_ok_reg && w_last_reg && !w_lasto_reg && w_cross;
wire pq_pop = ((wst_reg == W_LOAD0 || wst_reg == W_LOAD1) && pq_n_reg != 4'd0) || (w_xrdy && mrd_ok);

// M1
reg                  m1_valid = 1'b0, m1_fin = 1'b0;
reg [WIN*8-1:0]      m1_win = {WIN*8{1'b0}};
reg [CLS_BITS-1:0]   m1_c = {CLS_BITS{1'b0}};
reg [15:0]           m1_s = 16'd0;
reg [31:0]           m1_a = 32'd0;        // image address of the fragment (o + lo)
reg [5:0]            m1_len = 6'd0;
reg [31:0]           m1_pos = 32'd0;      // wire offset of the step
reg [5:0]            m1_posq = 6'd0;      // (plus this)
reg [NREF-1:0]       m1_rv = {NREF{1'b0}};
reg [5*NREF-1:0]     m1_roff = {5*NREF{1'b0}};
reg [CLS_BITS*NREF-1:0] m1_rtgt = {CLS_BITS*NREF{1'b0}};
// M0's step, as M1 takes it, and the slot a step issued in a frozen cycle waits in
localparam STEP_W = 1 + WIN*8 + CLS_BITS + 16 + 32 + 6 + 32 + 6 + NREF + 5*NREF + CLS_BITS*NREF;
wire [STEP_W-1:0]    m0_step = {w_last_reg && w_lasto_reg, mwindow, w_c_reg, w_s_reg, w_o_reg + sm_lo, sm_len,
                                mpos_reg, mtake_q_reg, sm_rv, sm_roff, sm_rtgt};
reg  [STEP_W-1:0]    k_step = {STEP_W{1'b0}};
// M1a, M1b, M1c: a step's reference indexes and their validity, registered for the wait
// compares (M1a), the table read (M1b) and the checks (M1c); the rest of the step (M1p)
// rides along packed and is unpacked where M2 takes it
localparam M1P_W = 1 + WIN*8 + CLS_BITS + 16 + 32 + 6 + 32 + 5*NREF + CLS_BITS*NREF;
reg                  m1a_valid = 1'b0, m1b_valid = 1'b0, m1c_valid = 1'b0;
reg [NREF-1:0]       m1a_rv = {NREF{1'b0}}, m1b_rv = {NREF{1'b0}}, m1c_rv = {NREF{1'b0}};
reg [NREF*32-1:0]    m1a_r = {NREF*32{1'b0}}, m1b_r = {NREF*32{1'b0}}, m1c_r = {NREF*32{1'b0}};
reg [M1P_W-1:0]      m1a_p = {M1P_W{1'b0}}, m1b_p = {M1P_W{1'b0}}, m1c_p = {M1P_W{1'b0}};
wire                 m1c_fin;
wire [WIN*8-1:0]     m1c_win;
wire [CLS_BITS-1:0]  m1c_c;
wire [15:0]          m1c_s;
wire [31:0]          m1c_a;
wire [5:0]           m1c_len;
wire [31:0]          m1c_pos;
wire [5*NREF-1:0]    m1c_roff;
wire [CLS_BITS*NREF-1:0] m1c_rtgt;
assign {m1c_fin, m1c_win, m1c_c, m1c_s, m1c_a, m1c_len, m1c_pos, m1c_roff, m1c_rtgt} = m1c_p;
// M2
reg                  m2_valid = 1'b0, m2_fin = 1'b0;
reg [WIN*8-1:0]      m2_win = {WIN*8{1'b0}};
reg [CLS_BITS-1:0]   m2_c = {CLS_BITS{1'b0}};
reg [15:0]           m2_s = 16'd0;
reg [31:0]           m2_a = 32'd0;
reg [5:0]            m2_len = 6'd0;
reg [NREF*32-1:0]    m2_eoff = {NREF*32{1'b0}};   // wire offset of each reference
reg [NREF-1:0]       m2_rv = {NREF{1'b0}}, m2_null = {NREF{1'b0}}, m2_oob = {NREF{1'b0}}, m2_zero = {NREF{1'b0}};
reg [NREF*TPC_W-1:0] m2_rsub = {NREF*TPC_W{1'b0}};
reg [CLS_BITS*NREF-1:0] m2_rtgt = {CLS_BITS*NREF{1'b0}};
reg [63:0]           m2_hval = 64'd0;
// M3
reg                  m3_valid = 1'b0, m3_fin = 1'b0;
reg [WIN*8-1:0]      m3_win = {WIN*8{1'b0}};
reg [CLS_BITS-1:0]   m3_c = {CLS_BITS{1'b0}};
reg [15:0]           m3_s = 16'd0;
reg [31:0]           m3_a = 32'd0;
reg [5:0]            m3_len = 6'd0;
reg [NREF*32-1:0]    m3_eoff = {NREF*32{1'b0}};
reg [NREF-1:0]       m3_rv = {NREF{1'b0}}, m3_null = {NREF{1'b0}}, m3_oob = {NREF{1'b0}}, m3_zero = {NREF{1'b0}};
reg [CLS_BITS*NREF-1:0] m3_rtgt = {CLS_BITS*NREF{1'b0}};
reg [CLS_BITS*NREF-1:0] m3_tcls = {CLS_BITS*NREF{1'b0}};   // referenced objects' classes
reg [32*NREF-1:0]    m3_toff = {32*NREF{1'b0}};            // and image offsets
reg [63:0]           m3_hval = 64'd0;
// M4
reg                  m4_valid = 1'b0, m4_fin = 1'b0;
reg [WIN*8-1:0]      m4_win = {WIN*8{1'b0}};
reg [31:0]           m4_a = 32'd0;
reg [5:0]            m4_len = 6'd0;
reg [NREF*32-1:0]    m4_eoff = {NREF*32{1'b0}};
reg [NREF-1:0]       m4_eref = {NREF{1'b0}}, m4_etype = {NREF{1'b0}}, m4_ebase = {NREF{1'b0}};
reg [64*NREF-1:0]    m4_val = {64*NREF{1'b0}};             // relocated references (0 if null)
reg [63:0]           m4_hval = 64'd0;
reg [SEL_BITS*FRAG-1:0] m4_sel = {SEL_BITS*FRAG{1'b0}};
// M5
reg                  m5_valid = 1'b0, m5_fin = 1'b0;
reg                  m5_err = 1'b0;                        // M4 found the step's first error: the walk stops
reg [7:0]            m5_ecode = 8'd0;
reg [31:0]           m5_eat = 32'd0;
reg [FRAG*8-1:0]     m5_frag = {FRAG*8{1'b0}};
reg [31:0]           m5_a = 32'd0;
reg                  m5_cross = 1'b0;                      // the fragment reaches the end of its word
// M5b: the fragment rotated by its lane's high bits
reg                  m5b_valid = 1'b0, m5b_fin = 1'b0;
reg [OUT_WIDTH-1:0]  m5b_rot = {OUT_WIDTH{1'b0}};
reg [31:0]           m5b_a = 32'd0;
reg                  m5b_cross = 1'b0;
// M6
reg                  m6_valid = 1'b0, m6_fin = 1'b0;
reg                  m6_done = 1'b0;      // the writer took M6's step while the pipeline was frozen
reg [OUT_WIDTH-1:0]  m6_rot = {OUT_WIDTH{1'b0}};       // the fragment rotated to its lane
reg [OB-1:0]         m6_lom = {OB{1'b0}};              // its bytes in the lane's word: at or after the lane
reg [OB-1:0]         m6_newm = {OB{1'b0}};             // its bytes the accumulator takes (see the writer)
reg                  m6_cross = 1'b0;
// the fragment's word is the accumulator's (bit 0 of its word index == accw_reg[0]), decided as it enters M6
// from the accumulator's next word parity: a register drives the writer's wide selects
reg                  m6_same = 1'b0;
// image writer
reg [OUT_WIDTH-1:0]  acc_reg = {OUT_WIDTH{1'b0}};
reg [31:0]           accw_reg = 32'd0;
reg [OUT_WIDTH-1:0]  pend_data = {OUT_WIDTH{1'b0}};
reg [31:0]           pend_addr = 32'd0;
reg                  wr_en_reg = 1'b0;
reg [31:0]           wr_addr_reg = 32'd0;
reg [OUT_WIDTH-1:0]  wr_data_reg = {OUT_WIDTH{1'b0}};

// M1: reference indexes from the window; their table rows are read now
wire [NREF*32-1:0]   m1_r;
generate
for (gj = 0; gj < NREF; gj = gj + 1) begin : g_rra
    wire [WIN*8-1:0] sh = m1_win >> {m1_roff[5*gj +: 5], 3'b000};
    assign m1_r[32*gj +: 32] = sh[31:0];
    wire unused_sh = &{1'b0, sh[WIN*8-1:32]};
    assign rra[ENT_BITS*gj +: ENT_BITS] = m1b_r[32*gj + TPC_SH +: ENT_BITS];
    assign rrb[ENT_BITS*gj +: ENT_BITS] = m1c_r[32*gj + TPC_SH +: ENT_BITS];
end
endgenerate
// A reference to an object the allocation phase has not written yet freezes the member
// pipeline with the step in M1c until its entry is written (the entry must be counted in
// ent_done_reg the cycle before the table read that M2 uses). A null reference, or one
// past the table, waits until the last entry is written. The compare idx >= done is taken
// a cycle ahead, for the step each of M1b and M1c holds next (the move selects): done
// rises by at most one a cycle, so idx >= done now is idx > done then, or idx == done
// then with no entry written (wq_tw); the freeze's logic reads flip-flops only.
function [3*NREF-1:0] ref_flags;          // per reference: {high bits set, idx > done, idx == done}
    input              valid;
    input [NREF-1:0]   rv;
    input [NREF*32-1:0] r;
    input [ENT_BITS:0] done_ents;
    integer k;
begin
    for (k = 0; k < NREF; k = k + 1) begin
        // (a null reference has the high bits set and waits too, harmlessly: until the last entry)
        ref_flags[3*k + 2] = valid && rv[k] && r[32*k + OBJ_BITS +: 32 - OBJ_BITS] != {32-OBJ_BITS{1'b0}};
        ref_flags[3*k + 1] = valid && rv[k] && {1'b0, r[32*k + TPC_SH +: ENT_BITS]} > done_ents;
        ref_flags[3*k]     = valid && rv[k] && {1'b0, r[32*k + TPC_SH +: ENT_BITS]} == done_ents;
    end
end
endfunction
function ref_waits;
    input [3*NREF-1:0] f;
    input              tw;
    integer k;
begin
    ref_waits = 1'b0;
    for (k = 0; k < NREF; k = k + 1)
        if (f[3*k + 2] || f[3*k + 1] || (f[3*k] && !tw)) ref_waits = 1'b1;
end
endfunction
reg [3*NREF-1:0] wq_b = {3*NREF{1'b0}}, wq_c = {3*NREF{1'b0}};
reg              wq_tw = 1'b0;
// (after the last entry a reference past the table is bad_reference or garbage of a
// rejected input: no wait)
wire wait_m1b = !alloc_fin_reg && ref_waits(wq_b, wq_tw);
wire wait_m1c = !alloc_fin_reg && ref_waits(wq_c, wq_tw);

// M2: the referenced objects' rows
wire [CLS_BITS*NREF-1:0] m2_tcls;
wire [32*NREF-1:0]       m2_toff;
generate
for (gj = 0; gj < NREF; gj = gj + 1) begin : g_m2
    wire [ENT_W-1:0] ent = rq[ENT_W*gj +: ENT_W];
    wire [OBJ_W-1:0] row = (TPC_SH == 0) ? ent[OBJ_W-1:0] : ent[OBJ_W*m2_rsub[TPC_W*gj +: TPC_W] +: OBJ_W];
    assign m2_tcls[CLS_BITS*gj +: CLS_BITS] = row[32 +: CLS_BITS];
    assign m2_toff[32*gj +: 32] = row[31:0];
end
endgenerate

// M3: checks and relocation; the step's byte sources
wire [NCLS*NREF-1:0] m3_anc;
generate
for (gj = 0; gj < NREF; gj = gj + 1) begin : g_rdesc
    wire [31:0] unused_size, unused_align, unused_wsize;
    wire [15:0] unused_nwire;
    hw_og_desc_class desc_cr (.c_idx(m3_tcls[CLS_BITS*gj +: CLS_BITS]), .c_size(unused_size), .c_align(unused_align),
        .c_wsize(unused_wsize), .c_nwire(unused_nwire), .c_anc(m3_anc[NCLS*gj +: NCLS]));
end
endgenerate
hw_og_desc_step #(.WIN_BYTES(WIN), .FRAG_BYTES(FRAG), .NREF(NREF), .SEL_BITS(SEL_BITS)) desc_s3 (
    .s_cls(m3_c), .s_idx(m3_s), .s_nb(s3_nb), .s_last(s3_last), .s_lo(s3_lo), .s_len(s3_len),
    .s_rv(s3_rv), .s_roff(s3_roff), .s_rtgt(s3_rtgt), .s_sel(s3_sel));
wire [NREF-1:0]    m3_eref, m3_etype, m3_ebase;
wire [64*NREF-1:0] m3_val;
generate
for (gj = 0; gj < NREF; gj = gj + 1) begin : g_m3
    wire [CLS_BITS-1:0] t = m3_rtgt[CLS_BITS*gj +: CLS_BITS];
    wire [NCLS-1:0] anc = m3_anc[NCLS*gj +: NCLS];
    wire live = m3_rv[gj] && !m3_null[gj];
    assign m3_eref[gj] = live && m3_oob[gj];
    assign m3_etype[gj] = live && !m3_oob[gj] && !({{32-CLS_BITS{1'b0}}, t} < NCLS && anc[t]);
    assign m3_ebase[gj] = live && !m3_oob[gj] && m3_zero[gj] && base0_reg;
    assign m3_val[64*gj +: 64] = m3_null[gj] ? 64'd0 : ((base_reg + {32'd0, m3_toff[32*gj +: 32]}) & PTR_MASK);
end
endgenerate

// M4: the first error in wire order; the fragment bytes
function [40:0] first_ref_error;   // {error, code, offset}: the lowest slot wins
    input [NREF-1:0]    eref, etype, ebase;
    input [NREF*32-1:0] eoff;
    reg err;
    reg [7:0] code;
    reg [31:0] at;
    integer k;
begin
    err = 1'b0; code = 8'd0; at = 32'd0;
    for (k = NREF - 1; k >= 0; k = k - 1) begin
        if (eref[k] || etype[k] || ebase[k]) begin
            err = 1'b1;
            code = eref[k] ? E_BAD_REFERENCE : etype[k] ? E_REFERENCE_TYPE : E_BAD_BASE;
            at = eoff[32*k +: 32];
        end
    end
    first_ref_error = {err, code, at};
end
endfunction
wire         m4_err;
wire [7:0]   m4_code;
wire [31:0]  m4_errat;
assign {m4_err, m4_code, m4_errat} = first_ref_error(m4_eref, m4_etype, m4_ebase, m4_eoff);
// byte sources: zero, header bytes, reference bytes, window bytes, sign fills, bools
wire [8*SRC_N-1:0] m4_src;
assign m4_src[7:0] = 8'd0;
assign m4_src[8 +: 64] = m4_hval;
assign m4_src[72 +: 64*NREF] = m4_val;
generate
for (gj = 0; gj < WIN; gj = gj + 1) begin : g_src
    assign m4_src[8*(9 + 8*NREF + gj) +: 8] = m4_win[8*gj +: 8];
    assign m4_src[8*(9 + 8*NREF + WIN + gj) +: 8] = {8{m4_win[8*gj + 7]}};
    assign m4_src[8*(9 + 8*NREF + 2*WIN + gj) +: 8] = {7'd0, |m4_win[8*gj +: 8]};
end
endgenerate
wire [FRAG*8-1:0] m4_frag;
generate
for (gj = 0; gj < FRAG; gj = gj + 1) begin : g_frag
    assign m4_frag[8*gj +: 8] = m4_src[{m4_sel[SEL_BITS*gj +: SEL_BITS], 3'b000} +: 8];
end
endgenerate
wire [OUT_SHIFT:0] m4_endlane = {1'b0, m4_a[OUT_SHIFT-1:0]} + m4_len[OUT_SHIFT:0];

// M5, M5b: the fragment rotated left by its lane: the bytes at or after the lane belong to
// the lane's word, those that wrap around below it to the next word (the fragment's bytes
// past its length are zero, so the two parts never overlap). By the lane's bits from ROT_LO
// up in M5, by those below in M5b: the barrel in two stages, each a few LUT levels.
localparam ROT_LO = (OUT_SHIFT < 2) ? OUT_SHIFT : 2;
function [OUT_WIDTH-1:0] rotl_hi;         // by k's bits from ROT_LO up
    input [OUT_WIDTH-1:0] d;
    input [OUT_SHIFT-1:0] k;
    integer s;
begin
    rotl_hi = d;
    for (s = ROT_LO; s < OUT_SHIFT; s = s + 1)
        if (k[s]) rotl_hi = (rotl_hi << (8 << s)) | (rotl_hi >> (OUT_WIDTH - (8 << s)));
end
endfunction
function [OUT_WIDTH-1:0] rotl_lo;         // by k's bits below ROT_LO
    input [OUT_WIDTH-1:0] d;
    input [OUT_SHIFT-1:0] k;
    integer s;
begin
    rotl_lo = d;
    for (s = 0; s < ROT_LO; s = s + 1)
        if (k[s]) rotl_lo = (rotl_lo << (8 << s)) | (rotl_lo >> (OUT_WIDTH - (8 << s)));
end
endfunction
wire [OUT_WIDTH-1:0]  m5_rot = rotl_hi(m5_frag, m5_a[OUT_SHIFT-1:0]);
wire [OUT_SHIFT-1:0]  m5b_lane = m5b_a[OUT_SHIFT-1:0];
wire [OUT_WIDTH-1:0]  m5b_rot2 = rotl_lo(m5b_rot, m5b_lane);

// ---------------------------------------------------------------- next state (combinational)
assign cnt_fire = (state_reg == S_COUNT) && rd_ok;
assign t0_fire = (state_reg == S_TYPES) && trem_nz_reg && rd_ok;
wire t6_ok = (state_reg == S_TYPES) && t6_valid && !t6_bad;
wire m5_fail = walk_reg && m5_err;
// the writer takes M6's step once: when it arrives, or during a freeze by a waiting
// reference (m6_done then) -- not on mv, so the wide freeze net stays off the writer; a
// parked word (pend_reg) goes first
wire m6_go = wwalk_reg && m6_valid && !m6_done && !pend_reg;
// M6, the image writer's per-byte selects (from registers): the fragment's bytes in the
// lane's word (m6_lo), those merged into the written word, the accumulator's next value
// when it loads (m6_go, or cleared by winit_reg): m6_go, which has m6_done in it, only
// enables the load, so the flag reaches the accumulator through one LUT
wire [OUT_WIDTH-1:0] m6_lo, m6_merge, acc_next;
wire acc_keep = !winit_reg && m6_same && !m6_cross;
wire acc_take = !winit_reg;
generate
for (gj = 0; gj < OB; gj = gj + 1) begin : g_wr
    assign m6_lo[8*gj +: 8] = m6_rot[8*gj +: 8] & {8{m6_lom[gj]}};
    // (without mv or m6_done: only m6_go's cycles write it; the parked word is picked first)
    assign m6_merge[8*gj +: 8] = {8{wwalk_reg && m6_valid && m6_same && m6_lom[gj]}};
    assign acc_next[8*gj +: 8] = (m6_rot[8*gj +: 8] & {8{acc_take && m6_newm[gj]}}) | (acc_reg[8*gj +: 8] & {8{acc_keep}});
end
endgenerate
// the member phase starts once the count is accepted, beside the allocation phase
// (registered: high the cycle after COUNT3 when n passed its checks, decided in COUNT3
// from the registered flags, so neither n's wide compares nor their routing sit before
// it, and the member reader's wide start comes from a flip-flop)
reg  walk_go = 1'b0;
wire n_big = n_reg > lenq_reg, n_cap = n_reg > OBJ_N, n_zero = n_reg == 32'd0;   // the count's checks
reg  [31:0] mstart = 32'd0;                                  // wire offset of the first member (from COUNT3 on)
reg  [31:0] m_words_reg = 32'd0;                             // input words from its word on (from walk_go on)
wire [31:0] mstart_n = {n_reg[29:0], 2'b00} + 32'd4;
wire [32:0] in_words = ({1'b0, in_len} + {1'b0, IB32} - 33'd1) >> IB_SH;   // input words
assign a_start = start;
assign a_words = (base[2:0] != 3'd0 || in_len < 32'd4) ? 32'd0 : in_words[31:0];
assign m_start = walk_go;
assign m_first = mstart >> IB_SH;
assign m_words = m_words_reg;
// member errors wait for the allocation phase's verdict (the CPU engine's order)
reg                  merr_reg = 1'b0;
reg [7:0]            merr_code = 8'd0;
reg [31:0]           merr_off = 32'd0;
reg [7:0]            err_next;
reg [31:0]           erroff_next;
integer j, jc;

always @* begin
    state_next = state_reg;
    wst_next = wst_reg;
    err_next = err_reg;
    erroff_next = erroff_reg;
    tw_en = t6_ok;
    tw_addr = t6_g;
    for (jc = 0; jc < TPC; jc = jc + 1) begin
        tw_data[OBJ_W*jc +: OBJ_W] = {t6_cls[CLS_BITS*jc +: CLS_BITS], t6_o[32*jc +: 32]};
    end

    // ---- allocation phase, checks, and the final verdict
    case (state_reg)
    S_COUNT: begin
        if (cnt_fire) begin
            state_next = S_COUNT2;
        end
    end
    S_COUNT2: state_next = S_COUNT3;
    S_COUNT3: begin
        if (n_big_reg) begin
            err_next = E_COUNT_TOO_LARGE; erroff_next = 32'd0; state_next = S_DONE;
        end else if (n_cap_reg) begin
            err_next = E_CAPACITY; erroff_next = 32'd0; state_next = S_DONE;
        end else if (n_zero_reg) begin
            state_next = S_CHECK0;
        end else begin
            state_next = S_TYPES;
        end
    end
    S_TYPES: begin
        if (t6_valid && t6_bad) begin
            state_next = S_TERR;
        end else if (t6_ok && t6_lastg) begin
            state_next = S_CHECK0;
        end
    end
    // the group's first error, from registers (a cycle after the group: the
    // combinational search in group_checks stays off the error register's path)
    S_TERR: begin
        err_next = t7_code; erroff_next = t7_eoff; state_next = S_DONE;
    end
    S_CHECK0: state_next = S_CHECK;
    S_CHECK: begin
        if (ck_long_reg) begin
            state_next = S_TRUNC0;
        end else if (ck_short_reg) begin
            err_next = E_TRAILING_BYTES; erroff_next = wpos_reg[31:0]; state_next = S_DONE;
        end else if (ck_base_reg) begin
            err_next = E_BAD_BASE; erroff_next = 32'd0; state_next = S_DONE;
        end else if (n_zero_reg) begin
            state_next = S_DONE;
        end else begin
            state_next = S_JOIN;
        end
    end
    // TRUNC0: member k's wire width; TRUNC1: its end; TRUNC2: past the input end?
    S_TRUNC0: state_next = S_TRUNC1;
    S_TRUNC1: state_next = S_TRUNC2;
    S_TRUNC2: state_next = S_TRUNC3;
    S_TRUNC3: begin
        if (tr_past_reg) begin
            err_next = E_TRUNCATED; erroff_next = tr_pos_reg[31:0]; state_next = S_DONE;
        end else if (tr_lastm_reg) begin
            err_next = E_TRUNCATED; erroff_next = len_reg; state_next = S_DONE;
        end else begin
            state_next = S_TRUNC0;
        end
    end
    // the allocation phase and the checks passed: the member phase's verdict
    S_JOIN: begin
        if (merr_reg) begin
            err_next = merr_code; erroff_next = merr_off; state_next = S_DONE;
        end else if (wst_reg == W_END) begin
            state_next = S_DONE;
        end
    end
    default: ;
    endcase

    // ---- member phase
    case (wst_reg)
    W_SKIP: begin
        if (skip_fire) wst_next = W_LOAD0;
    end
    // (the first two entries from the prefetch queue: ent_cur, ent_nxt)
    W_LOAD0: begin
        if (pq_n_reg != 4'd0) wst_next = W_LOAD1;
    end
    W_LOAD1: begin
        if (pq_n_reg != 4'd0) wst_next = W_LOAD2;
    end
    W_LOAD2: begin
        wst_next = W_WALK;
    end
    W_WALK: begin
        // (walk_reg is set here: left out, so the loop does not wait for its wide net)
        // (the final step leaves M6 when mv; mv is !pend_reg there, as no step behind the
        // final one waits for a reference: the wide mv net stays off this path)
        if (m5_err) begin
            wst_next = W_END;
        end else if (!pend_reg && m6_valid && m6_fin) begin
            wst_next = W_FLUSH;
        end
    end
    W_FLUSH: begin
        if (!pend_reg) wst_next = W_END;
    end
    default: ;
    endcase
    if (walk_go) wst_next = W_SKIP;
    // a decode that ended (an allocation-phase error) stops the walk a cycle later, from
    // the registered state: the error checks stay off the walk's control path (the
    // writer drops that cycle's write)
    if (state_reg == S_DONE) wst_next = W_IDLE;
end


// ---------------------------------------------------------------- registers
always @(posedge clk) begin
    wr_en_reg <= 1'b0;
    if (state_reg != S_IDLE && state_reg != S_DONE) cyc_reg <= cyc_reg + 64'd1;

    // ---------------- COUNT
    if (cnt_fire) n_reg <= window[31:0];
    lenq_reg <= (len_reg - 32'd4) >> 2;
    mstart <= mstart_n;
    m_words_reg <= lw_reg - (mstart >> IB_SH);   // (from mstart: a cycle later, ready at walk_go)
    n_big_reg <= n_big;
    n_cap_reg <= n_cap;
    n_zero_reg <= n_zero;
    walk_go <= state_reg == S_COUNT3 && !n_big_reg && !n_cap_reg && !n_zero_reg && !start && !rst;
    if (state_reg == S_COUNT3) begin
        trem_reg <= n_reg;
        trem_nz_reg <= !n_zero_reg;
        ttk_reg <= (n_reg >= TPC) ? IB5 : {n_reg[2:0], 2'b00};
        tfirst_reg <= 1'b1;
        tg_reg <= {ENT_BITS{1'b0}};
        top_reg <= 40'd0;
        wpos_reg <= {22'd0, n_reg, 2'b00} + 56'd4;
        tr_found_reg <= 1'b0;
    end

    // ---------------- allocation pipeline
    // T0: issue a group of type ids
    t1_valid <= t0_fire;
    if (t0_fire) begin
        t1_ids <= window[TPC*32-1:0];
        for (j = 0; j < TPC; j = j + 1) t1_mask[j] <= trem_reg > j;
        t1_first <= tfirst_reg;
        t1_lastg <= trem_reg <= TPC;
        t1_off <= pos_reg;
        t1_offq <= take_q_reg;
        t1_g <= tg_reg;
        tfirst_reg <= 1'b0;
        tg_reg <= tg_reg + 1'b1;
        trem_reg <= (trem_reg > TPC) ? trem_reg - TPC : 32'd0;
        trem_nz_reg <= trem_reg > TPC;
        ttk_reg <= (trem_reg >= 2 * TPC) ? IB5 : (trem_reg > TPC) ? {trem_reg[2:0] - TPC3, 2'b00} : 5'd0;
    end
    // T1: type ids -> classes
    t2_valid <= t1_valid;
    // (an id with high bits set whose low bits name a class leaves that class in t2_cls:
    // E_UNKNOWN_TYPE stops the decode before the class is used)
    t2_mask <= t1_mask; t2_lohit <= ty_hit; t2_hz0 <= ty_hz0; t2_hz1 <= ty_hz1; t2_cls <= ty_cls;
    t2_first <= t1_first; t2_lastg <= t1_lastg; t2_off <= t1_off + {26'd0, t1_offq}; t2_g <= t1_g;
    // T2: class rows
    t3_valid <= t2_valid;
    t3_mask <= t2_mask; t3_cls <= t2_cls; t3_lastg <= t2_lastg; t3_off <= t2_off; t3_g <= t2_g;
    for (j = 0; j < TPC; j = j + 1) begin
        t3_size[32*j +: 32] <= t2_hit[j] ? ca_size[32*j +: 32] : 32'd0;
        t3_wsize[32*j +: 32] <= t2_hit[j] ? ca_wsize[32*j +: 32] : 32'd0;
        t3_al8[j] <= t2_hit[j] && ca_align[32*j + 3];
        t3_eu[j] <= t2_mask[j] && !t2_hit[j];
        t3_er[j] <= t2_mask[j] && t2_first && (j == 0) && !t2_rootok;
    end
    // T3: prefix sums and pad counts
    t3b_valid <= t3_valid;
    t3b_mask <= t3_mask; t3b_eu <= t3_eu; t3b_er <= t3_er; t3b_cls <= t3_cls;
    t3b_sb <= t3_sb; t3b_se <= t3_se; t3b_st <= t3_st; t3b_np0 <= t3_np0; t3b_np1 <= t3_np1;
    t3b_wpre <= t3_wpre; t3b_wend <= t3_wend; t3b_ws <= t3_ws;
    t3b_lastg <= t3_lastg; t3b_off <= t3_off; t3b_g <= t3_g;
    // T3b: offsets inside the group for top[2] = 0 / 1
    t4_valid <= t3b_valid;
    t4_mask <= t3b_mask; t4_eu <= t3b_eu; t4_er <= t3b_er; t4_cls <= t3b_cls;
    for (j = 0; j < TPC; j = j + 1) begin
        t4_rel0[34*j +: 34] <= t3b_sb[34*j +: 34] + {29'd0, t3b_np0[3*j +: 3], 2'b00};
        t4_rel1[34*j +: 34] <= t3b_sb[34*j +: 34] + {29'd0, t3b_np1[3*j +: 3], 2'b00};
        t4_end0[34*j +: 34] <= t3b_se[34*j +: 34] + {29'd0, t3b_np0[3*j +: 3], 2'b00};
        t4_end1[34*j +: 34] <= t3b_se[34*j +: 34] + {29'd0, t3b_np1[3*j +: 3], 2'b00};
    end
    t4_d0 <= t3b_st + {29'd0, t3b_np0[3*(TPC-1) +: 3], 2'b00};
    t4_d1 <= t3b_st + {29'd0, t3b_np1[3*(TPC-1) +: 3], 2'b00};
    t4_wpre <= t3b_wpre; t4_wend <= t3b_wend; t4_wsum <= t3b_ws;
    t4_lastg <= t3b_lastg; t4_off <= t3b_off; t4_g <= t3b_g;
    // T4: the running image offset and wire position (the allocation loop)
    t5_valid <= t4_valid;
    t5_mask <= t4_mask; t5_eu <= t4_eu; t5_er <= t4_er; t5_cls <= t4_cls;
    t5_lastg <= t4_lastg; t5_off <= t4_off; t5_g <= t4_g;
    // T5: the comparisons
    t6_valid <= t5_valid;
    t6_mask <= t5_mask; t6_eu <= t5_eu; t6_er <= t5_er; t6_cls <= t5_cls;
    t6_lastg <= t5_lastg; t6_g <= t5_g;
    t6_bad <= |(t5_mask & (t5_eu | t5_er | t5_eimg | t5_ecap));
    t7_code <= t6_code;
    t7_eoff <= t6_eoff;
    t6_eimg <= t5_eimg;
    t6_ecap <= t5_ecap;
    for (j = 0; j < TPC; j = j + 1) begin
        t6_tr[j] <= t5_we[56*j +: 56] > {24'd0, len_reg};
        t6_o[32*j +: 32] <= t5_o[40*j +: 32];
        t6_eo[32*j +: 32] <= t5_off + 32'd4 * j;
        t6_ws[34*j +: 34] <= t5_ws[56*j +: 34];
    end
    for (j = 0; j < TPC; j = j + 1) begin
        t5_o[40*j +: 40] <= top_reg + {6'd0, top_reg[2] ? t4_rel1[34*j +: 34] : t4_rel0[34*j +: 34]};
        t5_e[40*j +: 40] <= top_reg + {6'd0, top_reg[2] ? t4_end1[34*j +: 34] : t4_end0[34*j +: 34]};
        t5_ws[56*j +: 56] <= wpos_reg + {22'd0, t4_wpre[34*j +: 34]};
        t5_we[56*j +: 56] <= wpos_reg + {22'd0, t4_wend[34*j +: 34]};
    end
    if (t4_valid) begin
        top_reg <= top_reg + {6'd0, top_reg[2] ? t4_d1 : t4_d0};
        wpos_reg <= wpos_reg + {22'd0, t4_wsum};
    end
    // T6: the first truncated object (the table write is tw_en)
    if (t6_ok && t6_trf && !tr_found_reg) begin
        tr_found_reg <= 1'b1;
        tr_cls_reg <= t6_trc;
        tr_pos_reg <= t6_trp;
    end
    // CHECK's comparisons (wpos and top are final a cycle before CHECK0)
    ck_long_reg <= wpos_reg > {24'd0, len_reg};
    ck_short_reg <= wpos_reg < {24'd0, len_reg};
    // (base + top past the pointer range: top against the room above base, registered
    // from base_reg, fixed since start, so the check is one comparison, no adder)
    room_reg <= (PTR_BYTES == 4) ? {32'd0, 33'h100000000 - {1'b0, base_reg[31:0]}} : {1'b0, ~base_reg};
    ck_base_reg <= (PTR_BYTES == 4 && base_reg[63:32] != 32'd0) || {25'd0, top_reg} > room_reg;

    // ---------------- TRUNC
    if (state_reg == S_CHECK) tr_k_reg <= 16'd0;
    if (state_reg == S_TRUNC0) begin
        tr_wl_reg <= tr_wl;
        tr_nwire_reg <= tr_nwire;
    end
    if (state_reg == S_TRUNC1) tr_end_reg <= tr_pos_reg + (34'd1 << tr_wl_reg);
    if (state_reg == S_TRUNC2) begin
        tr_past_reg <= tr_end_reg > {2'b00, len_reg};
        tr_lastm_reg <= tr_k_reg + 16'd1 >= tr_nwire_reg;
    end
    if (state_reg == S_TRUNC3) begin
        tr_pos_reg <= tr_end_reg;
        tr_k_reg <= tr_k_reg + 16'd1;
    end

    // ---------------- allocation progress, seen by the member phase
    if (tw_en) ent_done_reg <= ent_done_reg + 1'b1;
    if (t6_ok && t6_lastg) alloc_fin_reg <= 1'b1;
    // the walk's prefetch: one entry read a cycle into the RAM's latch, then its output
    // register (wq2), then into the queue; the walk takes one at each of LOAD0, LOAD1 and
    // a step crossing into the next entry
    pf_v_reg <= pf_issue;
    pf_v2_reg <= pf_v_reg;
    if (pf_issue) pf_rd_reg <= pf_rd_reg + 1'b1;
    if (pf_v2_reg) pq_t_reg <= pq_t_reg + 3'd1;
    if (pq_pop) pq_h_reg <= pq_h_reg + 3'd1;
    // (both counts for "the walk takes an entry" and "it does not" come from registers:
    // pq_pop, late in the cycle, only selects)
    pq_n_reg <= pq_pop ? pq_n_reg + {3'd0, pf_v2_reg} - 4'd1 : pq_n_reg + {3'd0, pf_v2_reg};
    pf_cnt_reg <= pq_pop ? pf_cnt_reg + {3'd0, pf_issue} - 4'd1 : pf_cnt_reg + {3'd0, pf_issue};
    // (off a cycle after the walk ends: one more entry read is harmless, and the enable
    // stays off the walk's control path)
    if (wst_reg == W_END || wst_reg == W_IDLE) pf_on_reg <= 1'b0;
    if (walk_go) pf_on_reg <= 1'b1;
    // a step may issue when the queue holds an entry for a crossing: registered a cycle
    // ahead, so with one entry of slack (at most one is taken a cycle)
    tab_ok_reg <= pq_n_reg >= 4'd2;
    rwait_reg <= walk_reg && (mv ? wait_m1b : wait_m1c);
    wq_b <= mv ? ref_flags(m1a_valid, m1a_rv, m1a_r, ent_done_reg) : ref_flags(m1b_valid, m1b_rv, m1b_r, ent_done_reg);
    wq_c <= mv ? ref_flags(m1b_valid, m1b_rv, m1b_r, ent_done_reg) : ref_flags(m1c_valid, m1c_rv, m1c_r, ent_done_reg);
    wq_tw <= tw_en;
    mv_q <= mv;
    if (m5_fail) begin
        merr_reg <= 1'b1; merr_code <= m5_ecode; merr_off <= m5_eat;
    end

    // ---------------- SKIP, LOAD: to the first member; the walk's first entries
    if (walk_go) begin
        w_act_reg <= 1'b0;
        w_nb_reg <= {{6-IB_SH{1'b0}}, mstart[IB_SH-1:0]};
    end
    if (wst_reg == W_LOAD0 && pq_pop) ent_cur <= pq_head;
    if (wst_reg == W_LOAD1 && pq_pop) ent_nxt <= pq_head;
    if (load2_reg) begin
        w_act_reg <= 1'b1;
        w_i_reg <= 32'd0;
        w_lasto_reg <= (n_reg == 32'd1);
        w_rem_reg <= n_reg - 32'd1;
        w_c_reg <= nx_cls;
        w_s_reg <= 16'd0;
        w_o_reg <= ent_cur[31:0];
        w_nb_reg <= sb_nb;
        w_last_reg <= sb_last;
    end
    if (winit_reg) begin
        accw_reg <= 32'd0;
        pend_reg <= 1'b0;
    end

    // ---------------- M0: issue a step (the walk loop); a step issued while the member
    // pipeline is frozen waits in the slot, which M1 takes first
    if (w_fire && !mv) k_step <= m0_step;
    k_full_reg <= !mv && (k_full_reg || w_fire);
    if (mv) begin
        m1_valid <= k_full_reg || w_fire;
        {m1_fin, m1_win, m1_c, m1_s, m1_a, m1_len, m1_pos, m1_posq, m1_rv, m1_roff, m1_rtgt} <= k_full_reg ? k_step : m0_step;
    end
    if (w_fire) begin
        if (w_last_reg) begin
            if (w_lasto_reg) begin
                w_act_reg <= 1'b0;
            end else begin
                w_i_reg <= w_i_reg + 32'd1;
                w_lasto_reg <= (w_rem_reg == 32'd1);
                w_rem_reg <= w_rem_reg - 32'd1;
                w_c_reg <= nx_cls;
                w_o_reg <= nx_obj[31:0];
                w_s_reg <= 16'd0;
                w_nb_reg <= sb_nb;
                w_last_reg <= sb_last;
                if (w_cross) begin
                    ent_cur <= ent_nxt;
                    ent_nxt <= pq_head;
                end
            end
        end else begin
            w_s_reg <= w_s_reg + 16'd1;
            w_nb_reg <= sa_nb;
            w_last_reg <= sa_last;
        end
    end
    if (mv) begin
        // M1 -> M1a -> M1b -> M1c (the table copies are read at the edge into M1c)
        m1a_valid <= m1_valid; m1a_rv <= m1_rv; m1a_r <= m1_r;
        m1a_p <= {m1_fin, m1_win, m1_c, m1_s, m1_a, m1_len, m1_pos + {26'd0, m1_posq}, m1_roff, m1_rtgt};
        m1b_valid <= m1a_valid; m1b_rv <= m1a_rv; m1b_r <= m1a_r; m1b_p <= m1a_p;
        m1c_valid <= m1b_valid; m1c_rv <= m1b_rv; m1c_r <= m1b_r; m1c_p <= m1b_p;
        // M1c -> M2
        m2_valid <= m1c_valid; m2_fin <= m1c_fin; m2_win <= m1c_win; m2_c <= m1c_c; m2_s <= m1c_s;
        m2_a <= m1c_a; m2_len <= m1c_len; m2_rv <= m1c_rv; m2_rtgt <= m1c_rtgt;
        m2_hval <= hdr_regs[m1c_c];
        for (j = 0; j < NREF; j = j + 1) begin
            m2_eoff[32*j +: 32] <= m1c_pos + {27'd0, m1c_roff[5*j +: 5]};
            m2_null[j] <= m1c_r[32*j +: 32] == 32'hffffffff;
            // (r >= n: the walk runs only with n <= OBJ_N, so n fits OBJ_BITS + 1 bits and
            // a short comparison beside an OR of r's high bits does)
            m2_oob[j] <= m1c_r[32*j + OBJ_BITS + 1 +: 31 - OBJ_BITS] != {31-OBJ_BITS{1'b0}} ||
                         m1c_r[32*j +: OBJ_BITS + 1] >= n_reg[OBJ_BITS:0];
            m2_zero[j] <= m1c_r[32*j +: 32] == 32'd0;
            m2_rsub[TPC_W*j +: TPC_W] <= m1c_r[32*j +: TPC_W];
        end
        // M2 -> M3
        m3_valid <= m2_valid; m3_fin <= m2_fin; m3_win <= m2_win; m3_c <= m2_c; m3_s <= m2_s;
        m3_a <= m2_a; m3_len <= m2_len; m3_eoff <= m2_eoff; m3_rv <= m2_rv; m3_null <= m2_null;
        m3_oob <= m2_oob; m3_zero <= m2_zero; m3_rtgt <= m2_rtgt; m3_hval <= m2_hval;
        m3_tcls <= m2_tcls; m3_toff <= m2_toff;
        // M3 -> M4
        m4_valid <= m3_valid; m4_fin <= m3_fin; m4_win <= m3_win; m4_a <= m3_a; m4_len <= m3_len;
        m4_eoff <= m3_eoff; m4_eref <= m3_eref; m4_etype <= m3_etype; m4_ebase <= m3_ebase;
        m4_val <= m3_val; m4_hval <= m3_hval & PTR_MASK; m4_sel <= s3_sel;
        // M4 -> M5 (an erring step goes no further; its registered error stops the walk)
        m5_valid <= m4_valid && !m4_err;
        m5_err <= m4_valid && m4_err;
        m5_ecode <= m4_code;
        m5_eat <= m4_errat;
        m5_fin <= m4_fin;
        m5_frag <= m4_frag;
        m5_a <= m4_a;
        m5_cross <= m4_endlane[OUT_SHIFT];
        // M5 -> M5b
        m5b_valid <= m5_valid; m5b_fin <= m5_fin; m5b_rot <= m5_rot; m5b_a <= m5_a; m5b_cross <= m5_cross;
        // M5b -> M6
        m6_valid <= m5b_valid; m6_fin <= m5b_fin; m6_rot <= m5b_rot2;
        m6_cross <= m5b_cross;
        for (j = 0; j < OB; j = j + 1) begin
            m6_lom[j] <= j >= m5b_lane;
            // a fragment that completes its word leaves the accumulator its wrapped bytes
            m6_newm[j] <= m5b_cross ? j < m5b_lane : j >= m5b_lane;
        end
        // (accw_reg's parity next: a step in a new word adds one unless it also crosses)
        m6_same <= m5b_a[OUT_SHIFT] == (m6_go ? accw_reg[0] ^ (m6_same == m6_cross) : winit_reg ? 1'b0 : accw_reg[0]);
    end
    m6_done <= !mv && (m6_done || m6_go);   // (a move brings M6 a new step)
    // M6: image writer. The write address and data are chosen without enables (few
    // cases, registered selects); wr_en says when. The accumulator's bits are
    // rot & take[byte] | acc & keep (acc_next): one LUT each, the selects shared.
    if (winit_reg || m6_go) acc_reg <= acc_next;
    wr_addr_reg <= pend_reg ? pend_addr : accw_reg;
    wr_data_reg <= pend_reg ? pend_data : acc_reg | (m6_rot & m6_merge);
    pend_addr <= accw_reg + 32'd1;
    pend_data <= m6_lo;
    if ((wst_reg == W_WALK || wst_reg == W_FLUSH) && pend_reg) begin
        wr_en_reg <= 1'b1;
        pend_reg <= 1'b0;
    end else if (m6_go) begin
        // a fragment in the accumulator's word (m6_same) writes the word when it completes
        // it; one in the next word (an alignment gap crossed a word boundary) writes the
        // complete accumulator, and if it also completes its own word, that word is parked
        // (pend) and written next cycle while the pipeline holds
        wr_en_reg <= m6_cross || !m6_same;
        if (!m6_same && m6_cross) pend_reg <= 1'b1;
        accw_reg <= accw_reg + {30'd0, !m6_same && m6_cross, m6_same == m6_cross};
    end else if (wst_reg == W_FLUSH && top_reg[OUT_SHIFT-1:0] != {OUT_SHIFT{1'b0}}) begin
        wr_en_reg <= 1'b1;
    end

    if (state_reg == S_DONE) wr_en_reg <= 1'b0;
    state_reg <= state_next;
    wst_reg <= wst_next;
    walk_reg <= wst_next == W_WALK;
    wwalk_reg <= wst_next == W_WALK;
    load2_reg <= wst_next == W_LOAD2;
    winit_reg <= wst_reg == W_LOAD1 && pq_n_reg != 4'd0 && state_reg != S_DONE;   // (= load2_reg)
    err_reg <= err_next;
    erroff_reg <= erroff_next;

    // ---------------- start
    if (start) begin
        len_reg <= in_len; base_reg <= base; base0_reg <= (base == 64'd0); root_reg <= root_cls;
        maxim_reg <= (max_image > 64'h00000000ffffffff) ? 33'h0ffffffff : max_image[32:0];
        n_reg <= 32'd0; cyc_reg <= 64'd0;
        err_reg <= 8'd0; erroff_reg <= 32'd0;
        top_reg <= 40'd0;
        lw_reg <= in_words[31:0];
        ttk_reg <= 5'd4;
        ent_done_reg <= {ENT_BITS+1{1'b0}}; alloc_fin_reg <= 1'b0; tab_ok_reg <= 1'b0; rwait_reg <= 1'b0;
        pf_on_reg <= 1'b0; pf_rd_reg <= {ENT_BITS+1{1'b0}}; pf_v_reg <= 1'b0; pf_v2_reg <= 1'b0; pf_cnt_reg <= 4'd0;
        pq_n_reg <= 4'd0; pq_h_reg <= 3'd0; pq_t_reg <= 3'd0;
        merr_reg <= 1'b0;
        wst_reg <= W_IDLE; walk_reg <= 1'b0; load2_reg <= 1'b0; winit_reg <= 1'b0;
        // (stale pipeline contents of an aborted decode are dropped)
        t1_valid <= 1'b0; t2_valid <= 1'b0; t3_valid <= 1'b0; t3b_valid <= 1'b0; t4_valid <= 1'b0; t5_valid <= 1'b0; t6_valid <= 1'b0;
        m1_valid <= 1'b0; k_full_reg <= 1'b0; m1a_valid <= 1'b0; m1b_valid <= 1'b0; m1c_valid <= 1'b0; m2_valid <= 1'b0; m3_valid <= 1'b0; m4_valid <= 1'b0;
        m5_valid <= 1'b0; m5_err <= 1'b0; m5b_valid <= 1'b0; m6_valid <= 1'b0; m6_done <= 1'b0;
        w_act_reg <= 1'b0; pend_reg <= 1'b0; w_i_reg <= 32'd0;
        state_reg <= S_COUNT;
        if (base[2:0] != 3'd0) begin
            err_reg <= E_BAD_BASE; state_reg <= S_DONE;
        end else if (in_len < 32'd4) begin
            err_reg <= E_TRUNCATED; state_reg <= S_DONE;
        end
    end
    if (rst) begin
        state_reg <= S_IDLE;
        err_reg <= 8'd0;
        erroff_reg <= 32'd0;
        cyc_reg <= 64'd0;
        wst_reg <= W_IDLE; walk_reg <= 1'b0; wwalk_reg <= 1'b0; load2_reg <= 1'b0; winit_reg <= 1'b0;
        rwait_reg <= 1'b0;
        pf_on_reg <= 1'b0;
        t1_valid <= 1'b0;
        w_act_reg <= 1'b0;
        m1_valid <= 1'b0;
        k_full_reg <= 1'b0;
        m5_err <= 1'b0;
        pend_reg <= 1'b0;
        wr_en_reg <= 1'b0;
        top_reg <= 40'd0;
    end
end

// ---------------------------------------------------------------- outputs
assign busy = state_reg != S_IDLE && state_reg != S_DONE;
assign done = state_reg == S_DONE;
assign err_code = err_reg;
assign err_offset = erroff_reg;
assign image_size = top_reg[31:0];
assign cycles = cyc_reg;
assign out_wr_en = wr_en_reg;
assign out_wr_addr = wr_addr_reg[OUT_ADDR_WIDTH-1:0];
assign out_wr_data = wr_data_reg;

// unused outputs of the table instances (every instance has all ports)
wire unused_ok = &{1'b0, window[WIN*8-1:TPC*32], ca_nwire, ca_anc, m4_len, tr_size, tr_align, tr_wsize, tr_anc, in_words[32],
                   sa_lo, sa_len, sa_rv, sa_roff, sa_rtgt, sa_sel, sb_lo, sb_len, sb_rv, sb_roff, sb_rtgt, sb_sel,
                   sm_nb, sm_last, sm_sel, s3_nb, s3_last, s3_lo, s3_len, s3_rv, s3_roff, s3_rtgt,
                   wr_addr_reg[31:OUT_ADDR_WIDTH]};

endmodule

`resetall
`default_nettype wire

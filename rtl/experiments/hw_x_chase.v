/*
 * hw_x_chase -- timing experiment (not a building block; only the experiment hw_x_front
 * instantiates it): the protobuf field walk as a chase over field ends computed ahead, to
 * measure how fast the loop a decoder cannot pipeline (this field's position -> the next
 * field's position) can be clocked on a given FPGA. docs/hardware.md "What the field loop
 * can reach" has the figures; scripts/synth.sh loops-ecp5 reproduces them; tb/loop_limits
 * checks that the circuit measured is a working walk.
 *
 * The stream comes in as W-byte words with, for each byte p of a word, what a decoder
 * working ahead of the loop (any number of pipeline stages, so not timed here) knows of a
 * field starting there (the tag at p, the varint after it):
 *   nx_p   one-hot, 2W bits: where the field ends, counted from the word's first byte, if
 *          before the end of the next word (0: further, a far skip);
 *   hx_p   one-hot, 2W bits: where its header ends (tag and length prefix: the first byte
 *          of the sub-message when the field is one);
 *   e_p    its end as an absolute byte offset (32 bits);
 *   z_p    its length prefix is 0 (an empty sub-message ends where its header does);
 *   n_p    the field number's low 5 bits; w_p the wire type is 2.
 * The loop holds the field's position as a one-hot over the front word (`at`) and emits a
 * field record at each step: the next position is the AND-OR of `at` with the nx (hx for a
 * sub-message) of the front word; a position in the next word drops the front word. A far
 * skip drops words until the end's word, then places `at` there.
 * With LOOKUP=1 the loop also knows the schema: the (message type, field number) of each
 * length-delimited field is looked up in a kind table (a sub-message type, or none), a
 * sub-message is entered (its end pushed, DEPTH frames) instead of skipped, and the type
 * pops back at its end -- the lookup a protobuf walk cannot take out of its loop, as the
 * next position depends on it. The table: entry {type, number} names sub-message type
 * (type * 3 + number) % 5 when (type - number) % 4 == 1 and number is not 0 (tb/loop_limits
 * has the same; number 0 is no field, so a walk can feed 0 for numbers the table cannot hold).
 * With LOOKUP=0 every field is skipped whole (the walk of one level; no frames).
 * THREADS=2 walks two streams at once, interleaved (C-slow: the multithreaded soft
 * multiprocessor's way to keep a loop's clock when its step does not fit a cycle): the
 * step is cut in two by a register (the AND-OR picks of the decodes at `at` and the kind
 * lookup, then the decisions), each stream's state circulates through both halves, and the
 * streams take turns, so each makes a step every other cycle, the pair one a cycle.
 * THREADS=3 cuts it in three (the queue's read and the picks, the kind lookup, the
 * decisions) over three streams. `in_tid` says whose word the input takes this cycle,
 * `o_tid` whose record it is.
 * A step a cycle (per stream): a field, a frame's end (a pop), or a word a far skip drops.
 * Not handled (a real walk must): groups, packed runs, bounds errors, a nesting deeper than
 * DEPTH (the loop stops, o_stuck), more than one frame ending at one byte in one step (a
 * step each). W=8 only: a sub-message's header must end within the next word (byte p + its
 * header < 16; simulation stops with $fatal otherwise); at W=16 every header does.
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module hw_x_chase #(
    parameter W = 16,          // bytes per input word
    parameter LOOKUP = 1,      // 1: the schema's kind lookup and the frame stack in the loop
    parameter DEPTH = 4,       // frames (LOOKUP=1)
    parameter THREADS = 1,     // streams walked at once, interleaved (1, 2 or 3)
    parameter XB = 0           // per-byte bits carried to the field's record (o_x) untouched,
                               // with its end and its frame's end (0: none of it is built)
) (
    input  wire             clk,
    input  wire             rst,
    // a word of stream in_tid is taken at the edge when in_valid and in_ready
    input  wire             in_valid,
    output wire             in_ready,
    output wire [1:0]       in_tid,
    input  wire [2*W*W-1:0] in_nx,
    input  wire [2*W*W-1:0] in_hx,
    input  wire [32*W-1:0]  in_e,
    input  wire [W-1:0]     in_z,
    input  wire [5*W-1:0]   in_n,
    input  wire [W-1:0]     in_w,
    /* verilator lint_off UNUSEDSIGNAL */
    input  wire [XW*W-1:0]  in_x,      // (XB = 0: unused)
    /* verilator lint_on UNUSEDSIGNAL */
    // one record a cycle: the field at o_pos of stream o_tid, its number's low bits, the
    // message type it belongs to, and whether it was entered as a sub-message
    output reg              o_valid,
    output reg  [1:0]       o_tid,
    output reg  [31:0]      o_pos,
    output reg  [4:0]       o_num,
    output reg  [2:0]       o_type,
    output reg              o_sub,
    output wire [THREADS-1:0] o_stuck, // sticky, per stream: nesting deeper than DEPTH
    // XB > 0: the field's in_x bits, its end (in_e at its byte) and the end of the frame it
    // is in (2^32 - 1 at the top level); 0 when XB = 0
    output wire [XW-1:0]    o_x,
    output wire [31:0]      o_e,
    output wire [31:0]      o_fend
);

localparam SW = 2 * W * W * 2 + 32 * W + W + 5 * W + W;   // one word's precomputed slot
localparam XW = XB > 0 ? XB : 1;
localparam WB = $clog2(W);
localparam CW = 32 - WB;                 // word index bits
localparam IB = $clog2(DEPTH);           // a frame's index
// a stream's words: a two-slot queue in place (slot[2t], slot[2t+1] for stream t), its
// state beside it. The state, packed (so THREADS > 1 passes it from one part of the step
// to the next):
//   v0, v1, sel   the queue's valid bits and front slot (the back one is never valid
//                 without the front)
//   at        one-hot: the field's byte in the front word;  wc  the front word's index
//   mtype, depth, fend, ftype, same_end  the message type and the frames (frame d ends at
//             fend[d], was entered from type ftype[d], ends where frame d-1 does: same_end)
//   at_end    the position is the top frame's end: pop next
//   skipping, skip_wc, skip_b   a far skip: dropping words up to skip_wc, then byte skip_b
//   stuck     nesting deeper than DEPTH
localparam O_V0 = 0, O_V1 = O_V0 + 1, O_SEL = O_V0 + 2,
           O_AT = O_V0 + 3, O_WC = O_AT + W, O_MT = O_WC + CW, O_DP = O_MT + 3,
           O_FE = O_DP + IB + 1, O_FT = O_FE + 32 * DEPTH, O_SE = O_FT + 3 * DEPTH,
           O_AE = O_SE + DEPTH, O_SK = O_AE + 1, O_SWC = O_SK + 1, O_SB = O_SWC + CW,
           O_ST = O_SB + WB, STW = O_ST + 1;
// the first part of the step: the picks at `at` (to_s, to_h, e, num, z, w2) and the kind
// of the field there (the lookup of the stream's type and the picked number; THREADS=3:
// in the second part)
localparam MW = 2 * W + 2 * W + 32 + 5 + 1 + 1 + 3;

function [2:0] kind_of; // sub-message type + 1, 0 for none
    input [2:0] t;
    input [4:0] n;
    reg [1:0] a;
    reg [7:0] b;
    begin
        a = t[1:0] - n[1:0];
        b = {5'd0, t} * 8'd3 + {3'd0, n};
        b = b % 8'd5 + 8'd1;
        kind_of = a == 2'd1 && n != 5'd0 ? b[2:0] : 3'd0;   // (number 0: no field)
    end
endfunction
// the table as a ROM: a schema's kind table is a memory, not arithmetic
reg  [2:0] kind_rom [0:255];
integer ti;
initial
    for (ti = 0; ti < 256; ti = ti + 1)
        kind_rom[ti] = kind_of(ti[7:5], ti[4:0]);

// ---------------------------------------------------------------- the state registers
// THREADS=1: st_a is the state, the picks are made from it in the step's cycle.
// THREADS=2: st_a holds the stream in the first half (its picks and kind into m_b), st_b
// the other stream in the second half; the step's result goes to st_a, st_a to st_b.
// THREADS=3: st_a the first third's stream (its picks into m_b), st_b the second's (the
// kind of its picked number added, into m_c), st_c the last's (the step).
reg  [STW-1:0] st_a, st_b, st_c;
reg  [MW-1:0]  m_b, m_c;
reg  [1:0]     ph;                       // the stream in the last part (THREADS > 1)
// the stream in the first part (the one in the last part THREADS - 1 cycles from now): a
// register, as it addresses the slots' LUT RAM (hundreds of cells)
reg  [1:0]     t_a;
reg  [SW-1:0]  slot [0:7];               // stream t's slots at 2t, 2t + 1
wire [STW-1:0] c_st = THREADS == 3 ? st_c : THREADS == 2 ? st_b : st_a;   // the state the step updates

// ---------------------------------------------------------------- first half: picks, lookup
reg  [MW-1:0] m_a;
always @* begin : picks
    reg  [SW-1:0]  front;
    reg  [W-1:0]   at;
    reg  [2*W-1:0] to_s, to_h;
    reg  [31:0]    e;
    reg  [4:0]     num;
    reg            z, w2;
    integer        p;
    front = slot[{t_a, st_a[O_SEL]}];
    at = st_a[O_AT +: W];
    to_s = 0; to_h = 0; e = 0; num = 0; z = 0; w2 = 0;
    for (p = 0; p < W; p = p + 1) begin
        to_s = to_s | ({2*W{at[p]}} & front[2*W*p +: 2*W]);
        to_h = to_h | ({2*W{at[p]}} & front[2*W*W + 2*W*p +: 2*W]);
        e = e | ({32{at[p]}} & front[4*W*W + 32*p +: 32]);
        z = z | (at[p] & front[4*W*W + 32*W + p]);
        num = num | ({5{at[p]}} & front[4*W*W + 33*W + 5*p +: 5]);
        w2 = w2 | (at[p] & front[4*W*W + 38*W + p]);
    end
    // (THREADS=3: the kind in the second part, below)
    m_a = {to_s, to_h, e, num, z, w2, LOOKUP && THREADS < 3 ? kind_rom[{st_a[O_MT +: 3], num}] : 3'd0};
end
// THREADS=3: the kind of the number picked in the first part, with that stream's type
wire [2:0]    k_b = LOOKUP ? kind_rom[{st_b[O_MT +: 3], m_b[5 +: 5]}] : 3'd0;
wire [MW-1:0] c_m = THREADS == 3 ? m_c : THREADS == 2 ? m_b : m_a;

// ---------------------------------------------------------------- second half: the step
wire [2*W-1:0] to_s = c_m[MW-1 -: 2*W];
wire [2*W-1:0] to_h = c_m[MW-2*W-1 -: 2*W];
wire [31:0]    e    = c_m[10 +: 32];
wire [4:0]     num  = c_m[5 +: 5];
wire           z    = c_m[4];
wire           w2   = c_m[3];
wire           vf   = c_st[O_SEL] ? c_st[O_V1] : c_st[O_V0];
wire           vb   = c_st[O_SEL] ? c_st[O_V0] : c_st[O_V1];
wire [W-1:0]   at   = c_st[O_AT +: W];
wire [CW-1:0]  wc   = c_st[O_WC +: CW];
wire [2:0]     mtype = c_st[O_MT +: 3];
// (LOOKUP=0: no frames; constants, so none of their logic is built)
wire [IB:0]    depth = LOOKUP ? c_st[O_DP +: IB + 1] : {IB+1{1'b0}};
wire [IB-1:0]  top  = depth[IB-1:0] - 1'b1;   // the top frame (depth > 0)
wire [IB-1:0]  nxt  = depth[IB-1:0];          // the frame a push fills (depth < DEPTH)
wire           at_end = LOOKUP ? c_st[O_AE] : 1'b0;
// the top frame's end, type and same-end bit (picked by compares: a variable part-select
// of a multiple of 3 is a multiplier to yosys)
reg  [31:0]    fend_top;
reg  [2:0]     ftype_top;
reg            same_top;
always @* begin : top_frame
    integer d;
    fend_top = 32'd0; ftype_top = 3'd0; same_top = 1'b0;
    for (d = 0; d < DEPTH; d = d + 1)
        if (top == d[IB-1:0]) begin
            fend_top = c_st[O_FE + 32 * d +: 32];
            ftype_top = c_st[O_FT + 3 * d +: 3];
            same_top = c_st[O_SE + d];
        end
end
wire           skipping = c_st[O_SK];
wire [CW-1:0]  skip_wc = c_st[O_SWC +: CW];
wire [WB-1:0]  skip_b = c_st[O_SB +: WB];
assign in_ready = !vb;
assign in_tid = THREADS > 1 ? ph : 2'd0;

wire [2:0]     k    = c_m[2:0];
wire           sub = w2 && k != 3'd0;
wire           stuck = sub && depth[IB];
wire [2*W-1:0] to = sub ? to_h : to_s;
wire           far = !sub && to_s == 0;
wire           nextw = to[2*W-1:W] != 0;
// a step (one into the next word drops the front word: its decodes are not needed before
// the next step, which waits for the word)
wire           go = vf && !skipping && !at_end && !stuck;
wire [CW-1:0]  e_wc = e[31:WB];
wire           far_here = skipping && vf && wc == skip_wc;
wire           drop = (go && !far && nextw) || (skipping && vf && !far_here);

// a word goes into the front slot when it is empty, else into the back one (empty:
// in_ready), which is the front next cycle when the front is dropped: not a choice on the
// late `drop`
wire slot_wr = vf ^ c_st[O_SEL];

reg  [STW-1:0] n_st;
always @* begin : step
    integer d;
    n_st = c_st;
    if (at_end) begin
        // leave the frame: the type it was entered from; the one below may end here too
        n_st[O_DP +: IB + 1] = depth - 1'b1;
        n_st[O_MT +: 3] = ftype_top;
        n_st[O_AE] = same_top;
    end else if (go) begin
        if (far)
            n_st[O_SK] = 1'b1;
        else
            n_st[O_AT +: W] = nextw ? to[2*W-1:W] : to[W-1:0];
        if (sub) begin
            n_st[O_MT +: 3] = k - 3'd1;
            n_st[O_DP +: IB + 1] = depth + 1'b1;
            n_st[O_AE] = z;
        end else
            n_st[O_AE] = LOOKUP && depth != 0 && e == fend_top;
    end else if (far_here) begin
        n_st[O_SK] = 1'b0;
        n_st[O_AT +: W] = {{W-1{1'b0}}, 1'b1} << skip_b;
    end
    if (stuck && vf && !skipping && !at_end) n_st[O_ST] = 1'b1;
    // what a far skip or a push keeps, written every cycle it may be needed (so their
    // enables are not the loop's late decisions): the skip's end while not skipping, the
    // frame a push would fill (the slot above the top, free) while there is one
    if (!skipping) begin
        n_st[O_SWC +: CW] = e_wc;
        n_st[O_SB +: WB] = e[WB-1:0];
    end
    if (LOOKUP && !depth[IB])
        for (d = 0; d < DEPTH; d = d + 1)
            if (nxt == d[IB-1:0]) begin
                n_st[O_FE + 32 * d +: 32] = e;
                n_st[O_FT + 3 * d +: 3] = mtype;
                n_st[O_SE + d] = depth != 0 && e == fend_top;
            end
    // the queue: drop the front word, take a word into the free slot
    if (drop) begin
        n_st[O_SEL] = !c_st[O_SEL];
        n_st[O_WC +: CW] = wc + 1'b1;
        if (c_st[O_SEL]) n_st[O_V1] = 1'b0; else n_st[O_V0] = 1'b0;
    end
    if (in_valid && in_ready) begin
        if (slot_wr) n_st[O_V1] = 1'b1; else n_st[O_V0] = 1'b1;
    end
end

// the step's record
reg  [WB-1:0] at_b;                      // `at` as a byte index
integer d;
always @* begin
    at_b = 0;
    for (d = 0; d < W; d = d + 1)
        at_b = at_b | ({WB{at[d]}} & d[WB-1:0]);
end

// (each stream's flag in its state: stream ph's in the last part's register, the others'
// in the parts before)
genvar gt;
generate
for (gt = 0; gt < THREADS; gt = gt + 1) begin : g_stuck
    assign o_stuck[gt] = gt == ph ? c_st[O_ST] : gt == t_a ? st_a[O_ST] : st_b[O_ST];
end
endgenerate

`ifndef SYNTHESIS
always @(posedge clk)
    if (!rst && go && sub && to_h == 0)
        $fatal(1, "hw_x_chase: a sub-message header ends past the next word (W=%0d)", W);
`endif

// the state after reset: empty queue, at byte 0, message type 0, no frames
wire [STW-1:0] st0 = {{STW - O_AT - W{1'b0}}, {{W-1{1'b0}}, 1'b1}, {O_AT{1'b0}}};

always @(posedge clk) begin
    if (rst) begin
        st_a <= st0; st_b <= st0; st_c <= st0; ph <= 2'd0;
        t_a <= THREADS == 1 ? 2'd0 : THREADS[1:0] - 2'd1;
        o_valid <= 1'b0;
    end else begin
        st_a <= n_st;
        if (THREADS > 1) begin
            st_b <= st_a; m_b <= m_a;
            ph <= ph == THREADS[1:0] - 2'd1 ? 2'd0 : ph + 2'd1;
            t_a <= t_a == THREADS[1:0] - 2'd1 ? 2'd0 : t_a + 2'd1;
        end
        if (THREADS == 3) begin
            st_c <= st_b; m_c <= {m_b[MW-1:3], k_b};
        end
        o_valid <= go; o_tid <= in_tid;
        o_pos <= {wc, at_b};
        o_num <= num; o_type <= mtype; o_sub <= sub;
    end
    if (in_valid && in_ready)
        slot[{in_tid, slot_wr}] <= {in_w, in_n, in_z, in_e, in_hx, in_nx};
end

// ---------------------------------------------------------------- the records' extras (XB > 0)
// in_x in a memory of its own beside the slots, picked at `at` in the first part and passed
// along with the picks, so the loop's own logic is the same with or without it
generate
if (XB > 0) begin : g_x
    reg  [XB*W-1:0] slot_x [0:7];
    reg  [XB-1:0]   x_a, x_b, x_c, r_x;
    reg  [31:0]     r_e, r_fend;
    always @* begin : pick_x
        reg [XB*W-1:0] fx;
        integer p;
        fx = slot_x[{t_a, st_a[O_SEL]}];
        x_a = {XB{1'b0}};
        for (p = 0; p < W; p = p + 1)
            x_a = x_a | ({XB{st_a[O_AT + p]}} & fx[XB*p +: XB]);
    end
    always @(posedge clk) begin
        if (in_valid && in_ready)
            slot_x[{in_tid, slot_wr}] <= in_x;
        x_b <= x_a;
        x_c <= x_b;
        r_x <= THREADS == 3 ? x_c : THREADS == 2 ? x_b : x_a;
        r_e <= e;
        r_fend <= depth != 0 ? fend_top : 32'hFFFF_FFFF;
    end
    assign o_x = r_x;
    assign o_e = r_e;
    assign o_fend = r_fend;
end else begin : g_no_x
    assign o_x = {XW{1'b0}};
    assign o_e = 32'd0;
    assign o_fend = 32'd0;
end
endgenerate

initial begin
    if ((W != 8 && W != 16) || DEPTH < 2 || (DEPTH & (DEPTH - 1)) != 0 || THREADS < 1 || THREADS > 3) begin
        $error("hw_x_chase: W = %0d, DEPTH = %0d, THREADS = %0d: want W 8 or 16, DEPTH a power of two, THREADS 1, 2 or 3", W, DEPTH, THREADS);
        $finish;
    end
end

endmodule

`resetall

/*
 * hw_pb_scan -- the protobuf field walk's decode-ahead stage: for every byte of a stream,
 * what a field starting at that byte would be (its tag, where its header and the field
 * end, or why it cannot be one), in a pipeline with no loop, so a walk behind it
 * (tb/loop_limits, experiments/hw_x_chase) only has to pick, at the field it stands on,
 * where the next one starts. Not yet instantiated by the generated core: it is the first
 * stage of the pipelined core docs/hardware.md "What the field loop can reach" describes
 * ("The decode-ahead stage" has its figures; experiments/hw_x_front runs it before a walk).
 *
 * Input: a stream as W-byte words (byte i of the stream at in_data[8*(i%W) +: 8] of word
 * i/W), in_last on its last word (bytes past the stream's end in that word: the
 * caller's; the scan reads them, and zeros past the word, as the stream's next bytes). A
 * word is decoded when the word after it has come (a header can run into it), the last
 * one at once; the stream's byte offsets start at 0 again after in_last.
 *
 * Output, a word a cycle in order, for each byte p of the word (stream offset o_pos + p),
 * the field whose tag would be at p, as the CPU engine reads it
 * (crates/cpu/src/protobuf/wire.rs):
 *   o_tl   the tag's length, 1..5 (5 when the tag is bad)
 *   o_wt   its wire type; o_n its field number's low NB bits; o_big the number >= 2^NB
 *   o_bad  0: a field header; 1: the tag is longer than 5 bytes or >= 2^32
 *          (VarintTooLong at p, or Truncated if the frame ends within p + 5); 2: field
 *          number 0 (FieldNumberZero at p); 3: wire type 0 or 2 and its varint or length
 *          prefix is too long (over 10 bytes, or a length prefix over 5: VarintTooLong at
 *          p + o_tl, or Truncated there if o_e is past the frame's end)
 *   o_e    where the field ends, as a stream offset (saturated at 2^32 - 1): tag, then
 *          the varint (type 0), 8 or 4 bytes (1, 5), the length prefix and that many
 *          bytes (2), nothing (3, 4, 6, 7); with o_bad 3, where the varint ends (at most
 *          10 bytes), so a walk tells a truncated varint (o_e past the frame's end) from
 *          an over-long one
 *   o_hx   one-hot, 2W bits: where the header ends, counted from the word's first byte
 *          (the tag, and for type 2 the length prefix: the first byte of the payload);
 *          always within this word and the next (W=16)
 *   o_hl   the header's length (o_hx as a count from p: the tag, and the length prefix)
 *   o_nx   one-hot, 2W bits: o_e counted from the word's first byte, if within this word
 *          and the next, else 0 (a far skip: use o_e)
 *   o_z    type 2 with a length of 0 (an empty payload ends where its header does)
 * Errors a walk finds from these and the frame's end, not decoded here: a truncated
 * header or value, a length past the frame's end, a wire type over 5, a group mismatch.
 *
 * Pipeline (registers after each): the window (this word and the next), the varint
 * decodes (the tag at each of the W bytes and a value at each of the W + 4 bytes after
 * one, hw_varint_decoder), the value picked after each tag, the header's and the field's
 * length, the end relative to the word, the absolute end (two stages: its low half, its
 * high half), then into an output queue (LUT RAM), read a cycle ahead into the output
 * register (the one-hot forms expanded after it). The pipeline never stalls: a word goes
 * in only when its stream's queue has room for it, so o_ready low stops the input instead.
 * STREAMS > 1 scans several streams at once (the interleaved walks of hw_x_chase
 * THREADS > 1): a word of any a cycle, in_tid saying whose; each stream has its waiting
 * word, offsets and queue, and the consumer names on o_tid_next the stream whose word the
 * output shows the next cycle (o_tid).
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module hw_pb_scan #(
    parameter W  = 16,      // bytes per word (16: every header, 15 bytes at most, ends within the next word)
    parameter NB = 5,       // field-number bits delivered per byte (o_n)
    parameter STREAMS = 1   // streams scanned at once (1..4), a word of any of them a cycle
) (
    input  wire              clk,
    input  wire              rst,
    // a word of stream in_tid (below STREAMS), taken at the edge when in_valid and in_ready
    // (in_ready depends on in_tid; low in reset, and in a cycle any stream's last word goes on)
    input  wire              in_valid,
    output wire              in_ready,
    input  wire [1:0]        in_tid,
    input  wire [8*W-1:0]    in_data,
    input  wire              in_last,
    // the output shows the next word of stream o_tid, the stream the consumer named on
    // o_tid_next the cycle before (registered: the queue is read a cycle ahead); popped when
    // o_valid and o_ready
    input  wire [1:0]        o_tid_next,
    output wire [1:0]        o_tid,
    output wire              o_valid,
    input  wire              o_ready,
    output wire [31:0]       o_pos,     // stream offset of the word's first byte
    output wire              o_last,    // the stream's last word
    output wire [3*W-1:0]    o_tl,
    output wire [3*W-1:0]    o_wt,
    output wire [NB*W-1:0]   o_n,
    output wire [W-1:0]      o_big,
    output wire [2*W-1:0]    o_bad,
    output wire [32*W-1:0]   o_e,
    output wire [2*W*W-1:0]  o_hx,
    output wire [4*W-1:0]    o_hl,
    output wire [2*W*W-1:0]  o_nx,
    output wire [W-1:0]      o_z
);

initial begin
    if (W != 16) begin
        $error("Error: hw_pb_scan: W must be 16 (instance %m)");
        $finish;
    end
    if (NB < 1 || NB > 29) begin
        $error("Error: hw_pb_scan: NB must be in 1..29 (instance %m)");
        $finish;
    end
    if (STREAMS < 1 || STREAMS > 4) begin
        $error("Error: hw_pb_scan: STREAMS must be in 1..4 (instance %m)");
        $finish;
    end
end

localparam Q = W + 5;   // value decodes at bytes 1..W+4 (after a tag of 1..5 bytes)

// the output queue: QD words a stream, one LUT RAM of 16 words (32 for 3 or 4 streams). A
// word holds its stream's credit from entering the pipeline to two cycles after it leaves
// the queue (the counts take the entries and exits a cycle late, so a queue admits QD - 1),
// about 11 cycles: one stream taking a word a cycle needs 12, each of two half, three a third
localparam QD = STREAMS == 1 ? 16 : 8;
localparam QB = STREAMS == 1 ? 4 : 3;
localparam TS = 4;      // stream numbers (2 bits); the per-stream state is kept for all, unused ones constant
reg  v_a, v_b, v_p, v_c, v_d;
// a word of stream t may enter the pipeline (stage a) when t's queue will have room for it
// per-stream counters and indexes below: 5 bits (QB + 1 used) in a byte each (a stride of
// 5 would be a multiplier to yosys)
/* verilator lint_off UNUSEDSIGNAL */
reg  [8*TS-1:0] occ;                     // per stream: words in the pipeline and the queue
reg  [TS-1:0]   room;                    // a register: occ will be below QD - 1
// the entries and exits the counts take a cycle late (their compares were a loop with the
// input's ready and the output's pop in it)
reg             emit_r, pop_r;
reg  [1:0]      enter_tid_r, pop_tid_r;

// ---------------------------------------------------------------- the window
// pend: each stream's word waiting for the one after it; a last word goes on at once (a
// flush, before any input that cycle) with zeros after it
reg  [8*W-1:0] pend [0:TS-1];
reg  [31:0]    pend_pos [0:TS-1];
reg  [TS-1:0]  pend_v, pend_last;
localparam AW = Q + 9;  // window bytes: this word and the next up to the last value decode's tenth byte
reg  [8*AW-1:0] a_win;                    // this word, then the next
reg  [31:0]    a_pos;
reg            a_last;
reg  [1:0]     a_tid;
// the stream a flush takes this cycle (the lowest one whose last word waits and has room),
// one-hot (its binary form and decodes were the critical path with three streams)
wire [TS-1:0]  fcand = pend_v & pend_last & room;
wire [TS-1:0]  fsel = fcand & ~(fcand - 1'b1);
wire           flush = fcand != {TS{1'b0}};
reg  [1:0]     f_tid;
always @* begin : flushes
    integer t;
    f_tid = 2'd0;
    for (t = 0; t < TS; t = t + 1)
        if (fsel[t]) f_tid = t[1:0];
end
wire [1:0] i_tid = STREAMS == 1 ? 2'd0 : in_tid;
// (a word taken while none of its stream is pending enters nothing yet)
assign in_ready = !rst && !flush && !(pend_v[i_tid] && pend_last[i_tid]) && (room[i_tid] || !pend_v[i_tid]);
wire take = in_valid && in_ready;
wire emit = flush || (take && pend_v[i_tid]);
wire [1:0] enter_tid = flush ? f_tid : i_tid;   // the stream of the word that enters

// the window's registers load every cycle (v_a says whether it holds a word): an enable
// from the input's handshake, fanned out to them, was the one-stream critical path
reg  [8*W-1:0] i_pend;
reg  [31:0]    i_pos;
always @* begin : picks_in
    integer t;
    i_pend = {8*W{1'b0}};
    i_pos = 32'd0;
    for (t = 0; t < TS; t = t + 1) begin
        i_pend = i_pend | ({8*W{flush ? fsel[t] : i_tid == t[1:0]}} & pend[t]);
        i_pos = i_pos | ({32{flush ? fsel[t] : i_tid == t[1:0]}} & pend_pos[t]);
    end
end
always @(posedge clk) begin : window
    integer t;
    a_win <= {flush ? {8*(AW-W){1'b0}} : in_data[8*(AW-W)-1:0], i_pend};
    a_pos <= i_pos;
    a_last <= flush;
    a_tid <= enter_tid;
    if (rst) begin
        v_a <= 1'b0;
        pend_v <= {TS{1'b0}};
        pend_last <= {TS{1'b0}};
        for (t = 0; t < TS; t = t + 1)
            pend_pos[t] <= 32'd0;
    end else begin
        v_a <= emit;
        for (t = 0; t < TS; t = t + 1)
            if (flush && fsel[t]) begin
                pend_v[t] <= 1'b0;
                pend_pos[t] <= 32'd0;
            end else if (!flush && take && i_tid == t[1:0]) begin
                if (pend_v[t])
                    pend_pos[t] <= pend_pos[t] + W;
                pend[t] <= in_data;
                pend_v[t] <= 1'b1;
                pend_last[t] <= in_last;
            end
    end
end

// ---------------------------------------------------------------- the varint decodes
wire [63:0] t_val [0:W-1];
wire [3:0]  t_len [0:W-1];
wire [W-1:0] t_ok, t_over32;
wire [63:0] q_val [0:Q-1];
wire [3:0]  q_len [0:Q-1];
wire [Q-1:0] q_ok;
genvar gi;
generate
    for (gi = 0; gi < W; gi = gi + 1) begin : g_tag
        wire inc_unused, over_unused;
        hw_varint_decoder #(.AVAIL_WIDTH(4)) dec (
            .in_bytes(a_win[8*gi +: 80]), .avail_bytes(4'd10), .value(t_val[gi]),
            .length(t_len[gi]), .ok(t_ok[gi]), .incomplete(inc_unused),
            .overlong(over_unused), .over32(t_over32[gi]));
    end
    // (q = 0 is never after a tag: its decoder is left out)
    assign q_val[0] = 64'd0;
    assign q_len[0] = 4'd0;
    assign q_ok[0] = 1'b0;
    for (gi = 1; gi < Q; gi = gi + 1) begin : g_val
        wire inc_unused, over_unused, o32_unused;
        hw_varint_decoder #(.AVAIL_WIDTH(4)) dec (
            .in_bytes(a_win[8*gi +: 80]), .avail_bytes(4'd10), .value(q_val[gi]),
            .length(q_len[gi]), .ok(q_ok[gi]), .incomplete(inc_unused),
            .overlong(over_unused), .over32(o32_unused));
    end
endgenerate

// what goes through the later stages unchanged (the "side"): the word's offset, last bit
// and stream, per byte the tag's length (5 when bad), wire type, number bits, number >= 2^NB
localparam SD = 35 + 7 * W + NB * W;
localparam S_TID = 33, S_TL = 35, S_WT = S_TL + 3 * W, S_N = S_WT + 3 * W, S_BIG = S_N + NB * W;
reg  [SD-1:0]   b_side, c_side, d_side;   // (and p_side)
// per tag byte p: bad, number 0, the length one-hot (bit k-1: k bytes)
reg  [W-1:0]    b_tbad, b_nz;
reg  [5*W-1:0]  b_t1h;
// per value byte q: the varint's length (10 when longer), over 10 bytes, its low 35 bits
reg  [4*Q-1:0]  b_vl;
reg  [Q-1:0]    b_vover, b_vlong, b_vzero;   // (long: over 5 bytes, too long a length prefix)
reg  [35*Q-1:0] b_v;
always @(posedge clk) begin : decodes
    integer p;
    if (rst) begin
        v_b <= 1'b0;
    end else begin
        v_b <= v_a;
        b_side[34:0] <= {a_tid, a_last, a_pos};
        for (p = 0; p < W; p = p + 1) begin
            b_tbad[p] <= !t_ok[p] || t_over32[p];
            b_nz[p] <= t_val[p][31:3] == 29'd0;
            b_side[S_TL + 3*p +: 3] <= (!t_ok[p] || t_over32[p]) ? 3'd5 : t_len[p][2:0];
            b_t1h[5*p +: 5] <= (!t_ok[p] || t_over32[p]) ? 5'b10000 : 5'b00001 << (t_len[p][2:0] - 3'd1);
            b_side[S_WT + 3*p +: 3] <= t_val[p][2:0];
            b_side[S_N + NB*p +: NB] <= t_val[p][3 +: NB];
            b_side[S_BIG + p] <= (t_val[p][31:3] >> NB) != 29'd0;
        end
        for (p = 0; p < Q; p = p + 1) begin
            b_vl[4*p +: 4] <= q_ok[p] ? q_len[p] : 4'd10;
            b_vover[p] <= !q_ok[p];
            b_vlong[p] <= !q_ok[p] || q_len[p] > 4'd5;
            b_vzero[p] <= q_val[p][34:0] == 35'd0;
            b_v[35*p +: 35] <= q_val[p][34:0];
        end
    end
end

// ---------------------------------------------------------------- the value after each tag
// picked alone in a stage (a 5-way AND-OR by the tag length's one-hot): the picks and the
// arithmetic on them in one cycle were the critical path
reg  [4*W-1:0]  p_vl;
reg  [W-1:0]    p_vover, p_vlong, p_vzero, p_tbad, p_nz;
reg  [35*W-1:0] p_v;
reg  [SD-1:0]   p_side;
always @(posedge clk) begin : picks
    integer p, k;
    reg [3:0]  vl;
    reg        vover, vlong, vzero;
    reg [34:0] v;
    if (rst) begin
        v_p <= 1'b0;
    end else begin
        v_p <= v_b;
        p_side <= b_side;
        p_tbad <= b_tbad;
        p_nz <= b_nz;
        for (p = 0; p < W; p = p + 1) begin
            vl = 4'd0; vover = 1'b0; vlong = 1'b0; vzero = 1'b0; v = 35'd0;
            for (k = 1; k <= 5; k = k + 1) begin
                vl = vl | ({4{b_t1h[5*p + k - 1]}} & b_vl[4*(p + k) +: 4]);
                vover = vover | (b_t1h[5*p + k - 1] & b_vover[p + k]);
                vlong = vlong | (b_t1h[5*p + k - 1] & b_vlong[p + k]);
                vzero = vzero | (b_t1h[5*p + k - 1] & b_vzero[p + k]);
                v = v | ({35{b_t1h[5*p + k - 1]}} & b_v[35*(p + k) +: 35]);
            end
            p_vl[4*p +: 4] <= vl;
            p_vover[p] <= vover;
            p_vlong[p] <= vlong;
            p_vzero[p] <= vzero;
            p_v[35*p +: 35] <= v;
        end
    end
end

// c_small: where the field ends counted from the word's first byte, but for a length
// prefix's value (c_len, added next); c_hl: the header's length (tag, and a length prefix)
reg  [5*W-1:0]  c_small;
reg  [4*W-1:0]  c_hl;
reg  [35*W-1:0] c_len;
reg  [2*W-1:0]  c_bad;
reg  [W-1:0]    c_z;
always @(posedge clk) begin : values
    integer p;
    reg [2:0]  tl, wt;
    reg [3:0]  vl;
    reg        vbad;
    reg [4:0]  hl, fl;
    if (rst) begin
        v_c <= 1'b0;
    end else begin
        v_c <= v_p;
        c_side <= p_side;
        for (p = 0; p < W; p = p + 1) begin
            tl = p_side[S_TL + 3*p +: 3];
            wt = p_side[S_WT + 3*p +: 3];
            vl = p_vl[4*p +: 4];
            vbad = (wt == 3'd0 && p_vover[p]) || (wt == 3'd2 && p_vlong[p]);
            hl = {2'd0, tl} + (wt == 3'd2 ? {1'b0, vl} : 5'd0);
            case (wt)
                3'd0: fl = {2'd0, tl} + {1'b0, vl};
                3'd1: fl = {2'd0, tl} + 5'd8;
                3'd2: fl = {2'd0, tl} + {1'b0, vl};
                3'd5: fl = {2'd0, tl} + 5'd4;
                default: fl = {2'd0, tl};
            endcase
            c_small[5*p +: 5] <= p[4:0] + fl;
            c_hl[4*p +: 4] <= hl[3:0];
            c_len[35*p +: 35] <= (wt == 3'd2 && !vbad) ? p_v[35*p +: 35] : 35'd0;
            c_z[p] <= wt == 3'd2 && !vbad && p_vzero[p];
            c_bad[2*p +: 2] <= p_tbad[p] ? 2'd1 : p_nz[p] ? 2'd2 : vbad ? 2'd3 : 2'd0;
        end
    end
end

// ---------------------------------------------------------------- the end, relative
reg  [36*W-1:0] d_rel;
reg  [4*W-1:0]  d_hl;
reg  [2*W-1:0]  d_bad;
reg  [W-1:0]    d_z;
always @(posedge clk) begin : rel
    integer p;
    if (rst) begin
        v_d <= 1'b0;
    end else begin
        v_d <= v_c;
        d_side <= c_side;
        d_hl <= c_hl;
        d_bad <= c_bad;
        d_z <= c_z;
        for (p = 0; p < W; p = p + 1)
            d_rel[36*p +: 36] <= {31'd0, c_small[5*p +: 5]} + {1'b0, c_len[35*p +: 35]};
    end
end

// ---------------------------------------------------------------- absolute end, the queue
// Each word's results go into a queue of QD words (LUT RAM) instead of a last stage of
// registers, and a word enters the pipeline only when the queue has room for every word in
// it: the pipeline never stalls, so no enable reaches its registers (a stall enable,
// fanned out to all of them, was its critical path). The one-hot ends are stored as
// offsets (5 and 6 bits a byte instead of 64) and expanded as they leave.
localparam QW = SD + 2 * W + W + 32 * W + 4 * W + 6 * W;
localparam Q_BAD = SD, Q_Z = Q_BAD + 2 * W, Q_E = Q_Z + W, Q_H = Q_E + 32 * W, Q_NX = Q_H + 4 * W;
// the queue's address: the stream's bits (none, 1 or 2) above its index
localparam QA = STREAMS == 1 ? QB : STREAMS == 2 ? QB + 1 : QB + 2;
function [QA-1:0] qaddr;
    input [1:0]    t;
    input [QB-1:0] i;
    /* verilator lint_off UNUSEDSIGNAL */
    reg   [QB+1:0] a;   // (the stream bits above QA are 0 when STREAMS < 3)
    /* verilator lint_on UNUSEDSIGNAL */
    begin
        a = {t, i};
        qaddr = a[QA-1:0];
    end
endfunction
reg  [QW-1:0] queue [0:(1<<QA)-1];
// per stream: write and read index with a wrap bit above it (full is not empty)
reg  [8*TS-1:0] q_wr, q_rd;
/* verilator lint_on UNUSEDSIGNAL */
reg  [1:0] o_tid_r;                      // the stream of the word on the output
wire [1:0] o_t = STREAMS == 1 ? 2'd0 : o_tid_r;
wire [1:0] n_t = STREAMS == 1 ? 2'd0 : o_tid_next;
reg  [QW-1:0] e_q;                       // the word to be written (from registers: an add into the LUT RAM's write data was the critical path)
reg  [QA-1:0] e_addr;                    // and where (allocated a stage ahead: from the stream bits of a wide register it was)
reg  [8*TS-1:0] q_next;                  // per stream: the next word's index, counted at stage f
reg  [TS-1:0]   e_inc;                   // one-hot: the stream e_q belongs to (0: e_q holds no word)
wire pop = o_valid && o_ready;
// the absolute end in two halves, a stage each (the 37-bit add and its saturation in one
// cycle, from the word's offset fanned out to all W adders, was the critical path)
reg  [17*W-1:0] f_lo;                     // offset + relative end, low 16 bits and carry
reg  [20*W-1:0] f_rhi;                    // the relative end's bits 35:16
reg  [6*W-1:0]  f_nx;                     // the end from the word's first byte (bit 5: past the next word)
reg  [SD-1:0]   f_side;
reg  [4*W-1:0]  f_hl;
reg  [2*W-1:0]  f_bad;
reg  [W-1:0]    f_z;
reg             v_f;
always @(posedge clk) begin : ends_low
    integer p;
    reg [35:0] r;
    if (rst) begin
        v_f <= 1'b0;
    end else begin
        v_f <= v_d;
        f_side <= d_side;
        f_hl <= d_hl;
        f_bad <= d_bad;
        f_z <= d_z;
        for (p = 0; p < W; p = p + 1) begin
            r = d_rel[36*p +: 36];
            f_lo[17*p +: 17] <= {1'b0, d_side[15:0]} + {1'b0, r[15:0]};
            f_rhi[20*p +: 20] <= r[35:16];
            f_nx[6*p +: 6] <= r < 2*W ? r[5:0] : 6'h20;
        end
    end
end
reg  [QW-1:0] q_in;
always @* begin : ends
    integer p;
    reg [20:0] hi;
    q_in = {QW{1'b0}};
    q_in[SD-1:0] = f_side;
    q_in[Q_BAD +: 2*W] = f_bad;
    q_in[Q_Z +: W] = f_z;
    q_in[Q_H +: 4*W] = f_hl;
    q_in[Q_NX +: 6*W] = f_nx;
    for (p = 0; p < W; p = p + 1) begin
        hi = {5'd0, f_side[31:16]} + {1'b0, f_rhi[20*p +: 20]} + {20'd0, f_lo[17*p + 16]};
        q_in[Q_E + 32*p +: 32] = hi[20:16] != 5'd0 ? 32'hFFFF_FFFF : {hi[15:0], f_lo[17*p +: 16]};
    end
end
always @(posedge clk) begin : queues
    integer t;
    reg [4:0] occ_n;
    e_q <= q_in;
    e_addr <= qaddr(f_side[S_TID +: 2], q_next[8*f_side[S_TID +: 2] +: QB]);
    if (e_inc != {TS{1'b0}})
        queue[e_addr] <= e_q;
    if (rst) begin
        e_inc <= {TS{1'b0}};
        q_next <= {8*TS{1'b0}};
        room <= {TS{1'b0}};
        emit_r <= 1'b0;
        pop_r <= 1'b0;
        q_wr <= {8*TS{1'b0}};
        q_rd <= {8*TS{1'b0}};
        occ <= {8*TS{1'b0}};
    end else begin
        e_inc <= v_f ? {{TS-1{1'b0}}, 1'b1} << f_side[S_TID +: 2] : {TS{1'b0}};
        if (v_f)
            q_next[8*f_side[S_TID +: 2] +: 5] <= q_next[8*f_side[S_TID +: 2] +: 5] + 5'd1;
        for (t = 0; t < TS; t = t + 1)
            if (e_inc[t])
                q_wr[8*t +: 5] <= q_wr[8*t +: 5] + 5'd1;
        if (pop)
            q_rd[8*o_t +: 5] <= q_rd[8*o_t +: 5] + 5'd1;
        emit_r <= emit;
        enter_tid_r <= enter_tid;
        pop_r <= pop;
        pop_tid_r <= o_t;
        for (t = 0; t < STREAMS; t = t + 1) begin
            occ_n = occ[8*t +: 5] + {4'd0, emit_r && enter_tid_r == t[1:0]} - {4'd0, pop_r && pop_tid_r == t[1:0]};
            occ[8*t +: 5] <= occ_n;
            room[t] <= occ_n < QD - 1;
        end
    end
end
// the output, read a cycle ahead for stream n_t: its read index after this cycle's pop,
// valid if its write index after this cycle's write is past it, the word being written
// this cycle taken from e_q
/* verilator lint_off UNUSEDSIGNAL */
wire [4:0]    rd_n = q_rd[8*n_t +: 5] + {4'd0, pop && o_t == n_t};   // (QB + 1 bits used)
wire [4:0]    wr_n = q_wr[8*n_t +: 5] + {4'd0, e_inc[n_t]};
/* verilator lint_on UNUSEDSIGNAL */
wire [QA-1:0] ra = qaddr(n_t, rd_n[QB-1:0]);
reg           out_v;
reg  [QW-1:0] q_out;
always @(posedge clk) begin
    out_v <= !rst && rd_n[QB:0] != wr_n[QB:0];
    q_out <= e_inc[n_t] && e_addr == ra ? e_q : queue[ra];
    o_tid_r <= n_t;
end
reg  [2*W*W-1:0] hx, nx;
always @* begin : onehots
    integer p;
    reg [5:0] h, n;
    for (p = 0; p < W; p = p + 1) begin
        h = {2'd0, q_out[Q_H + 4*p +: 4]} + p[5:0];   // (p + the header's length)
        n = q_out[Q_NX + 6*p +: 6];
        hx[2*W*p +: 2*W] = {{2*W-1{1'b0}}, 1'b1} << h;
        nx[2*W*p +: 2*W] = n[5] ? {2*W{1'b0}} : {{2*W-1{1'b0}}, 1'b1} << n[4:0];
    end
end

assign o_valid = out_v;
assign o_tid = o_t;
assign o_pos = q_out[31:0];
assign o_last = q_out[32];
assign o_tl = q_out[S_TL +: 3*W];
assign o_wt = q_out[S_WT +: 3*W];
assign o_n = q_out[S_N +: NB*W];
assign o_big = q_out[S_BIG +: W];
assign o_bad = q_out[Q_BAD +: 2*W];
assign o_e = q_out[Q_E +: 32*W];
assign o_hx = hx;
assign o_hl = q_out[Q_H +: 4*W];
assign o_nx = nx;
assign o_z = q_out[Q_Z +: W];

endmodule

`resetall
`default_nettype wire

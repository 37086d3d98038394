/*
 * hw_x_front -- timing experiment (not a building block; nothing instantiates it): the
 * pipelined protobuf core's front end as far as it is built, on stream bytes: the
 * decode-ahead stage (rtl/hw_pb_scan.v) feeding the field walk of hw_x_chase (the kind
 * lookup and DEPTH frames; THREADS streams interleaved, the scan scanning as many), and a
 * check of each field the walk stands on, so that the walk's clock is measured with the
 * real decodes in front of it and tb/loop_limits checks the whole on raw bytes, errors
 * included. docs/hardware.md "The decode-ahead stage" has the figures; scripts/synth.sh
 * front-ecp5 reproduces them.
 *
 * The check names, per field, the error the CPU engine would stop at there (kind as
 * heapwire_engine::RejectKind's code, and byte offset), from the field's header as the
 * scan decoded it and the end of the frame it is in (at the top level the stream's length,
 * in_len): the tag past the end (Truncated at the tag), a tag over 5 bytes or 32 bits
 * (VarintTooLong), number 0, wire type 6 or 7, then at the value: a varint or length prefix
 * too long or cut by the end (VarintTooLong or Truncated), a length prefix past the end
 * (Truncated), the field past the end (LengthPastEnd for type 2, else Truncated). The first
 * record of a stream with o_err set is where the CPU engine rejects it; no such record,
 * it accepts. Field numbers of 32 and more are unknown fields (number 0 to the kind table).
 * Not handled: groups (wire types 3 and 4: o_err says Unsupported), packed runs, nesting
 * deeper than DEPTH (the walk stops: o_stuck), what the fields hold (UTF-8, values), one
 * stream after another on the same stream number (in_len and the walk's offsets are a
 * stream's own).
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module hw_x_front #(
    parameter DEPTH = 4,       // the walk's frames
    parameter THREADS = 1      // streams walked at once (1..3)
) (
    input  wire         clk,
    input  wire         rst,
    // stream in_tid's next 16-byte word, in_last on its last, in_len its length in bytes
    input  wire         in_valid,
    output wire         in_ready,
    input  wire [1:0]   in_tid,
    input  wire [127:0] in_data,
    input  wire         in_last,
    input  wire [31:0]  in_len,
    // one record a cycle, as hw_x_chase's, with the check's verdict on the field
    output reg          o_valid,
    output reg  [1:0]   o_tid,
    output reg  [31:0]  o_pos,
    output reg  [4:0]   o_num,
    output reg  [2:0]   o_type,
    output reg          o_sub,
    output reg  [3:0]   o_err,     // 0: none; else the RejectKind code, at byte o_eoff
    output reg  [31:0]  o_eoff,
    output wire [THREADS-1:0] o_stuck
);

localparam W = 16;
localparam XB = 12;        // per byte to the record: {bad, wire type, tag length, header length}
// heapwire_engine::RejectKind codes
localparam [3:0] E_TRUNCATED = 4'd1, E_VARINT_TOO_LONG = 4'd2, E_FIELD_NUMBER_ZERO = 4'd3,
                 E_INVALID_WIRE_TYPE = 4'd4, E_LENGTH_PAST_END = 4'd5, E_UNSUPPORTED = 4'd14;

wire           s_valid, s_ready;
wire [3*W-1:0] s_wt, s_tl;
wire [32*W-1:0] s_e;
wire [2*W*W-1:0] s_hx, s_nx;
wire [4*W-1:0] s_hl;
wire [W-1:0]   s_z, s_big;
wire [5*W-1:0] s_n;
wire [2*W-1:0] s_bad;
/* verilator lint_off UNUSEDSIGNAL */
wire [31:0]    s_pos;
wire           s_last;
/* verilator lint_on UNUSEDSIGNAL */
wire [1:0]     c_tid;     // the stream whose word the walk takes this cycle
wire [1:0]     s_tid;     // the stream of the scan's output word
// the walk takes the streams' words in turn, so the scan reads the next one's a cycle ahead
wire [1:0]     c_tid_next = THREADS == 1 || c_tid == THREADS[1:0] - 2'd1 ? 2'd0 : c_tid + 2'd1;

hw_pb_scan #(.W(W), .NB(5), .STREAMS(THREADS)) scan (
    .clk(clk), .rst(rst),
    .in_valid(in_valid), .in_ready(in_ready), .in_tid(in_tid), .in_data(in_data),
    .in_last(in_last), .o_tid_next(c_tid_next), .o_tid(s_tid), .o_valid(s_valid),
    .o_ready(s_ready), .o_pos(s_pos), .o_last(s_last), .o_tl(s_tl),
    .o_wt(s_wt), .o_n(s_n), .o_big(s_big), .o_bad(s_bad), .o_e(s_e), .o_hx(s_hx),
    .o_hl(s_hl), .o_nx(s_nx), .o_z(s_z));

// per byte: "length-delimited" for the walk, the number (0 when too big for the kind
// table: an unknown field), the header bits the check needs
reg [W-1:0]    s_w2;
reg [5*W-1:0]  s_nk;
reg [XB*W-1:0] s_x;
always @* begin : per_byte
    integer p;
    for (p = 0; p < W; p = p + 1) begin
        s_w2[p] = s_wt[3*p +: 3] == 3'd2;
        s_nk[5*p +: 5] = s_big[p] ? 5'd0 : s_n[5*p +: 5];
        s_x[XB*p +: XB] = {s_bad[2*p +: 2], s_wt[3*p +: 3], s_tl[3*p +: 3], s_hl[4*p +: 4]};
    end
end

wire           w_valid, w_sub;
wire [1:0]     w_tid;
wire [31:0]    w_pos, w_e, w_fend;
wire [4:0]     w_num;
wire [2:0]     w_type;
wire [XB-1:0]  w_x;
hw_x_chase #(.W(W), .LOOKUP(1), .DEPTH(DEPTH), .THREADS(THREADS), .XB(XB)) walk (
    .clk(clk), .rst(rst),
    .in_valid(s_valid), .in_ready(s_ready), .in_tid(c_tid),
    .in_nx(s_nx), .in_hx(s_hx), .in_e(s_e), .in_z(s_z), .in_n(s_nk), .in_w(s_w2), .in_x(s_x),
    .o_valid(w_valid), .o_tid(w_tid), .o_pos(w_pos), .o_num(w_num), .o_type(w_type),
    .o_sub(w_sub), .o_stuck(o_stuck), .o_x(w_x), .o_e(w_e), .o_fend(w_fend));

`ifndef SYNTHESIS
always @(posedge clk)
    if (!rst && s_valid && s_tid != c_tid)
        $fatal(1, "hw_x_front: the scan shows stream %0d's word in stream %0d's turn", s_tid, c_tid);
`endif

// each stream's length (the frame end at the top level), from its words
reg  [31:0] len [0:3];
always @(posedge clk)
    if (in_valid && in_ready)
        len[in_tid] <= in_len;

// ---------------------------------------------------------------- the check
wire [1:0]  x_bad = w_x[11:10];
wire [2:0]  x_wt  = w_x[9:7];
wire [2:0]  x_tl  = w_x[6:4];
wire [3:0]  x_hl  = w_x[3:0];
wire [31:0] fend  = w_fend == 32'hFFFF_FFFF ? len[w_tid] : w_fend;
wire [32:0] tag_end = {1'b0, w_pos} + {30'd0, x_tl};
wire [32:0] hdr_end = {1'b0, w_pos} + {29'd0, x_hl};
wire        past  = w_e > fend;
always @(posedge clk) begin
    if (rst) begin
        o_valid <= 1'b0;
    end else begin
        o_valid <= w_valid;
        o_tid <= w_tid; o_pos <= w_pos; o_num <= w_num; o_type <= w_type; o_sub <= w_sub;
        o_eoff <= w_pos;
        if (tag_end > {1'b0, fend})
            o_err <= E_TRUNCATED;
        else if (x_bad == 2'd1)
            o_err <= E_VARINT_TOO_LONG;
        else if (x_bad == 2'd2)
            o_err <= E_FIELD_NUMBER_ZERO;
        else if (x_wt > 3'd5)
            o_err <= E_INVALID_WIRE_TYPE;
        else if (x_wt == 3'd3 || x_wt == 3'd4)
            o_err <= E_UNSUPPORTED;
        else begin
            // at the value
            o_eoff <= tag_end[31:0];
            if (x_bad == 2'd3)
                o_err <= past ? E_TRUNCATED : E_VARINT_TOO_LONG;
            else if (x_wt == 3'd2 && hdr_end > {1'b0, fend})
                o_err <= E_TRUNCATED;
            else if (past)
                o_err <= x_wt == 3'd2 ? E_LENGTH_PAST_END : E_TRUNCATED;
            else
                o_err <= 4'd0;
        end
    end
end

endmodule

`resetall
`default_nettype wire

/*
 * hw_x_front -- timing experiment (not a building block; nothing instantiates it): the
 * pipelined protobuf core's front end as far as it is built, on stream bytes: the
 * decode-ahead stage (rtl/hw_pb_scan.v) feeding the field walk of hw_x_chase (the kind
 * lookup and DEPTH frames; THREADS streams interleaved, the scan scanning as many), so that the walk's clock is measured with the real
 * decodes in front of it and tb/loop_limits checks the pair on raw bytes. The walk's word
 * ready stalls the scan's pipeline (its enable), a path the pair has and the parts alone do
 * not. docs/hardware.md "What the field loop can reach" has the figures; scripts/synth.sh
 * scan-ecp5 reproduces them.
 * Not handled: what hw_x_chase leaves out (groups, packed runs, bounds errors) and the
 * scan's bad flags (the walk does not stop on them).
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
    // stream in_tid's next 16-byte word, in_last on its last (its offsets start again after it)
    input  wire         in_valid,
    output wire         in_ready,
    input  wire [1:0]   in_tid,
    input  wire [127:0] in_data,
    input  wire         in_last,
    // one record a cycle, as hw_x_chase's
    output wire         o_valid,
    output wire [1:0]   o_tid,
    output wire [31:0]  o_pos,
    output wire [4:0]   o_num,
    output wire [2:0]   o_type,
    output wire         o_sub,
    output wire [THREADS-1:0] o_stuck
);

localparam W = 16;

wire           s_valid, s_ready;
wire [3*W-1:0] s_wt;
wire [32*W-1:0] s_e;
wire [2*W*W-1:0] s_hx, s_nx;
wire [W-1:0]   s_z;
wire [5*W-1:0] s_n;
/* verilator lint_off UNUSEDSIGNAL */
wire [31:0]    s_pos;
wire           s_last;
wire [3*W-1:0] s_tl;
wire [W-1:0]   s_big;
wire [2*W-1:0] s_bad;
/* verilator lint_on UNUSEDSIGNAL */
wire [1:0]     c_tid;     // the stream whose word the walk takes this cycle

hw_pb_scan #(.W(W), .NB(5), .STREAMS(THREADS)) scan (
    .clk(clk), .rst(rst),
    .in_valid(in_valid), .in_ready(in_ready), .in_tid(in_tid), .in_data(in_data),
    .in_last(in_last), .o_tid(c_tid), .o_valid(s_valid), .o_ready(s_ready), .o_pos(s_pos), .o_last(s_last), .o_tl(s_tl),
    .o_wt(s_wt), .o_n(s_n), .o_big(s_big), .o_bad(s_bad), .o_e(s_e), .o_hx(s_hx),
    .o_nx(s_nx), .o_z(s_z));

// the walk takes "length-delimited" per byte
reg [W-1:0] s_w2;
always @* begin : w2
    integer p;
    for (p = 0; p < W; p = p + 1)
        s_w2[p] = s_wt[3*p +: 3] == 3'd2;
end

hw_x_chase #(.W(W), .LOOKUP(1), .DEPTH(DEPTH), .THREADS(THREADS)) walk (
    .clk(clk), .rst(rst),
    .in_valid(s_valid), .in_ready(s_ready), .in_tid(c_tid),
    .in_nx(s_nx), .in_hx(s_hx), .in_e(s_e), .in_z(s_z), .in_n(s_n), .in_w(s_w2),
    .o_valid(o_valid), .o_tid(o_tid), .o_pos(o_pos), .o_num(o_num), .o_type(o_type),
    .o_sub(o_sub), .o_stuck(o_stuck));

endmodule

`resetall
`default_nettype wire

/*
 * hw_pb_writer -- the protobuf core's image-port stage: the state machine's write and read
 * requests (byte addresses, up to 16 bytes, zero writes, the lazily zeroed root words)
 * become output-memory words, byte enables and word addresses.
 *
 * Two registered stages (ProtoACC's memory writer, decoupled from the parser):
 *   stage 1  the raw requests as the state machine made them, registered;
 *   stage 2  the port registers: word address, the data shifted to its byte lane, the byte
 *            enables (and the lazily zeroed bytes of the same word or'ed in).
 * So no path runs from the state machine's decision through the lane shifters and the
 * byte-enable masks: they start at stage 1's registers. The zeroer (hw_pb_zeroer) checks
 * the writes in stage 1 (`q_we`, `q_wa`, `q_we2`, `q_wa2`): its hits (`rz_hit`, `rz2_hit`)
 * and the allocation (`rz_lo_rel`, `rz_hi_rel`) come in the cycle the request is in stage
 * 1 and widen stage 2's byte enables; its own zero write (`zw`, `zw_a`: only when stage 1
 * has no port-1 write) goes straight into stage 2, on port 1.
 *
 * Every request (port 1 writes, port 2 writes, reads) takes the same two cycles, so the
 * memory sees them in the order and with the spacing the state machine issued them (the
 * read-modify-write of a presence word and the "port 2 never beside a read" rule hold as
 * the state machine keeps them). The read data of a request issued in cycle t is in
 * `rd_lane` in cycle t + 3 (the 64-bit lane holding the addressed byte).
 * `pending`: stage 1 holds a request not yet on the ports, or the zeroer's write is on
 * its way to them (a decode is over only when its last write has reached them).
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module hw_pb_writer #(
    // Output memory word width in bits (64, 128 or 256) and word address bits.
    parameter OUT_WIDTH = 64,
    parameter OUT_ADDR_WIDTH = 12,
    // log2 of the words of one allocation zeroed lazily (the core's RZB)
    parameter RZB = 4
) (
    input  wire                      clk,
    input  wire                      rst,

    // requests, combinational from the state machine (stage 1 registers them)
    input  wire                      we,           // port 1 write of byte address wa
    input  wire [39:0]               wa,
    input  wire [63:0]               wd,           // plain write: wbe bytes of wd, lane-aligned at wa[2:0]
    input  wire [7:0]                wbe,
    input  wire                      wz,           // zero write of wz_n bytes from wa (one word)
    input  wire [$clog2(OUT_WIDTH/8):0] wz_n,      // (0..bytes per word)
    input  wire                      w2,           // up to 16 bytes w2d (mask w2m) from wa (one word)
    input  wire [127:0]              w2d,
    input  wire [15:0]               w2m,
    input  wire                      o2_we,        // port 2: up to 16 bytes o2_d (mask o2_m) from o2_a
    input  wire [39:0]               o2_a,
    input  wire [127:0]              o2_d,
    input  wire [15:0]               o2_m,
    input  wire                      re,           // read of the word holding byte ra
    input  wire [39:0]               ra,
    // the zeroer's answers for the requests in stage 1 (from registers): port 1's / port 2's
    // write also zeroes the lazily zeroed word rz_idx / rz2_idx; port 1 (idle in stage 1)
    // zeroes the allocation's bytes of the word of byte zw_a
    input  wire                      rz_hit,
    input  wire [RZB-1:0]            rz_idx,
    input  wire                      rz2_hit,
    input  wire [RZB-1:0]            rz2_idx,
    input  wire                      zw,           // (rz_hit and rz_idx name zw's word then)
    input  wire [39:0]               zw_a,
    // the lazily zeroed allocation, relative to its first word's start (RZP bits)
    input  wire [RZB+$clog2(OUT_WIDTH/8):0] rz_lo_rel,
    input  wire [RZB+$clog2(OUT_WIDTH/8):0] rz_hi_rel,

    output wire                      pending,
    // stage 1's writes (to the zeroer)
    output wire                      q_we,
    output wire [39:0]               q_wa,
    output wire                      q_we2,
    output wire [39:0]               q_wa2,
    output wire [63:0]               rd_lane,

    // output memory ports (hw_pb_core's)
    output reg                       out_wr_en = 1'b0,
    output reg  [OUT_ADDR_WIDTH-1:0] out_wr_addr = {OUT_ADDR_WIDTH{1'b0}},
    output reg  [OUT_WIDTH-1:0]      out_wr_data = {OUT_WIDTH{1'b0}},
    output reg  [OUT_WIDTH/8-1:0]    out_wr_be = {(OUT_WIDTH/8){1'b0}},
    output reg                       out_rd_en = 1'b0,
    output reg  [OUT_ADDR_WIDTH-1:0] out_rd_addr = {OUT_ADDR_WIDTH{1'b0}},
    input  wire [OUT_WIDTH-1:0]      out_rd_data,
    output reg                       out2_wr_en = 1'b0,
    output reg  [OUT_ADDR_WIDTH-1:0] out2_wr_addr = {OUT_ADDR_WIDTH{1'b0}},
    output reg  [OUT_WIDTH-1:0]      out2_wr_data = {OUT_WIDTH{1'b0}},
    output reg  [OUT_WIDTH/8-1:0]    out2_wr_be = {(OUT_WIDTH/8){1'b0}}
);

// bytes per output word and its log2
localparam OB = OUT_WIDTH / 8;
localparam OB_SHIFT = $clog2(OB);
// relative positions within the lazily zeroed allocation (RZW = 2^RZB words)
localparam RZP = RZB + OB_SHIFT + 1;
// output memory capacity in bytes (requests at or beyond it are dropped)
localparam [39:0] OUT_BYTES = (40'd1 << (OUT_ADDR_WIDTH + OB_SHIFT));

initial begin
    if (OUT_WIDTH != 64 && OUT_WIDTH != 128 && OUT_WIDTH != 256) begin
        $error("Error: OUT_WIDTH must be 64, 128 or 256 (instance %m)");
        $finish;
    end
    if (OUT_ADDR_WIDTH + OB_SHIFT > 32) begin
        $error("Error: output memory larger than 4 GiB (instance %m)");
        $finish;
    end
    if (RZB < 1 || RZB > 8) begin
        $error("Error: RZB must be in 1..8 (instance %m)");
        $finish;
    end
end

// ---------------------------------------------------------------- stage 1: the requests
reg            s_we = 1'b0, s_wz = 1'b0, s_w2 = 1'b0, s_o2 = 1'b0, s_re = 1'b0;
reg [39:0]     s_wa = 40'd0, s_o2a = 40'd0, s_ra = 40'd0;
reg [63:0]     s_wd = 64'd0;
reg [7:0]      s_wbe = 8'd0;
reg [OB_SHIFT:0] s_wzn = {(OB_SHIFT+1){1'b0}};
reg [127:0]    s_w2d = 128'd0, s_o2d = 128'd0;
reg [15:0]     s_w2m = 16'd0, s_o2m = 16'd0;

always @(posedge clk) begin
    if (rst) begin
        s_we <= 1'b0;
        s_o2 <= 1'b0;
        s_re <= 1'b0;
    end else begin
        s_we <= we;
        s_o2 <= o2_we;
        s_re <= re;
    end
    s_wa <= wa; s_wd <= wd; s_wbe <= wbe; s_wz <= wz; s_wzn <= wz_n; s_w2 <= w2; s_w2d <= w2d; s_w2m <= w2m;
    s_o2a <= o2_a; s_o2d <= o2_d; s_o2m <= o2_m;
    s_ra <= ra;
end

assign pending = s_we || s_o2 || s_re || zw;
assign q_we = s_we;
assign q_wa = s_wa;
assign q_we2 = s_o2;
assign q_wa2 = s_o2a;

// ---------------------------------------------------------------- stage 2: the ports
// 64-bit lane of the output word
wire [2:0] wa_lane = s_wa[5:3] & ((3'd1 << (OB_SHIFT - 3)) - 3'd1);
wire [OUT_WIDTH-1:0]   wd_ext;
wire [OUT_WIDTH/8-1:0] wbe_ext;
generate
    if (OUT_WIDTH <= 64) begin : g_ext64   // (<: refused above, elaborated to say so)
        assign wd_ext = s_wd;
        assign wbe_ext = s_wbe;
    end else begin : g_extw
        assign wd_ext = {{(OUT_WIDTH-64){1'b0}}, s_wd};
        assign wbe_ext = {{(OUT_WIDTH/8-8){1'b0}}, s_wbe};
    end
endgenerate
// the bytes of the lazily zeroed allocation in its word idx (from the allocation's first
// word): positions relative to that word's start
function [OB-1:0] rz_bytes;
    input [RZB-1:0] idx;
    input [RZP-1:0] lo;
    input [RZP-1:0] hi;
    integer b;
    reg [RZP-1:0] at;
    begin
        for (b = 0; b < OB; b = b + 1) begin
            at = {1'b0, idx, b[OB_SHIFT-1:0]};
            rz_bytes[b] = at >= lo && at < hi;
        end
    end
endfunction
wire [OB-1:0] rz_mask = rz_bytes(rz_idx, rz_lo_rel, rz_hi_rel);
wire [OB-1:0] rz2_mask = rz_bytes(rz2_idx, rz_lo_rel, rz_hi_rel);
/* verilator lint_off UNUSEDSIGNAL */
// zero writes: wz_n bytes from the byte lane of wa
wire [OB:0] wz_ones = ({{OB{1'b0}}, 1'b1} << s_wzn) - {{OB{1'b0}}, 1'b1};
// 16-byte writes (pairs, copies, port 2): from the byte lane of their address
wire [OUT_WIDTH+127:0] w2_sh = {{OUT_WIDTH{1'b0}}, s_w2d} << (8 * s_wa[OB_SHIFT-1:0]);
wire [OB+15:0] w2_msk = {{OB{1'b0}}, s_w2m} << s_wa[OB_SHIFT-1:0];
wire [OUT_WIDTH+127:0] o2_sh = {{OUT_WIDTH{1'b0}}, s_o2d} << (8 * s_o2a[OB_SHIFT-1:0]);
wire [OB+15:0] o2_msk = {{OB{1'b0}}, s_o2m} << s_o2a[OB_SHIFT-1:0];
/* verilator lint_on UNUSEDSIGNAL */
wire [OUT_WIDTH/8-1:0] wz_mask = wz_ones[OB-1:0] << s_wa[OB_SHIFT-1:0];

reg [OB_SHIFT-1:0] rlane_reg = {OB_SHIFT{1'b0}}, rlane_q = {OB_SHIFT{1'b0}};

always @(posedge clk) begin
    if (rst) begin
        out_wr_en <= 1'b0;
        out_rd_en <= 1'b0;
        out2_wr_en <= 1'b0;
    end else begin
        out_wr_en <= (s_we && (s_wa < OUT_BYTES)) || (zw && (zw_a < OUT_BYTES));
        out_rd_en <= s_re && (s_ra < OUT_BYTES);
        out2_wr_en <= s_o2 && (s_o2a < OUT_BYTES);
    end
    // (zw: no port-1 request in stage 1)
    out_wr_addr <= zw ? zw_a[OB_SHIFT +: OUT_ADDR_WIDTH] : s_wa[OB_SHIFT +: OUT_ADDR_WIDTH];
    out_wr_data <= (s_wz || zw) ? {OUT_WIDTH{1'b0}} : s_w2 ? w2_sh[OUT_WIDTH-1:0] : wd_ext << (64 * {29'd0, wa_lane});
    out_wr_be <= (zw ? {OB{1'b0}} : s_wz ? wz_mask : s_w2 ? w2_msk[OB-1:0] : wbe_ext << (8 * {29'd0, wa_lane}))
                 | (rz_hit ? rz_mask : {OB{1'b0}});
    out2_wr_addr <= s_o2a[OB_SHIFT +: OUT_ADDR_WIDTH];
    // (o2_sh is zero outside the request's bytes)
    out2_wr_data <= o2_sh[OUT_WIDTH-1:0];
    out2_wr_be <= o2_msk[OB-1:0] | (rz2_hit ? rz2_mask : {OB{1'b0}});
    out_rd_addr <= s_ra[OB_SHIFT +: OUT_ADDR_WIDTH];
    rlane_reg <= s_ra[OB_SHIFT-1:0];
    rlane_q <= rlane_reg;
end

// the read data's 64-bit lane holding the addressed byte (the memory answers a cycle after
// out_rd_en)
wire [OB_SHIFT-1:0] rd_lane_idx = rlane_q >> 3;
assign rd_lane = out_rd_data[64 * rd_lane_idx +: 64];

endmodule

`resetall
`default_nettype wire

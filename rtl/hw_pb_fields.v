/*
 * hw_pb_fields -- the protobuf core's field table in block RAM, loaded at run time
 * (hw_pb_core with TABLES=1; docs/hardware.md "Run-time-loaded tables").
 *
 * One lookup port: (message, field number) of the NEXT cycle in, the field's row out one
 * cycle later from a registered block-RAM read (the row the ROM build's combinational
 * hw_pb_desc_field computes; the core decodes it). Rows:
 *   direct   per message m a region of span[m] rows, row base[m] + n for field number n in
 *            1..span[m] (base/span in a small LUT RAM indexed by the message; holes are rows
 *            with the hit bit clear);
 *   overflow field numbers above a message's span (sparse numbers): up to OVF keys
 *            {row, message, number}, compared in parallel; a match gives the row.
 * The address (direct or overflow) is computed from the lookup inputs and registered into
 * the RAM's read; `hit` is the row's hit bit (its top bit, W-1) and the address's validity.
 *
 * Table-load port (the core's tbl_wr_*; written only while the core is idle): 64-bit
 * words, address {region[3:0], index[19:0]}:
 *   region 1, index 4m+3: message m's {span[31:16], base[15:0]} (words 0-2 of a message row
 *            are the core's message table, not this module's);
 *   region 2, index 4r+w: lane w (bits 64w+63:64w) of field row r;
 *   region 3, index i:    overflow key i: {row[63:48], message[47:32], number[31:0]}.
 * n_msgs and n_ovf (the loaded message count and overflow keys) come from the core's
 * configuration word. Messages at or past n_msgs and keys at or past n_ovf never hit.
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module hw_pb_fields #(
    // field rows (direct regions and overflow rows together; at most 65536)
    parameter ROWS = 1024,
    // overflow keys (sparse field numbers), 1..256
    parameter OVF = 64,
    // message types (base/span entries), at most 65536
    parameter MSGS = 256,
    // row width in bits (the core's field bundle; the top bit is the hit bit), 1..256
    parameter W = 220
) (
    input  wire          clk,

    // table-load port
    input  wire          wr_en,
    input  wire [23:0]   wr_addr,
    input  wire [63:0]   wr_data,
    input  wire [15:0]   n_msgs,
    input  wire [8:0]    n_ovf,

    // lookup: the next cycle's (message, field number) in, that row out in the next cycle
    input  wire [15:0]   l_msg,
    input  wire [31:0]   l_num,
    output wire          hit,
    output wire [W-1:0]  row
);

localparam RB = (ROWS > 1) ? $clog2(ROWS) : 1;
localparam MB = (MSGS > 1) ? $clog2(MSGS) : 1;
localparam KB = (OVF > 1) ? $clog2(OVF) : 1;
localparam [31:0] ROWS_32 = ROWS;
localparam [31:0] MSGS_32 = MSGS;

initial begin
    if (ROWS < 1 || ROWS > 65536) begin
        $error("Error: ROWS must be in 1..65536 (instance %m)");
        $finish;
    end
    if (OVF < 1 || OVF > 256) begin
        $error("Error: OVF must be in 1..256 (instance %m)");
        $finish;
    end
    if (MSGS < 1 || MSGS > 65536) begin
        $error("Error: MSGS must be in 1..65536 (instance %m)");
        $finish;
    end
    if (W < 1 || W > 256) begin
        $error("Error: W must be in 1..256 (instance %m)");
        $finish;
    end
end

// ---------------------------------------------------------------- memories
wire [3:0]  wr_region = wr_addr[23:20];
wire [19:0] wr_idx = wr_addr[19:0];
// per message {span, base} (LUT RAM, asynchronous read)
reg  [31:0] bs_mem [0:MSGS-1];
// overflow keys (flip-flops: compared in parallel)
reg  [63:0] key_q [0:OVF-1];
// the rows: four 64-bit lanes, each a block RAM with a registered read
reg  [63:0] lane0 [0:ROWS-1];
reg  [63:0] lane1 [0:ROWS-1];
reg  [63:0] lane2 [0:ROWS-1];
reg  [63:0] lane3 [0:ROWS-1];

integer i;
initial begin
    for (i = 0; i < MSGS; i = i + 1) bs_mem[i] = 32'd0;
    for (i = 0; i < OVF; i = i + 1) key_q[i] = 64'd0;
end

wire [31:0] wr_row = {14'd0, wr_idx[19:2]};
always @(posedge clk) begin
    if (wr_en && wr_region == 4'd1 && wr_idx[1:0] == 2'd3 && {14'd0, wr_idx[19:2]} < MSGS_32)
        bs_mem[wr_idx[MB+1:2]] <= wr_data[31:0];
    if (wr_en && wr_region == 4'd3 && {12'd0, wr_idx} < OVF)
        key_q[wr_idx[KB-1:0]] <= wr_data;
    if (wr_en && wr_region == 4'd2 && wr_row < ROWS_32) begin
        case (wr_idx[1:0])
        2'd0: lane0[wr_row[RB-1:0]] <= wr_data;
        2'd1: lane1[wr_row[RB-1:0]] <= wr_data;
        2'd2: lane2[wr_row[RB-1:0]] <= wr_data;
        default: lane3[wr_row[RB-1:0]] <= wr_data;
        endcase
    end
end

// ---------------------------------------------------------------- address
wire        msg_ok = l_msg < n_msgs && {16'd0, l_msg} < MSGS_32;
wire [31:0] bs = bs_mem[l_msg[MB-1:0]];
wire [15:0] span = bs[31:16];
wire [15:0] dbase = bs[15:0];
wire        direct = msg_ok && l_num != 32'd0 && l_num[31:16] == 16'd0 && l_num[15:0] <= span;
wire [15:0] drow = dbase + l_num[15:0];
reg  [15:0] orow;
reg         ohit;
integer     k;
always @* begin
    orow = 16'd0;
    ohit = 1'b0;
    for (k = 0; k < OVF; k = k + 1) begin
        if (k < n_ovf && msg_ok && key_q[k][47:32] == l_msg && key_q[k][31:0] == l_num) begin
            orow = orow | key_q[k][63:48];
            ohit = 1'b1;
        end
    end
end
wire [15:0] arow = direct ? drow : orow;
wire        aok = (direct || ohit) && {16'd0, arow} < ROWS_32;

// ---------------------------------------------------------------- registered read
reg  [63:0] q0, q1, q2, q3;
reg         ok_q = 1'b0;
always @(posedge clk) begin
    q0 <= lane0[arow[RB-1:0]];
    q1 <= lane1[arow[RB-1:0]];
    q2 <= lane2[arow[RB-1:0]];
    q3 <= lane3[arow[RB-1:0]];
    ok_q <= aok;
end
/* verilator lint_off UNUSEDSIGNAL */
wire [255:0] q = {q3, q2, q1, q0};
/* verilator lint_on UNUSEDSIGNAL */
assign row = q[W-1:0];
assign hit = ok_q && q[W-1];

endmodule

`resetall
`default_nettype wire

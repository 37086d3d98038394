/*
 * hw_utf8_check -- streaming UTF-8 validator, up to LANES bytes per cycle.
 *
 * Accepts exactly what Rust's std::str::from_utf8 (and the official protobuf parsers)
 * accept: no overlong forms (C0, C1, E0 80..9F, F0 80..8F), no surrogates (ED A0..BF),
 * nothing above U+10FFFF (F4 90.., F5..FF), no stray continuation bytes.
 *
 *   clear      one-cycle pulse: start a new string (state empty, no error); with
 *              in_valid, the bytes fed that cycle are the new string's first
 *   in_valid   feed in_count (1..LANES) bytes, byte 0 = in_data[7:0]
 *   bad        sticky since clear: an invalid byte was seen
 *   mid        the bytes so far end inside a multi-byte sequence
 * The verdict for a string is `!bad && !mid`, valid the cycle after its last bytes
 * (IN_REG=0), or two cycles after (IN_REG=1: clear, in_valid, in_data and in_count are
 * registered first, so no path runs from the feeder's logic through the byte chain).
 * The per-byte step is unrolled LANES times (a chain of small state transitions).
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module hw_utf8_check #(
    // Bytes accepted per cycle (1..16).
    parameter LANES = 8,
    // 1 = register the inputs (the verdict a cycle later); 0 = the chain reads them directly
    parameter IN_REG = 0
) (
    input  wire                  clk,
    input  wire                  rst,
    input  wire                  clear,
    input  wire                  in_valid,
    input  wire [LANES*8-1:0]    in_data,
    input  wire [4:0]            in_count,
    output wire                  bad,
    output wire                  mid
);

initial begin
    if (LANES < 1 || LANES > 16) begin
        $error("Error: LANES must be in 1..16 (instance %m)");
        $finish;
    end
    if (IN_REG != 0 && IN_REG != 1) begin
        $error("Error: IN_REG must be 0 or 1 (instance %m)");
        $finish;
    end
end

// the inputs the chain sees: as given, or registered (IN_REG)
reg              clear_q = 1'b0, valid_q = 1'b0;
reg [LANES*8-1:0] data_q = {(LANES*8){1'b0}};
reg [4:0]        count_q = 5'd0;
always @(posedge clk) begin
    if (rst) begin
        clear_q <= 1'b0;
        valid_q <= 1'b0;
    end else begin
        clear_q <= clear;
        valid_q <= in_valid;
    end
    data_q <= in_data;
    count_q <= in_count;
end
wire              c_clear = (IN_REG != 0) ? clear_q : clear;
wire              c_valid = (IN_REG != 0) ? valid_q : in_valid;
wire [LANES*8-1:0] c_data = (IN_REG != 0) ? data_q : in_data;
wire [4:0]        c_count = (IN_REG != 0) ? count_q : in_count;

// state: rem = continuation bytes still expected (0..3);
// lim = constraint on the NEXT byte: 0 80..BF, 1 A0..BF, 2 80..9F, 3 90..BF, 4 80..8F
reg [1:0] rem_reg;
reg [2:0] lim_reg;
reg       bad_reg;

// one byte step
function [5:0] step;   // {bad, rem[1:0], lim[2:0]}
    input [1:0] rem;
    input [2:0] lim;
    input [7:0] b;
    reg ok;
    begin
        if (rem != 2'd0) begin
            case (lim)
                3'd1: ok = (b >= 8'hA0) && (b <= 8'hBF);
                3'd2: ok = (b >= 8'h80) && (b <= 8'h9F);
                3'd3: ok = (b >= 8'h90) && (b <= 8'hBF);
                3'd4: ok = (b >= 8'h80) && (b <= 8'h8F);
                default: ok = (b >= 8'h80) && (b <= 8'hBF);
            endcase
            step = {!ok, rem - 2'd1, 3'd0};
        end else if (b < 8'h80) begin
            step = {1'b0, 2'd0, 3'd0};
        end else if (b >= 8'hC2 && b <= 8'hDF) begin
            step = {1'b0, 2'd1, 3'd0};
        end else if (b == 8'hE0) begin
            step = {1'b0, 2'd2, 3'd1};
        end else if (b == 8'hED) begin
            step = {1'b0, 2'd2, 3'd2};
        end else if (b >= 8'hE1 && b <= 8'hEF) begin
            step = {1'b0, 2'd2, 3'd0};
        end else if (b == 8'hF0) begin
            step = {1'b0, 2'd3, 3'd3};
        end else if (b >= 8'hF1 && b <= 8'hF3) begin
            step = {1'b0, 2'd3, 3'd0};
        end else if (b == 8'hF4) begin
            step = {1'b0, 2'd3, 3'd4};
        end else begin
            step = {1'b1, 2'd0, 3'd0};
        end
    end
endfunction

// unrolled chain
reg [1:0] r [0:LANES];
reg [2:0] l [0:LANES];
reg       e [0:LANES];
reg [5:0] s;
integer i;
always @* begin
    r[0] = c_clear ? 2'd0 : rem_reg;
    l[0] = c_clear ? 3'd0 : lim_reg;
    e[0] = 1'b0;
    for (i = 0; i < LANES; i = i + 1) begin
        s = step(r[i], l[i], c_data[8*i +: 8]);
        if ({27'd0, c_count} > i) begin
            r[i+1] = s[4:3];
            l[i+1] = s[2:0];
            e[i+1] = e[i] | s[5];
        end else begin
            r[i+1] = r[i];
            l[i+1] = l[i];
            e[i+1] = e[i];
        end
    end
end

always @(posedge clk) begin
    if (rst || (c_clear && !c_valid)) begin
        rem_reg <= 2'd0;
        lim_reg <= 3'd0;
        bad_reg <= 1'b0;
    end else if (c_valid) begin
        rem_reg <= r[LANES];
        lim_reg <= l[LANES];
        bad_reg <= (bad_reg && !c_clear) | e[LANES];
    end
end

assign bad = bad_reg;
assign mid = rem_reg != 2'd0;

endmodule

`resetall
`default_nettype wire

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
 * The verdict for a string is `!bad && !mid`, valid the cycle after its last bytes.
 * The per-byte step is unrolled LANES times (a chain of small state transitions).
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module hw_utf8_check #(
    // Bytes accepted per cycle (1..16).
    parameter LANES = 8
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
end

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
    r[0] = clear ? 2'd0 : rem_reg;
    l[0] = clear ? 3'd0 : lim_reg;
    e[0] = 1'b0;
    for (i = 0; i < LANES; i = i + 1) begin
        s = step(r[i], l[i], in_data[8*i +: 8]);
        if ({27'd0, in_count} > i) begin
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
    if (rst || (clear && !in_valid)) begin
        rem_reg <= 2'd0;
        lim_reg <= 3'd0;
        bad_reg <= 1'b0;
    end else if (in_valid) begin
        rem_reg <= r[LANES];
        lim_reg <= l[LANES];
        bad_reg <= (bad_reg && !clear) | e[LANES];
    end
end

assign bad = bad_reg;
assign mid = rem_reg != 2'd0;

endmodule

`resetall
`default_nettype wire

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
 * Each byte's step is a table over the 8 reachable states (its next state and error for
 * every state it may start in); the LANES tables are composed pairwise in a tree (depth
 * log2 LANES, not a chain of LANES steps), and the result applied to the current state.
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
// The reachable {rem, lim} pairs, numbered 0..7 (step never leaves this set).
function [2:0] st_enc;
    input [1:0] rem;
    input [2:0] lim;
    begin
        case ({rem, lim})
            {2'd1, 3'd0}: st_enc = 3'd1;
            {2'd2, 3'd0}: st_enc = 3'd2;
            {2'd2, 3'd1}: st_enc = 3'd3;
            {2'd2, 3'd2}: st_enc = 3'd4;
            {2'd3, 3'd0}: st_enc = 3'd5;
            {2'd3, 3'd3}: st_enc = 3'd6;
            {2'd3, 3'd4}: st_enc = 3'd7;
            default:      st_enc = 3'd0;
        endcase
    end
endfunction

function [4:0] st_dec;   // {rem, lim}
    input [2:0] st;
    begin
        case (st)
            3'd1: st_dec = {2'd1, 3'd0};
            3'd2: st_dec = {2'd2, 3'd0};
            3'd3: st_dec = {2'd2, 3'd1};
            3'd4: st_dec = {2'd2, 3'd2};
            3'd5: st_dec = {2'd3, 3'd0};
            3'd6: st_dec = {2'd3, 3'd3};
            3'd7: st_dec = {2'd3, 3'd4};
            default: st_dec = {2'd0, 3'd0};
        endcase
    end
endfunction

// A transition table: entry k (bits 4k+3..4k) = {error, next state} from state k.
localparam [31:0] T_ID = {4'd7, 4'd6, 4'd5, 4'd4, 4'd3, 4'd2, 4'd1, 4'd0};

function [31:0] byte_table;
    input [7:0] b;
    integer k;
    reg [4:0] rl;
    reg [5:0] t;
    begin
        for (k = 0; k < 8; k = k + 1) begin
            rl = st_dec(k[2:0]);
            t = step(rl[4:3], rl[2:0], b);
            byte_table[4 * k +: 4] = {t[5], st_enc(t[4:3], t[2:0])};
        end
    end
endfunction

// f, then g
function [31:0] compose;
    input [31:0] f;
    input [31:0] g;
    integer k;
    reg [3:0] a, c;
    begin
        for (k = 0; k < 8; k = k + 1) begin
            a = f[4 * k +: 4];
            c = g[4 * a[2:0] +: 4];
            compose[4 * k +: 4] = {a[3] | c[3], c[2:0]};
        end
    end
endfunction

// level 0: one table per lane (identity past in_count and past LANES), then 4 levels of
// pairwise composition
reg [32*16-1:0] lvl0;
reg [32*8-1:0]  lvl1;
reg [32*4-1:0]  lvl2;
reg [32*2-1:0]  lvl3;
reg [31:0]      all_fn;
reg [3:0]       res;
reg [4:0]       res_rl;
integer i;
always @* begin
    for (i = 0; i < 16; i = i + 1)
        lvl0[32 * i +: 32] = (i < LANES && {27'd0, in_count} > i) ? byte_table(in_data[8 * (i % LANES) +: 8]) : T_ID;
    for (i = 0; i < 8; i = i + 1) lvl1[32 * i +: 32] = compose(lvl0[64 * i +: 32], lvl0[64 * i + 32 +: 32]);
    for (i = 0; i < 4; i = i + 1) lvl2[32 * i +: 32] = compose(lvl1[64 * i +: 32], lvl1[64 * i + 32 +: 32]);
    for (i = 0; i < 2; i = i + 1) lvl3[32 * i +: 32] = compose(lvl2[64 * i +: 32], lvl2[64 * i + 32 +: 32]);
    all_fn = compose(lvl3[31:0], lvl3[63:32]);
    res = all_fn[4 * (clear ? 3'd0 : st_enc(rem_reg, lim_reg)) +: 4];
    res_rl = st_dec(res[2:0]);
end

always @(posedge clk) begin
    if (rst || (clear && !in_valid)) begin
        rem_reg <= 2'd0;
        lim_reg <= 3'd0;
        bad_reg <= 1'b0;
    end else if (in_valid) begin
        rem_reg <= res_rl[4:3];
        lim_reg <= res_rl[2:0];
        bad_reg <= (bad_reg && !clear) | res[3];
    end
end

assign bad = bad_reg;
assign mid = rem_reg != 2'd0;

endmodule

`resetall
`default_nettype wire

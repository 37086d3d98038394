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
 * registered first, so no path runs from the feeder's logic into the byte checks).
 *
 * Every byte is judged in parallel, not through a chain of per-byte state steps (the
 * lookback of the Keiser-Lemire validator in simdutf / simdjson): a byte's verdict
 * depends only on itself and the up to 3 bytes before it. Each byte is classified alone
 * (continuation, lead of 2+/3+/4 bytes, E0/ED/F0/F4, never valid: C0, C1, F5..FF, and
 * its range bits); it is an error when it is never valid, when it is a continuation
 * byte and the bytes before it expect none, or any other byte when they expect one (a
 * lead of 2+ bytes right before it, of 3+ two before, of 4 three before), or when it is the
 * first continuation after E0 (A0..BF), ED (80..9F), F0 (90..BF) or F4 (80..8F) and out
 * of that range. Bytes before lane 0 are the last 3 bytes of the feeds so far, kept
 * across feeds as their classes (`h1`, `h2`, `h3`; none after clear), picked out of
 * this feed by in_count; `mid` is those classes saying a sequence is still open. An
 * error is flagged at the first byte no valid string can continue with, as the
 * per-byte state machine did, so `bad` and `mid` are cycle for cycle what they were.
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

// a byte's classes: {cont, ge_c0, ge_e0, ge_f0, e0, ed, f0, f4, never, le_9f, le_8f}
localparam CW = 11;
function [CW-1:0] classify;
    input [7:0] b;
    begin
        classify = {b[7:6] == 2'b10, b[7:6] == 2'b11, b[7:5] == 3'b111, b[7:4] == 4'hF,
                    b == 8'hE0, b == 8'hED, b == 8'hF0, b == 8'hF4,
                    b[7:1] == 7'h60 || (b[7:4] == 4'hF && (b[3] || (b[2] && (b[1] || b[0])))),  // C0, C1, F5..FF
                    !b[5], b[5:4] == 2'b00};
    end
endfunction
localparam C_CONT = 10, C_GE_C0 = 9, C_F4 = 3, C_NEVER = 2, C_LE_9F = 1, C_LE_8F = 0;

// the last 3 bytes fed since clear, as classes (h1 the last; all 0 = ASCII after clear):
// h1 the lead classes, h2 ge_e0/ge_f0, h3 ge_f0 -- what the next bytes' checks read
reg [6:0] h1_reg = 7'd0;   // {ge_c0, ge_e0, ge_f0, e0, ed, f0, f4}
reg [1:0] h2_reg = 2'd0;   // {ge_e0, ge_f0}
reg       h3_reg = 1'b0;   // ge_f0
reg       bad_reg = 1'b0;

// lead classes at positions -3..LANES-1 of this feed (the history first), 7 bits each; the
// per-lane errors (built in local variables and stored once: a store to a module-level
// variable wakes its readers, once per loop iteration in a simulator otherwise)
reg [7*(LANES+3)-1:0] lead;
reg [LANES-1:0] err;
// lanes in this feed: bit i = (in_count > i)
wire [31:0] in_lane = ~(32'hFFFFFFFF << c_count);
always @* begin : g_lanes
    reg [CW-1:0] cls [0:LANES-1];
    reg [7*(LANES+3)-1:0] ld;
    reg [LANES-1:0] e;
    reg       a1;      // the byte before is a lead (ge_c0)
    reg [3:0] a1r;     // ... and is E0, ED, F0, F4
    reg       a2, a3;  // two before a lead of 3+ bytes, three before of 4
    reg       must;
    integer i;
    ld[6:0]   = c_clear ? 7'd0 : {2'b00, h3_reg, 4'd0};
    ld[13:7]  = c_clear ? 7'd0 : {1'b0, h2_reg, 4'd0};
    ld[20:14] = c_clear ? 7'd0 : h1_reg;
    for (i = 0; i < LANES; i = i + 1) begin
        cls[i] = classify(c_data[8*i +: 8]);
        ld[7*(i+3) +: 7] = cls[i][C_GE_C0:C_F4];
    end
    for (i = 0; i < LANES; i = i + 1) begin
        a1 = ld[7*(i+2) + 6];
        a1r = ld[7*(i+2) +: 4];
        a2 = ld[7*(i+1) + 5];
        a3 = ld[7*i + 4];
        must = a1 | a2 | a3;    // a continuation byte is expected here
        e[i] = in_lane[i] &&
               (cls[i][C_NEVER] || (cls[i][C_CONT] != must)
                || (a1r[3] && cls[i][C_LE_9F]) || (a1r[2] && !cls[i][C_LE_9F])
                || (a1r[1] && cls[i][C_LE_8F]) || (a1r[0] && !cls[i][C_LE_8F]));
    end
    lead = ld;
    err = e;
end

// the history after this feed: the classes at positions count-1, count-2, count-3
// (count = in_count, past LANES taken as LANES)
reg [6:0] n1;
reg [1:0] n2;
reg       n3;
always @* begin : g_hist
    reg [6:0] h1;
    reg [1:0] h2;
    reg       h3;
    integer k;
    h1 = 7'd0;
    h2 = 2'd0;
    h3 = 1'b0;
    for (k = 0; k <= LANES; k = k + 1) begin
        if (k == (({27'd0, c_count} > LANES) ? LANES : {27'd0, c_count})) begin
            h1 = h1 | lead[7*(k+2) +: 7];
            h2 = h2 | lead[7*(k+1) + 4 +: 2];
            h3 = h3 | lead[7*k + 4];
        end
    end
    n1 = h1;
    n2 = h2;
    n3 = h3;
end

always @(posedge clk) begin
    if (rst || (c_clear && !c_valid)) begin
        h1_reg <= 7'd0;
        h2_reg <= 2'd0;
        h3_reg <= 1'b0;
        bad_reg <= 1'b0;
    end else if (c_valid) begin
        h1_reg <= n1;
        h2_reg <= n2;
        h3_reg <= n3;
        bad_reg <= (bad_reg && !c_clear) | (|err);
    end
end

assign bad = bad_reg;
assign mid = h1_reg[6] | h2_reg[1] | h3_reg;

endmodule

`resetall
`default_nettype wire

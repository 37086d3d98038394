/*
 * hw_x_shift_loop -- timing experiment (not a building block; nothing instantiates it): the
 * protobuf field walk as a decoder over a shifting buffer, the form hw_pb_core's loop has
 * (Stream Reader window -> tag and varint decode -> field length -> the buffer shifted by
 * it), stripped to that loop: one field a cycle at one level, no schema, no bounds. Its
 * clock is what this form can reach at best; hw_x_chase is the other form.
 * docs/hardware.md "What the field loop can reach"; scripts/synth.sh loops-ecp5;
 * tb/loop_limits checks the walk.
 *
 * A buffer of 2W bytes (byte 0 at the position) takes a W-byte word a cycle when it has
 * room. Each cycle, with at least W bytes buffered (a header is at most W bytes here: the
 * test keeps tags and varints within that), the field at byte 0 is decoded: its tag (up to
 * 5 bytes), the varint after it (wire type 0: the value; 2: the length prefix, value taken
 * to 32 bits), so its length L; a field within the buffer shifts it by L, a longer one
 * empties it and the rest of its bytes are dropped from the words that come in.
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module hw_x_shift_loop #(
    parameter W = 16             // bytes per input word (16: a header, up to 15 bytes, fits); the buffer holds 2W
) (
    input  wire           clk,
    input  wire           rst,
    input  wire           in_valid,
    output wire           in_ready,
    input  wire [8*W-1:0] in_data,
    output reg            o_valid,   // one record a cycle: the field at o_pos, its number's low bits
    output reg  [31:0]    o_pos,
    output reg  [4:0]     o_num
);

localparam B = 2 * W;
localparam CB = $clog2(B + 1);

reg  [8*B-1:0] buf_q;
reg  [CB-1:0]  cnt;              // bytes buffered
reg  [31:0]    pos;              // the stream offset of byte 0
reg  [31:0]    skip;             // bytes still to drop from the input (a long field's rest)

// the varint at byte i of the buffer: length (0: no end within 10 bytes) and low 32 bits
function [3:0] vlen;
    input [8*B-1:0] b;
    input integer i;
    integer j;
    reg done;
    begin
        vlen = 4'd0; done = 1'b0;
        for (j = 0; j < 10; j = j + 1)
            if (!done && i + j < B && !b[8 * (i + j) + 7]) begin vlen = j[3:0] + 4'd1; done = 1'b1; end
    end
endfunction
function [31:0] v32;
    input [8*B-1:0] b;
    input integer i;
    integer j;
    reg done;
    begin
        v32 = 32'd0; done = 1'b0;
        for (j = 0; j < 5; j = j + 1)
            if (!done && i + j < B) begin
                v32 = v32 | ({25'd0, b[8 * (i + j) +: 7]} << (7 * j));
                if (!b[8 * (i + j) + 7]) done = 1'b1;
            end
    end
endfunction

reg  [3:0]  tl, vl;
reg  [31:0] len, L;
/* verilator lint_off UNUSEDSIGNAL */
reg  [31:0] tagv;                // (the number's low bits used)
/* verilator lint_on UNUSEDSIGNAL */
reg         go, fits;
integer     k;
always @* begin
    tl = vlen(buf_q, 0);
    tagv = v32(buf_q, 0);
    vl = 4'd0; len = 32'd0;
    // (a tag is at most 5 bytes: field numbers are below 2^29; a longer one is no field)
    for (k = 1; k <= 5; k = k + 1)
        if (tl == k[3:0]) begin vl = vlen(buf_q, k); len = v32(buf_q, k); end
    case (buf_q[2:0])
        3'd0: L = {28'd0, tl} + {28'd0, vl};
        3'd1: L = {28'd0, tl} + 32'd8;
        3'd2: L = {28'd0, tl} + {28'd0, vl} + len;
        3'd5: L = {28'd0, tl} + 32'd4;
        default: L = {28'd0, tl};
    endcase
    go = skip == 32'd0 && cnt >= W[CB-1:0];
    fits = L <= {{32-CB{1'b0}}, cnt};
end

assign in_ready = cnt <= W[CB-1:0];

reg  [8*B-1:0] nb;
reg  [CB-1:0]  nc;
reg  [31:0]    ns;
always @* begin
    nb = buf_q; nc = cnt; ns = skip;
    if (go && fits) begin nb = buf_q >> (8 * L[CB-1:0]); nc = cnt - L[CB-1:0]; end
    else if (go) begin nb = {8*B{1'b0}}; nc = {CB{1'b0}}; ns = L - {{32-CB{1'b0}}, cnt}; end
    if (in_valid && in_ready) begin
        if (ns >= W) ns = ns - W;
        else begin
            // the word's bytes past the skip, after the buffered ones
            nb = nb | ({{8*W{1'b0}}, in_data >> (8 * ns[CB-1:0])} << (8 * nc));
            nc = nc + W[CB-1:0] - ns[CB-1:0];
            ns = 32'd0;
        end
    end
end

always @(posedge clk) begin
    if (rst) begin
        buf_q <= {8*B{1'b0}}; cnt <= {CB{1'b0}}; pos <= 32'd0; skip <= 32'd0; o_valid <= 1'b0;
    end else begin
        buf_q <= nb; cnt <= nc; skip <= ns;
        o_valid <= go; o_pos <= pos; o_num <= tagv[7:3];
        if (go) pos <= pos + L;
    end
end

initial begin
    if (W != 16) begin
        $error("hw_x_shift_loop: W = %0d, want 16 (a header of up to 15 bytes within the W bytes decoded)", W);
        $finish;
    end
end

endmodule

`resetall

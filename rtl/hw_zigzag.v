/*
 * hw_zigzag -- combinational ZigZag decode for protobuf sint32 / sint64.
 *
 *   value_out = (value_in >> 1) ^ -(value_in & 1)     (two's complement, WIDTH bits)
 *
 * sint64: WIDTH = 64, value_in = the varint's 64-bit value.
 * sint32: WIDTH = 32, value_in = the varint's value[31:0] (the official libraries truncate the
 *         64-bit varint to 32 bits first, then decode; e.g. 2^32+1 decodes to -1).
 * One XOR level; no clock.
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module hw_zigzag #(
    // Width of the encoded and decoded value in bits: 32 (sint32) or 64 (sint64).
    parameter WIDTH = 64
) (
    input  wire [WIDTH-1:0] value_in,   // ZigZag-encoded value
    output wire [WIDTH-1:0] value_out   // decoded two's-complement value
);

initial begin
    if (WIDTH != 32 && WIDTH != 64) begin
        $error("Error: WIDTH must be 32 or 64 (instance %m)");
        $finish;
    end
end

assign value_out = {1'b0, value_in[WIDTH-1:1]} ^ {WIDTH{value_in[0]}};

endmodule

`resetall
`default_nettype wire

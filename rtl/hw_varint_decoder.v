/*
 * hw_varint_decoder -- combinational protobuf base-128 varint decoder.
 *
 * in_bytes holds up to 10 bytes LSB first (byte i = in_bytes[8*i +: 8], e.g. the low 10
 * bytes of hw_stream_reader's peek window); avail_bytes says how many of them are valid
 * (values >= 10 mean all ten).
 *
 * Outputs (purely combinational, no clock; register them in the caller if timing needs it;
 * depth is a 10-bit prefix-AND plus a 10-way OR per value bit):
 *   ok         = a terminating byte (bit 7 clear) lies within the first min(avail,10) bytes
 *   length     = 1..10, the varint's length in bytes, when ok; 0 otherwise
 *   value      = the decoded 64-bit value when ok; unspecified otherwise
 *   incomplete = no terminator within the avail_bytes (< 10) valid bytes: wait for more
 *                input, or, if the input ends there, the varint is truncated
 *   overlong   = ten valid bytes and none terminates: an over-long varint (error)
 *   over32     = ok, but not acceptable as a field TAG under upb's rule:
 *                length > 5 or value >= 2^32 (see below)
 * Exactly one of ok / incomplete / overlong is set.
 *
 * The rule, matching the official protobuf library (checked against the Python package
 * 6.33, both its upb backend and its pure-Python backend; see test_hw_varint_decoder.py):
 *   - a varint is at most 10 bytes; a 10th byte with bit 7 set (an 11th byte) is an error;
 *   - payload bits beyond bit 63 are silently DROPPED: in the 10th byte only bit 0 counts,
 *     so ff ff ff ff ff ff ff ff ff 7f decodes like ...ff 01 to 2^64-1 (int64 -1), and
 *     ...ff 02 decodes to 2^63-1. Non-minimal encodings (80 00, 80 80 ... 00) are accepted.
 *   - narrower types truncate the 64-bit value: int32/uint32/enum take value[31:0],
 *     sint32 = zigzag(value[31:0]), sint64 = zigzag(value), bool = (value != 0).
 *   - tags: upb rejects a tag varint longer than 5 bytes or with a value >= 2^32 (the
 *     pure-Python backend is laxer); `over32` flags that case so a core can follow upb.
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module hw_varint_decoder #(
    // Width of avail_bytes (enough to hold the caller's byte count; >= 4 to express 10).
    parameter AVAIL_WIDTH = 5
) (
    input  wire [79:0]            in_bytes,
    input  wire [AVAIL_WIDTH-1:0] avail_bytes,
    output wire [63:0]            value,
    output wire [3:0]             length,
    output wire                   ok,
    output wire                   incomplete,
    output wire                   overlong,
    output wire                   over32
);

// ---------------------------------------------------------------- parameter checks
initial begin
    if (AVAIL_WIDTH < 4 || AVAIL_WIDTH > 32) begin
        $error("Error: AVAIL_WIDTH must be in 4..32 (instance %m)");
        $finish;
    end
end

// 32-bit copy of avail_bytes for width-clean comparisons
wire [31:0] avail32 = {{32-AVAIL_WIDTH{1'b0}}, avail_bytes};

// per-byte valid bits, the first byte with bit 7 clear, the value and the length, built in
// local variables and each stored once: a store to a module-level variable wakes its
// readers, in a simulator once per loop iteration otherwise (eighteen of these decoders sit
// in the protobuf core's input stage; continuous assignments per byte simulate slower still)
reg  [9:0] valid;
reg  [9:0] term;       // one-hot: first byte with bit 7 clear (0 if none in ten bytes)
reg  [63:0] value_r;
reg  [3:0]  length_r;

always @* begin : g_decode
    reg  [9:0]  c, v;    // bytes' bit 7, valid bytes
    reg  [9:0]  reach;   // reach[i]: bytes 0..i-1 all have bit 7 set, so byte i belongs to the varint
    reg  [63:0] val;
    reg  [3:0]  len;
    integer i;
    val = 64'd0;
    len = 4'd0;
    reach[0] = 1'b1;
    for (i = 0; i < 10; i = i + 1) begin
        c[i] = in_bytes[8*i + 7];
        v[i] = avail32 > i;
    end
    for (i = 1; i < 10; i = i + 1) begin
        reach[i] = reach[i-1] && c[i-1];
    end
    // value: OR of the 7-bit payloads of the reached bytes; bits beyond 63 are dropped
    for (i = 0; i < 9; i = i + 1) begin
        if (reach[i]) begin
            val = val | ({57'd0, in_bytes[8*i +: 7]} << (7*i));
        end
    end
    if (reach[9]) begin
        val[63] = in_bytes[72];
    end
    for (i = 0; i < 10; i = i + 1) begin
        if (reach[i] && !c[i] && v[i]) begin
            len = i[3:0] + 4'd1;
        end
    end
    valid = v;
    term = reach & ~c;
    value_r = val;
    length_r = len;
end

wire found = |(term & valid);

assign value      = value_r;
assign length     = length_r;
assign ok         = found;
assign incomplete = !found && (avail32 < 32'd10);
assign overlong   = !found && (avail32 >= 32'd10);
assign over32     = found && ((length_r > 4'd5) || (value_r[63:32] != 32'd0));

endmodule

`resetall
`default_nettype wire

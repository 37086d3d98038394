/*
 * hw_pb_insts -- the protobuf core's instance tables and its dropped-map-entry list
 * (hw_pb_core): what the core records per input, in the pre-pass (or in one pass as it
 * goes), for the write pass and the required check to look up.
 *
 * Instance tables (2**INST_BITS entries, indexed by the instance number: message instances
 * in creation order):
 *   created  msg (16-bit message type), cb / sb (the instance's count and state bases),
 *            written together through one port when the instance is created;
 *   placed   off (40-bit struct offset in the image), start (the input offset of the tag
 *            that made it: the required check's error offset), written together through a
 *            second port when the write pass allocates the struct.
 * Read ports, all ASYNCHRONOUS (LUT RAM style; not yet a registered boundary):
 *   ra_c     the instance being entered (the core's c_id): cb_q, sb_q, off_q;
 *   ra_r     the instance the required check is at (req_id): msg_r, off_r, start_r;
 *   ra_r_next  the NEXT cycle's required-check instance: msg_r_next is its message type
 *            as the table will hold it then (a write to the same entry in this cycle
 *            forwarded), so the core can start its message-table read a cycle ahead.
 *
 * Dropped-map-entry list (2**DROP_BITS entries of 32 bits): the input offsets of the map
 * entries the pre-pass dropped (entries holding unknown fields), in input order; the write
 * pass walks it with a counter. drop_we / drop_wa / drop_wd write at the clock edge;
 * drop_q = entry drop_ra, drop_last = entry drop_ra - 1 (modulo the size), both
 * ASYNCHRONOUS reads. It lives here because, like the instance tables, it is an index the
 * pre-pass builds for the write pass, addressed by a counter of the core's (it is too small
 * to be a module of its own).
 *
 * A read in the cycle of a write to the same entry shows the old value (but msg_r_next).
 * Nothing is reset: the core writes an entry before it reads it.
 *
 * (Not merged with hw_pb_counts: see its header.)
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module hw_pb_insts #(
    // log2 of the instance tables' entries (the core's INST_BITS), 1..31
    parameter INST_BITS = 10,
    // log2 of the dropped-map-entry list's entries (the core's DROP_BITS), 1..31
    parameter DROP_BITS = 8
) (
    input  wire                 clk,

    // instance created: message type, count base, state base
    input  wire                 im_we,
    input  wire [INST_BITS-1:0] im_wa,
    input  wire [15:0]          msg_wd,
    input  wire [31:0]          cb_wd,
    input  wire [31:0]          sb_wd,
    // instance placed: struct offset, first input byte
    input  wire                 imw_we,
    input  wire [INST_BITS-1:0] imw_wa,
    input  wire [39:0]          off_wd,
    input  wire [31:0]          start_wd,

    input  wire [INST_BITS-1:0] ra_c,
    output wire [31:0]          cb_q,
    output wire [31:0]          sb_q,
    output wire [39:0]          off_q,
    input  wire [INST_BITS-1:0] ra_r,
    output wire [15:0]          msg_r,
    output wire [39:0]          off_r,
    output wire [31:0]          start_r,
    input  wire [INST_BITS-1:0] ra_r_next,
    output wire [15:0]          msg_r_next,

    // dropped-map-entry list
    input  wire                 drop_we,
    input  wire [DROP_BITS-1:0] drop_wa,
    input  wire [31:0]          drop_wd,
    input  wire [DROP_BITS-1:0] drop_ra,
    output wire [31:0]          drop_q,
    output wire [31:0]          drop_last
);

initial begin
    if (INST_BITS < 1 || INST_BITS > 31) begin
        $error("Error: INST_BITS must be in 1..31 (instance %m)");
        $finish;
    end
    if (DROP_BITS < 1 || DROP_BITS > 31) begin
        $error("Error: DROP_BITS must be in 1..31 (instance %m)");
        $finish;
    end
end

reg [15:0] im_msg [0:(1 << INST_BITS)-1];
reg [31:0] im_cb [0:(1 << INST_BITS)-1];
reg [31:0] im_sb [0:(1 << INST_BITS)-1];
reg [39:0] im_off [0:(1 << INST_BITS)-1];
reg [31:0] im_start [0:(1 << INST_BITS)-1];
reg [31:0] drop_mem [0:(1 << DROP_BITS)-1];

assign cb_q = im_cb[ra_c];
assign sb_q = im_sb[ra_c];
assign off_q = im_off[ra_c];
assign msg_r = im_msg[ra_r];
assign off_r = im_off[ra_r];
assign start_r = im_start[ra_r];
assign msg_r_next = (im_we && im_wa == ra_r_next) ? msg_wd : im_msg[ra_r_next];
assign drop_q = drop_mem[drop_ra];
// (the entry before drop_ra, wrapping: the index is DROP_BITS wide, not an integer's, so
// drop_ra = 0 reads the last entry, not past the memory; the core reads drop_last only
// when its counter is not 0)
wire [DROP_BITS-1:0] drop_ra_m1 = drop_ra - 1'b1;
assign drop_last = drop_mem[drop_ra_m1];

always @(posedge clk) begin
    if (im_we) begin
        im_msg[im_wa] <= msg_wd;
        im_cb[im_wa] <= cb_wd;
        im_sb[im_wa] <= sb_wd;
    end
    if (imw_we) begin
        im_off[imw_wa] <= off_wd;
        im_start[imw_wa] <= start_wd;
    end
    if (drop_we) drop_mem[drop_wa] <= drop_wd;
end

endmodule

`resetall
`default_nettype wire

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
 * Reads are addressed with the NEXT cycle's instance (the core's c_id_next, req_id_next):
 *   ra_c_next  the instance being entered (c_id): cb_q, sb_q, off_q, REGISTERED;
 *   ra_r_next  the instance the required check is at (req_id): off_r, start_r, REGISTERED;
 *            msg_r_next, its message type, read ASYNCHRONOUSLY in this cycle (the core
 *            addresses its message table with it a cycle ahead; LUT RAM), and msg_r, the
 *            same registered.
 * A registered output shows, in the cycle after its address was given, the entry as the
 * memory holds it then: a write to the same entry in the cycle of the address is forwarded
 * past the RAM's read (a registered hit flag chooses the registered write data), as the
 * frame stack does (hw_pb_frames); msg_r_next likewise shows this cycle's write to its
 * entry. So every output is the entry of the core's c_id_reg / req_id_reg as the table holds
 * it in every cycle, as the asynchronous reads of those registers before were.
 *
 * Dropped-map-entry list (2**DROP_BITS entries of 32 bits): the input offsets of the map
 * entries the pre-pass dropped (entries holding unknown fields), in input order; the write
 * pass walks it with a counter. drop_we / drop_wa / drop_wd write at the clock edge;
 * drop_q = entry drop_ra_next, drop_last = entry drop_ra_next - 1 (modulo the size), both
 * REGISTERED as above (addressed with the core's next counter, ndrop_next). It lives here
 * because, like the instance tables, it is an index the pre-pass builds for the write pass,
 * addressed by a counter of the core's (it is too small to be a module of its own).
 *
 * Registered boundaries: every read but msg_r_next's (the one asynchronous read, of the
 * message types only). Nothing is reset: the core writes an entry before it reads it;
 * the registered outputs are 0 before their first read.
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

    // (registered: entry ra_c_next / ra_r_next of the previous cycle, writes forwarded)
    input  wire [INST_BITS-1:0] ra_c_next,
    output wire [31:0]          cb_q,
    output wire [31:0]          sb_q,
    output wire [39:0]          off_q,
    input  wire [INST_BITS-1:0] ra_r_next,
    output wire [15:0]          msg_r,
    output wire [39:0]          off_r,
    output wire [31:0]          start_r,
    output wire [15:0]          msg_r_next,    // entry ra_r_next now (asynchronous), write forwarded

    // dropped-map-entry list
    input  wire                 drop_we,
    input  wire [DROP_BITS-1:0] drop_wa,
    input  wire [31:0]          drop_wd,
    input  wire [DROP_BITS-1:0] drop_ra_next,
    output wire [31:0]          drop_q,        // (registered) entry drop_ra_next
    output wire [31:0]          drop_last      // (registered) entry drop_ra_next - 1
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

assign msg_r_next = (im_we && im_wa == ra_r_next) ? msg_wd : im_msg[ra_r_next];
// (the entry before drop_ra_next, wrapping: the index is DROP_BITS wide, not an integer's,
// so 0 reads the last entry, not past the memory; the core reads drop_last only when its
// counter is not 0)
wire [DROP_BITS-1:0] drop_ra_m1 = drop_ra_next - 1'b1;

// the registered reads: the RAMs' read registers, the write data and per read a hit flag
reg [31:0] cb_rd = 32'd0, sb_rd = 32'd0, start_r_rd = 32'd0, drop_rd = 32'd0, drop_last_rd = 32'd0;
reg [39:0] off_rd = 40'd0, off_r_rd = 40'd0;
reg [15:0] msg_r_reg = 16'd0;
reg [31:0] cb_fwd = 32'd0, sb_fwd = 32'd0, start_fwd = 32'd0, drop_fwd = 32'd0;
reg [39:0] off_fwd = 40'd0;
reg        hit_c = 1'b0, hit_cw = 1'b0, hit_rw = 1'b0, hit_d = 1'b0, hit_dl = 1'b0;
assign cb_q = hit_c ? cb_fwd : cb_rd;
assign sb_q = hit_c ? sb_fwd : sb_rd;
assign off_q = hit_cw ? off_fwd : off_rd;
assign msg_r = msg_r_reg;
assign off_r = hit_rw ? off_fwd : off_r_rd;
assign start_r = hit_rw ? start_fwd : start_r_rd;
assign drop_q = hit_d ? drop_fwd : drop_rd;
assign drop_last = hit_dl ? drop_fwd : drop_last_rd;

always @(posedge clk) begin
    cb_rd <= im_cb[ra_c_next];
    sb_rd <= im_sb[ra_c_next];
    off_rd <= im_off[ra_c_next];
    off_r_rd <= im_off[ra_r_next];
    start_r_rd <= im_start[ra_r_next];
    msg_r_reg <= msg_r_next;
    drop_rd <= drop_mem[drop_ra_next];
    drop_last_rd <= drop_mem[drop_ra_m1];
    cb_fwd <= cb_wd;
    sb_fwd <= sb_wd;
    off_fwd <= off_wd;
    start_fwd <= start_wd;
    drop_fwd <= drop_wd;
    hit_c <= im_we && im_wa == ra_c_next;
    hit_cw <= imw_we && imw_wa == ra_c_next;
    hit_rw <= imw_we && imw_wa == ra_r_next;
    hit_d <= drop_we && drop_wa == drop_ra_next;
    hit_dl <= drop_we && drop_wa == drop_ra_m1;
end

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

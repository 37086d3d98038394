/*
 * hw_pb_input -- the protobuf core's input stage: the Stream Reader's window decoded into
 * registers, so the state machine never runs the varint decoders in its own cycle.
 *
 * A decode set describes the stream at one position p: the tag varint there (value,
 * length, whole, > 32 bits), the varint right after it (the value or length prefix), both
 * lengths together, how many bytes from p it looked at (`wav`), and the bytes left from p
 * to both bounds (brem_fr = fr_end - p, brem_v = vend - p). The decodes do not know the
 * bound: the consumer limits them (a varint of length L is whole when L <= brem).
 *
 * Two sets are registered every cycle from the window at the reader's position `pos`:
 *   cur   the set at pos;
 *   spec  the set at pos + L, where L is the length of the field at pos as the set the
 *         outputs show now says (tag + value for wire types 0, 1, 5; tag + length prefix +
 *         length for 2; the tag alone otherwise): the next field's header, decoded
 *         speculatively while the state machine handles this one (ProtoACC's field-level
 *         pipelining; when the field is not whole in the window the set has wav = 0).
 * A cycle later the outputs show spec if the reader is at its position and not at cur's
 * (it skipped the field whole, as the S_TAG fast paths and the one-pass scan do), else cur.
 * `fresh`: the shown set is at the reader's position, neither bound has changed (but the
 * frame's end may have become the end of the frame below, a pop, or of the child being
 * entered: the bytes left to those are registered too) and the reader did not restart.
 * While the consumer copies a string, spec goes to the copy's end instead (hint_en), so
 * the tag after it is ready too; and so on a map field's tag, to the entry's first field. When not fresh the state machine waits a cycle; so a
 * field it handles in one cycle and does not skip whole costs two.
 *
 * Registered outputs: every output but cur_num_next / spec_num_next comes from registers
 * through the shown multiplexer, whose select (shown_spec) and the brem_fr select are
 * registers themselves, as is `fresh`: they are decided a cycle ahead, from this cycle's
 * inputs taken as next cycle's values, so no path runs from the reader's position or the
 * bound registers through a compare into the shown set. Taken a cycle ahead:
 *   the position: the reader is at pos + step_len next cycle when it moves (step, the
 *     Stream Reader's adv_en / adv_len; a back skip is a length modulo 2^32), else at pos;
 *     so "at cur" is no step or step_len == 0, and "at spec" is step_len == the 4-bit
 *     skip spec was decoded past: small compares on the late skip length, not the 32-bit
 *     sums. After a restart (0 next cycle; never with a step) or rst the shown set is cur
 *     and not fresh (comparing positions says the same unless spec's wrapped past 2^32);
 *   the bounds: fr_end_next and vend_next, the values fr_end and vend hold next cycle,
 *     compared with this cycle's fr_end, fr_end_up, fr_end_dn and vend.
 * cur_num_next / spec_num_next are combinational (the sets' register inputs, for a table
 * lookup a cycle ahead).
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module hw_pb_input (
    input  wire         clk,
    input  wire         rst,
    input  wire         restart,      // the reader restarts this cycle (its pos is 0 next cycle)
    input  wire [127:0] win,          // the reader's window (byte 0 at pos)
    input  wire [4:0]   win_avail,    // its valid bytes
    input  wire [31:0]  pos,
    // the reader moves this cycle: pos next cycle is pos + step_len (modulo 2^32) when step
    // (hw_stream_reader adv_en, adv_len; never with restart), else pos
    input  wire         step,
    input  wire [31:0]  step_len,
    input  wire [31:0]  fr_end,       // the current frame's end
    input  wire [31:0]  fr_end_up,    // the end of the frame below (where a pop goes back to)
    input  wire [31:0]  fr_end_dn,    // the end of the child being entered
    input  wire [31:0]  vend,         // a packed run's end
    input  wire [31:0]  fr_end_next,  // the values fr_end and vend hold next cycle
    input  wire [31:0]  vend_next,
    // the consumer knows what it skips next, from its registers (a copy's last bytes):
    // spec goes there instead of past the shown field ({longer than 15 bytes, length})
    input  wire         hint_en,
    input  wire [4:0]   hint_fl,

    output wire         fresh,        // the set below is at pos, with this cycle's bounds (a register)
    output wire [4:0]   wav,          // bytes from its position the decodes looked at
    output wire [31:0]  brem_fr,
    output wire [31:0]  brem_v,
    output wire [63:0]  tag_val,
    output wire [3:0]   tag_len,      // 0 when not found
    output wire         tag_found,    // whole within wav bytes
    output wire         tag_o32,      // found and longer than 5 bytes or above 32 bits
    output wire [63:0]  val_val,
    output wire [3:0]   val_len,
    output wire         val_found,    // whole within wav - tag_len bytes
    output wire [4:0]   hdr_len,      // tag_len + val_len
    // for a table lookup a cycle ahead (hw_pb_core, TABLES=1): the field numbers of the
    // tags the two sets will hold next cycle (their registers' inputs), and whether the
    // outputs now show spec
    output wire [31:0]  cur_num_next,
    output wire [31:0]  spec_num_next,
    output wire         shown_spec
);

// the decodes of one window (hw_pb_input_dec's `dec`)
localparam DW = 64 + 4 + 1 + 1 + 64 + 4 + 1 + 5 + 5;

// ---------------------------------------------------------------- two decodes of a window
// cur: the window at pos
wire [DW-1:0] c_dec, s_dec;
hw_pb_input_dec dec_c (.w(win), .avail(win_avail), .dec(c_dec));

// spec: the window from the end of the field the shown set describes
wire [4:0]  shown_fl;        // {big, length}
wire [4:0]  sel_fl = hint_en ? hint_fl : shown_fl;
wire [3:0]  s_skip = sel_fl[4] ? 4'd0 : sel_fl[3:0];
wire [4:0]  s_avail = (sel_fl[4] || {1'b0, s_skip} > win_avail) ? 5'd0 : win_avail - {1'b0, s_skip};
reg  [127:0] s_win;
integer      sb;
always @* begin
    for (sb = 0; sb < 16; sb = sb + 1)
        s_win[8 * sb +: 8] = (sb + {28'd0, s_skip} < 16) ? win[8 * (sb + {28'd0, s_skip}) +: 8] : 8'd0;
end
hw_pb_input_dec dec_s (.w(s_win), .avail(s_avail), .dec(s_dec));

// ---------------------------------------------------------------- the two registered sets
// {wav, brem_fr, brem_v, the decodes (hw_pb_input_dec), brem_up and brem_dn (to the end
//  of the frame below and of the child)}
localparam SW = 5 + 32 + 32 + DW + 32 + 32;
reg  [SW-1:0] cur_q = {SW{1'b0}}, spec_q = {SW{1'b0}};
wire [31:0]   s_pos = pos + {28'd0, s_skip};
always @(posedge clk) begin
    cur_q  <= {win_avail, fr_end - pos, vend - pos, c_dec, fr_end_up - pos, fr_end_dn - pos};
    spec_q <= {s_avail, fr_end - s_pos, vend - s_pos, s_dec, fr_end_up - s_pos, fr_end_dn - s_pos};
end

// ---------------------------------------------------------------- next cycle's selects
// where the reader is next cycle, against the two sets' positions (pos, s_pos): pos +
// step_len when it moves, else pos (then at_cur_n holds, so at_spec_n, which compares
// step_len alone, does not matter to shown_spec or fresh). A restart (never with a step:
// the reader takes nothing in a start cycle) or rst puts it at 0, where neither set is
// unless cur is (spec's position pos + s_skip would have to wrap past 2^32): shown is cur
// then either way, and not fresh.
wire          to_zero = rst || restart;
wire          at_cur_n = rst || !step || step_len == 32'd0;
wire          at_spec_n = step_len == {28'd0, s_skip};
// the frame's end next cycle: the one now, the one below it (a pop), the child's (entered)
wire          same_end_n = fr_end_next == fr_end;
wire          up_end_n = fr_end_next == fr_end_up;
wire          dn_end_n = fr_end_next == fr_end_dn;
reg           shown_spec_q = 1'b0, same_end_q = 1'b1, up_end_q = 1'b0, fresh_q = 1'b0;
always @(posedge clk) begin
    // shown next cycle: spec when the reader is at its position (it skipped the field
    // whole) and not at cur's (there spec, at the same place, never saw more), else cur
    shown_spec_q <= at_spec_n && !at_cur_n;
    same_end_q   <= same_end_n;
    up_end_q     <= up_end_n;
    fresh_q      <= !to_zero && (at_spec_n || at_cur_n) && (same_end_n || up_end_n || dn_end_n)
                    && vend_next == vend;
end

assign        shown_spec = shown_spec_q;
wire [SW-1:0] shown = shown_spec ? spec_q : cur_q;
// the tag value is the decodes' top 64 bits; its field number bits 34:3
assign cur_num_next = c_dec[DW-1-29 -: 32];
assign spec_num_next = s_dec[DW-1-29 -: 32];
wire [31:0]   shown_brem_fr, shown_brem_up, shown_brem_dn;
assign {wav, shown_brem_fr, brem_v, tag_val, tag_len, tag_found, tag_o32, val_val, val_len, val_found,
        hdr_len, shown_fl, shown_brem_up, shown_brem_dn} = shown;
// the frame's end as registered, or the one below it after a pop, or the child's after
// entering it
assign brem_fr = same_end_q ? shown_brem_fr : up_end_q ? shown_brem_up : shown_brem_dn;
assign fresh = fresh_q;

endmodule

// hw_pb_input's decodes of one window: the tag at byte 0, the varint after it, both
// lengths, the field's length. dec = {tag_val, tag_len, tag_found, tag_o32, val_val,
// val_len, val_found, hdr_len, {longer than 15 bytes, field length}}.
/* verilator lint_off DECLFILENAME */
// (a helper of hw_pb_input only: kept in its file)
module hw_pb_input_dec (
    input  wire [127:0] w,            // the window from the set's position
    input  wire [4:0]   avail,        // its valid bytes
    output wire [148:0] dec
);

// the field's length from its two decodes: {longer than 15 bytes (or not known), length}
// (length 0 then)
function [4:0] field_len;
    input [2:0]  wt;
    input        f1;
    input [3:0]  l1;
    input        f2;
    input [4:0]  hl;
    input [63:0] v2;
    reg [33:0] fl;
    begin
        case (wt)
        3'd0: fl = {29'd0, hl};
        3'd1: fl = {30'd0, l1} + 34'd8;
        3'd5: fl = {30'd0, l1} + 34'd4;
        3'd2: fl = f2 ? {29'd0, hl} + {2'd0, v2[31:0]} : {30'd0, l1};
        default: fl = {30'd0, l1};
        endcase
        if (!f1) fl = 34'd0;
        if (fl > 34'd15 || (f1 && wt == 3'd2 && f2 && v2[63:32] != 32'd0)) field_len = 5'b10000;
        else field_len = {1'b0, fl[3:0]};
    end
endfunction

wire [63:0] v1, v2;
wire [3:0]  l1, l2;
wire        f1, f2, o1;
/* verilator lint_off UNUSEDSIGNAL */
wire        inc1, over1, inc2, over2, o2;
/* verilator lint_on UNUSEDSIGNAL */
hw_varint_decoder #(.AVAIL_WIDTH(5)) dec_tag (
    .in_bytes(w[79:0]), .avail_bytes(avail), .value(v1), .length(l1),
    .ok(f1), .incomplete(inc1), .overlong(over1), .over32(o1));
// the bytes after the tag (byte selects, not a shifter: see win3 in hw_pb_core)
reg  [79:0] w_after;
integer     b;
always @* begin
    for (b = 0; b < 10; b = b + 1)
        w_after[8 * b +: 8] = (b + {28'd0, l1} < 16) ? w[8 * (b + {28'd0, l1}) +: 8] : 8'd0;
end
hw_varint_decoder #(.AVAIL_WIDTH(5)) dec_val (
    .in_bytes(w_after), .avail_bytes(avail - {1'b0, l1}), .value(v2),
    .length(l2), .ok(f2), .incomplete(inc2), .overlong(over2), .over32(o2));
wire [4:0]  hl = {1'b0, l1} + {1'b0, l2};
assign dec = {v1, l1, f1, o1, v2, l2, f2, hl, field_len(v1[2:0], f1, l1, f2, hl, v2)};

endmodule
/* verilator lint_on DECLFILENAME */

`resetall
`default_nettype wire

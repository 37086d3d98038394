/*
 * hw_pb_input -- the protobuf core's input stage: the Stream Reader's window decoded into
 * registers, so the state machine never runs the varint decoders in its own cycle.
 *
 * A decode set describes the stream at one position p: the tag varint there (value,
 * length, whole, > 32 bits), the varint right after it (the value or length prefix), both
 * lengths together, how many bytes from p it looked at (`wav`), and the bytes left from p
 * to both bounds (brem_fr = fr_end - p, brem_v = vend - p). The decodes do not know the
 * bound: the consumer limits them (a varint of length L is whole when L <= brem), with
 * the compares it needs made before the set's register (bnd_fr, bnd_v: the lengths and
 * the value against each bound's bytes left).
 *
 * Two sets are registered every cycle from the window at the reader's position `pos`:
 *   cur   the set at pos;
 *   spec  the set at pos + L, where L is the length of the field at pos as the set the
 *         outputs show now says (tag + value for wire types 0, 1, 5; tag + length prefix +
 *         length for 2; the tag alone otherwise): the next field's header, decoded
 *         speculatively while the state machine handles this one (ProtoACC's field-level
 *         pipelining; when the field is not whole in the window the set has wav = 0).
 * How the sets decode: the varint at each of the window's 16 bytes comes from the window
 * alone (sixteen hw_varint_decoders, bytes past the window read as 0), with whether it
 * ends within the valid bytes; from those, the whole set as if it were at each byte b (the
 * tag at b, the varint after it, both lengths, the field's length), but for the value
 * after the tag, which a one-hot of its position picks. spec picks the set at its skip
 * and that one-hot with one-hot multiplexers, then the value; cur is the set at byte 0.
 * So spec's skip, which comes late in the cycle (the shown field's length or the hint),
 * selects precomputed decodes into the registers, not the input of a byte shifter, two
 * decoders and the field-length add in series (hw_pb_input_dec decodes that way: the
 * reference every simulation checks both sets against, `$fatal` on a difference).
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
    // the field's length from its tag on (modulo 2^32): hdr_len for wire type 0, hdr_len +
    // val_val's low half for 2, tag_len + 4 for 5, tag_len + 8 for 1 and the others
    output wire [31:0]  fld_len,
    // the bound checks against brem_fr and brem_v, registered with the set (bnd_flags below):
    // {av < 10, av < 5 (av: the bytes a tag decode may read, b when wav >= b else wav),
    //  tag_len <= b, hdr_len <= b, wav >= b, hdr_len + val_val <= b (specified with both
    //  varints found), fld_len >= b, fld_len == b}
    output wire [7:0]   bnd_fr,
    output wire [7:0]   bnd_v,
    // the tag varint read as a length prefix (the general states' length check: the reader
    // is past the tag): tag_len + tag_val <= brem_fr, with the tag found and its value below
    // 2^32 (the same per-byte compares as bnd's `le`, registered with the set)
    output wire         tlen_fr,
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
// Both sets are picked from decodes of the window alone (no skip in front of a decoder):
//   V_p, N_p  the varint at each byte p (hw_varint_decoder reading bytes p..p+9, bytes past
//             the window as 0, not limited to the valid bytes): value, length (0: no end
//             within ten bytes);
//   fit_p     it ends within the valid bytes (p + N_p <= win_avail; from the bytes' bit 7
//             and the valid-byte mask, so unknown bytes past the input leave it known);
//   S_p       what a field's length needs of it as the varint after a tag: {fit_p, N_p,
//             N_p + V_p > 15, (N_p + V_p)[3:0]};
//   R_b       the set as if at byte b (avail win_avail - b) but for the varint's value
//             after the tag: the tag (V_b, its length, found, above 32 bits) and, from the
//             S_p at b + N_b (picked by N_b), that varint's length and found bit, both
//             lengths and the field's length; and a one-hot of where that varint starts
//             (b + N_b when the tag is found, else b, as the decoders in series take it
//             with a tag length of 0; none past the window: a 0 byte, value 0).
// cur is R_0; spec picks R_s and its one-hot by its skip s (one-hot AND-OR multiplexers,
// not a variable part-select, which yosys makes a shifter); each set's value after the
// tag is the V_p its one-hot picks. So the skip, late in the cycle, selects R_s straight
// into the registers, and the value through one more multiplexer, instead of a byte
// shifter, two varint decoders and the field-length add in series (hw_pb_input_dec, the
// reference every simulation checks both sets against).
localparam TW = 64 + 4 + 1 + 1;                   // R_b's tag: {v1, l1, f1, o1}
localparam SW1 = 1 + 4 + 1 + 4;                   // S_p
wire [199:0]  wz = {72'd0, win};                  // (byte 15's decoder reads bytes 15-24)
wire [64*16-1:0] pv;                              // V_p
wire [4*16-1:0]  pn;                              // N_p
genvar g;
generate
for (g = 0; g < 16; g = g + 1) begin : g_at
    /* verilator lint_off UNUSEDSIGNAL */
    wire ok, inc, over, o32;
    /* verilator lint_on UNUSEDSIGNAL */
    hw_varint_decoder #(.AVAIL_WIDTH(5)) d (
        .in_bytes(wz[8 * g +: 80]), .avail_bytes(5'd10), .value(pv[64 * g +: 64]), .length(pn[4 * g +: 4]),
        .ok(ok), .incomplete(inc), .overlong(over), .over32(o32));
end
endgenerate

reg  [SW1*16-1:0] sum;         // S_p
reg  [TW*16-1:0]  tb;          // R_b's tag: {V_b, length, found, above 32 bits}
reg  [16*16-1:0]  ohj;         // R_b's one-hot (bit 16b + p: the varint after the tag at p)
// (the blocks below build their results in local variables and store each once: a store
// to a module-level variable wakes everything reading it, once per loop iteration in a
// simulator otherwise)
always @* begin : g_sets
    reg  [25:0]       cont, va;    // byte k's bit 7 (0 past the window), k < win_avail
    reg  [15:0]       fit;
    reg  [SW1*16-1:0] sum_l;
    reg  [TW*16-1:0]  tb_l;
    reg  [16*16-1:0]  ohj_l;
    reg               rch, f1b, vhi;
    reg  [5:0]        bsum;
    integer           p, i, k;
    for (k = 0; k < 26; k = k + 1) begin
        cont[k] = k < 16 ? win[8 * (k % 16) + 7] : 1'b0;
        va[k] = k < win_avail;
    end
    for (p = 0; p < 16; p = p + 1) begin
        fit[p] = 1'b0;
        rch = 1'b1;
        for (i = 0; i < 10; i = i + 1) begin
            fit[p] = fit[p] | (rch & !cont[p + i] & va[p + i]);
            rch = rch & cont[p + i];
        end
        bsum = {2'd0, pn[4 * p +: 4]} + {1'b0, pv[64 * p +: 5]};
        vhi = pv[64 * p + 32 +: 32] != 32'd0;
        sum_l[SW1 * p +: SW1] = {fit[p], pn[4 * p +: 4], vhi || pv[64 * p + 5 +: 27] != 27'd0 || bsum[5:4] != 2'd0, bsum[3:0]};
        f1b = fit[p];
        tb_l[TW * p +: TW] = {pv[64 * p +: 64], f1b ? pn[4 * p +: 4] : 4'd0, f1b,
                              f1b && (pn[4 * p +: 4] > 4'd5 || vhi)};
        // (a found tag is 1-10 bytes: bits p+1..p+10 only, all 0 past the window)
        for (i = 0; i < 16; i = i + 1)
            ohj_l[16 * p + i] = i == p ? !f1b : (i > p && i <= p + 10 && f1b && {28'd0, pn[4 * p +: 4]} == i - p);
    end
    sum = sum_l;
    tb = tb_l;
    ohj = ohj_l;
end

// the rest of a set's decodes from its tag (wire type, length, found) and the S_p of the
// varint after it: {val_len, val_found, hdr_len, {longer than 15 bytes (or not known),
// the field's length}}
function [14:0] set_tail;
    input [2:0]     wt;
    input [3:0]     l1;
    input           f1;
    input [SW1-1:0] u;
    reg   [3:0]     l2;
    reg   [4:0]     hl, m2, fl;
    reg             f2;
    begin
        f2 = f1 && u[9];
        l2 = f2 ? u[8:5] : 4'd0;
        hl = {1'b0, l1} + {1'b0, l2};
        // a length-delimited field: the tag, the length prefix and the length
        m2 = {1'b0, l1} + {1'b0, u[3:0]};
        case (wt)
        3'd0: fl = hl > 5'd15 ? 5'b10000 : hl;
        3'd1: fl = l1 > 4'd7 ? 5'b10000 : {1'b0, l1 + 4'd8};
        3'd5: fl = {1'b0, l1 + 4'd4};   // (l1 <= 10)
        3'd2: fl = !f2 ? {1'b0, l1} : (u[4] || m2[4]) ? 5'b10000 : {1'b0, m2[3:0]};
        default: fl = {1'b0, l1};
        endcase
        if (!f1)
            fl = 5'd0;
        set_tail = {l2, f2, hl, fl};
    end
endfunction

// R_b: {the tag, set_tail's}, its S_p picked by the one-hot
localparam RW = TW + 15;
reg  [RW*16-1:0]  rb;
always @* begin : g_rb
    reg  [RW*16-1:0]  rb_l;
    reg  [SW1-1:0]    sj;
    integer           pb, ib;
    for (pb = 0; pb < 16; pb = pb + 1) begin
        sj = {SW1{1'b0}};
        for (ib = 1; ib <= 10; ib = ib + 1)
            if (pb + ib < 16)
                sj = sj | (sum[SW1 * ((pb + ib) % 16) +: SW1] & {SW1{ohj[16 * pb + (pb + ib) % 16]}});
        rb_l[RW * pb +: RW] = {tb[TW * pb +: TW], set_tail(pv[64 * pb +: 3], tb[TW * pb + 2 +: 4], tb[TW * pb + 1], sj)};
    end
    rb = rb_l;
end

// a set's value after the tag: the V_p its one-hot picks
function [63:0] pick_v;
    input [15:0]        oh;
    input [64*16-1:0]   v;
    integer             q;
    begin
        pick_v = 64'd0;
        for (q = 0; q < 16; q = q + 1)
            pick_v = pick_v | (v[64 * q +: 64] & {64{oh[q]}});
    end
endfunction

// cur: the set at byte 0 (hw_pb_input_dec's `dec` order)
wire [DW-1:0] c_dec = {rb[RW-1 -: TW], pick_v(ohj[0 +: 16], pv), rb[14:0]};

// spec: at the end of the field the shown set describes, or the hinted bytes on; none
// (nothing found, the varint after the tag at byte 0) when that is 16 bytes or more
wire [4:0]  shown_fl;        // {big, length}
wire [4:0]  sel_fl = hint_en ? hint_fl : shown_fl;
wire [3:0]  s_skip = sel_fl[4] ? 4'd0 : sel_fl[3:0];
wire [4:0]  s_avail = (sel_fl[4] || {1'b0, s_skip} > win_avail) ? 5'd0 : win_avail - {1'b0, s_skip};
reg  [RW-1:0] s_t;
reg  [15:0]   s_oh;
reg  [15:0]   s_at;          // a one-hot of spec's tag byte (none when sel_fl[4])
always @* begin : g_spec
    reg  [RW-1:0] t_l;
    reg  [15:0]   oh_l, at_l;
    integer       sb;
    // (none: R_0 with nothing found)
    t_l = sel_fl[4] ? {pv[63:0], {RW-64{1'b0}}} : {RW{1'b0}};
    oh_l = {15'd0, sel_fl[4]};
    for (sb = 0; sb < 16; sb = sb + 1) begin
        at_l[sb] = !sel_fl[4] && sel_fl[3:0] == sb[3:0];
        t_l = t_l | (rb[RW * sb +: RW] & {RW{at_l[sb]}});
        oh_l = oh_l | (ohj[16 * sb +: 16] & {16{at_l[sb]}});
    end
    s_t = t_l;
    s_oh = oh_l;
    s_at = at_l;
end
wire [DW-1:0] s_dec = {s_t[RW-1 -: TW], pick_v(s_oh, pv), s_t[14:0]};

`ifndef SYNTHESIS
// the same two decodes as the decoders in series give them from the window shifted to the
// set's position (hw_pb_input_dec: how the sets were decoded before), checked every cycle
reg  [127:0] s_win;
always @* begin : g_swin
    reg  [127:0] w_l;
    integer      wb;
    for (wb = 0; wb < 16; wb = wb + 1)
        w_l[8 * wb +: 8] = (wb + {28'd0, s_skip} < 16) ? win[8 * (wb + {28'd0, s_skip}) +: 8] : 8'd0;
    s_win = w_l;
end
wire [DW-1:0] c_ref, s_ref;
hw_pb_input_dec ref_c (.w(win), .avail(win_avail), .dec(c_ref));
hw_pb_input_dec ref_s (.w(s_win), .avail(s_avail), .dec(s_ref));
// (bits the reference leaves unknown, from unknown window bytes past the input, are not
// compared: the two propagate them differently)
`ifdef VERILATOR
wire          pick_bad = c_dec != c_ref || s_dec != s_ref;    // (two states: no unknown bits)
`else
// (==? takes the reference's x bits as wildcards; a result other than 1 is a difference; a
// loop over the bits instead was a quarter of the core's simulation time)
wire          pick_bad = (c_dec ==? c_ref) !== 1'b1 || (s_dec ==? s_ref) !== 1'b1;
`endif
always @(posedge clk) begin
    if (!rst && pick_bad)
        $fatal(1, "hw_pb_input: picked decodes %h / %h, decoded in series %h / %h", c_dec, s_dec, c_ref, s_ref);
end
`endif

// ---------------------------------------------------------------- the two registered sets
// A set's bound checks for b bytes left (one of its four), decided before the register so
// that the consumer's checks are one-bit selects after the shown multiplexer instead of
// 32-bit compares (they were the core's critical path): {the bytes a tag decode may read
// (av: b when the window covers it, else wav) below 10 and below 5 (the tag truncated or
// too long: they start the core's decisions), tag_len <= b, hdr_len <= b,
// wav >= b, the header and the varint after it within b (hdr_len + val_val <= b, val_val
// below 2^32: `le`, made per byte position below), the field's length (fld_len) >= b and
// == b (where the field ends the frame)}. For wire type 2 the last two hold where the
// consumer reads them, with the header and the length within the bound: the field reaches
// b exactly when it ends there, hdr_len + val_val == b (`eq`, beside `le`); the other wire
// types' lengths are at most 18.
function [7:0] bnd_flags;
    input [31:0] b;
    input [4:0]  w;
    input [2:0]  wt;     // the set's wire type, tag_len and hdr_len
    input [3:0]  tl;
    input [4:0]  hl;
    input        le, eq; // hdr_len + val_val <= b, == b (val_val below 2^32)
    reg   [4:0]  sl, av;
    reg          bhi, wge;
    begin
        sl = (wt == 3'd0) ? hl : {1'b0, tl} + ((wt == 3'd5) ? 5'd4 : 5'd8);
        // (the lengths are below 32: b's high bits tested apart, early, and 5-bit compares
        // after the late lengths instead of 32-bit ones)
        bhi = b[31:5] != 27'd0;
        wge = !bhi && w >= b[4:0];
        av = wge ? b[4:0] : w;
        bnd_flags = {av < 5'd10, av < 5'd5,
                     bhi || {1'b0, tl} <= b[4:0], bhi || hl <= b[4:0], wge, le,
                     (wt == 3'd2) ? eq : !bhi && sl >= b[4:0], (wt == 3'd2) ? eq : !bhi && sl == b[4:0]};
    end
endfunction
// a set's hdr_len + val_val against b as one add and compares (the packed run's end: the
// core reads none of them there)
function [1:0] val_flags;
    input [31:0] b;
    input [4:0]  hl;
    input [63:0] v;
    reg   [32:0] e;
    begin
        e = {1'b0, v[31:0]} + {28'd0, hl};
        val_flags = {v[63:32] == 32'd0 && e <= {1'b0, b}, v[63:32] == 32'd0 && e == {1'b0, b}};
    end
endfunction
// the field's length (fld_len) from a set's decodes
function [31:0] fld_length;
    input [2:0]  wt;     // the set's wire type, tag_len, hdr_len and val_val's low half
    input [3:0]  tl;
    input [4:0]  hl;
    input [31:0] v;
    begin
        case (wt)
        3'd0: fld_length = {27'd0, hl};
        3'd2: fld_length = {27'd0, hl} + v;
        3'd5: fld_length = {28'd0, tl} + 32'd4;
        default: fld_length = {28'd0, tl} + 32'd8;
        endcase
    end
endfunction
// {wav, brem_fr, brem_v, the decodes (hw_pb_input_dec), brem_up and brem_dn (to the end
//  of the frame below and of the child), the field's length, the bound flags against
//  those four, the tag as a length within the frame's three ends (tlen_fr)}
localparam SW = 5 + 32 + 32 + DW + 32 + 32 + 32 + 32 + 3;
reg  [SW-1:0] cur_q = {SW{1'b0}}, spec_q = {SW{1'b0}};
wire [31:0]   s_pos = pos + {28'd0, s_skip};
wire [31:0]   c_bfr = fr_end - pos, c_bv = vend - pos, c_bup = fr_end_up - pos, c_bdn = fr_end_dn - pos;
wire [31:0]   s_bfr = fr_end - s_pos, s_bv = vend - s_pos, s_bup = fr_end_up - s_pos, s_bdn = fr_end_dn - s_pos;
// (dec's wire type is bits 87:85, tag_len 84:81, the varint after the tag 78:15 (its low
// half 46:15), hdr_len 9:5)
wire [31:0]   c_fl = fld_length(c_dec[87:85], c_dec[84:81], c_dec[9:5], c_dec[46:15]);
wire [31:0]   s_fl = fld_length(s_dec[87:85], s_dec[84:81], s_dec[9:5], s_dec[46:15]);
// The varint after the tag against the frame's bounds (hdr_len + val_val <= b, == b) for
// every byte q it can start at, before the set is picked: X_q = V_q + q + N_q, where the
// value ends counted from pos (the set's skip + its tag_len + the varint's length, when
// both are found), against the bytes left from pos (c_b); a set takes the bit its one-hot
// picks (0 without both varints). So the compare no longer follows the spec set's select
// and value pick (its latest path). Exact unless the spec set's position is past the bound
// (c_b < its skip; its b then wraps modulo 2^32), where the core does not read it (its
// simulation checks the flag against its own compare wherever it reads it). The packed
// run's end (the core reads no value there) keeps one add and compare a set.
reg  [15:0] le_fr, eq_fr, le_up, eq_up, le_dn, eq_dn;
always @* begin : g_vcmp
    reg  [32:0] x;
    reg         lo;
    integer     q;
    for (q = 0; q < 16; q = q + 1) begin
        x = {1'b0, pv[64 * q +: 32]} + q + {29'd0, pn[4 * q +: 4]};
        // (and whole within the valid bytes: S_q's fit bit, so a set without the varint
        // after its tag, or without the tag, whose one-hot then picks the tag's byte, has 0)
        lo = sum[SW1 * q + SW1 - 1] && pv[64 * q + 32 +: 32] == 32'd0;
        le_fr[q] = lo && x <= {1'b0, c_bfr}; eq_fr[q] = lo && x == {1'b0, c_bfr};
        le_up[q] = lo && x <= {1'b0, c_bup}; eq_up[q] = lo && x == {1'b0, c_bup};
        le_dn[q] = lo && x <= {1'b0, c_bdn}; eq_dn[q] = lo && x == {1'b0, c_bdn};
    end
end
wire [15:0] c_oh = ohj[0 +: 16];
wire [1:0]  c_vv = val_flags(c_bv, c_dec[9:5], c_dec[78:15]), s_vv = val_flags(s_bv, s_dec[9:5], s_dec[78:15]);
`define HW_PB_INPUT_BND(b, w, d, le, eq) bnd_flags(b, w, d[87:85], d[84:81], d[9:5], le, eq)
wire [31:0]   c_bnd = {`HW_PB_INPUT_BND(c_bfr, win_avail, c_dec, |(le_fr & c_oh), |(eq_fr & c_oh)),
                       `HW_PB_INPUT_BND(c_bv, win_avail, c_dec, c_vv[1], c_vv[0]),
                       `HW_PB_INPUT_BND(c_bup, win_avail, c_dec, |(le_up & c_oh), |(eq_up & c_oh)),
                       `HW_PB_INPUT_BND(c_bdn, win_avail, c_dec, |(le_dn & c_oh), |(eq_dn & c_oh))};
wire [31:0]   s_bnd = {`HW_PB_INPUT_BND(s_bfr, s_avail, s_dec, |(le_fr & s_oh), |(eq_fr & s_oh)),
                       `HW_PB_INPUT_BND(s_bv, s_avail, s_dec, s_vv[1], s_vv[0]),
                       `HW_PB_INPUT_BND(s_bup, s_avail, s_dec, |(le_up & s_oh), |(eq_up & s_oh)),
                       `HW_PB_INPUT_BND(s_bdn, s_avail, s_dec, |(le_dn & s_oh), |(eq_dn & s_oh))};
`undef HW_PB_INPUT_BND
// the tag varint (at byte 0, or at spec's skip) as a length prefix: the varint compares above
// at the tag's byte (X_q = V_q + q + N_q <= c_b is tag_len + tag_val <= the set's b)
wire [2:0]    c_tl = {le_fr[0], le_up[0], le_dn[0]};
wire [2:0]    s_tl = {|(le_fr & s_at), |(le_up & s_at), |(le_dn & s_at)};
always @(posedge clk) begin
    cur_q  <= {win_avail, c_bfr, c_bv, c_dec, c_bup, c_bdn, c_fl, c_bnd, c_tl};
    spec_q <= {s_avail, s_bfr, s_bv, s_dec, s_bup, s_bdn, s_fl, s_bnd, s_tl};
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
wire [7:0]    shown_bnd_fr, shown_bnd_up, shown_bnd_dn;
wire          shown_tl_fr, shown_tl_up, shown_tl_dn;
assign {wav, shown_brem_fr, brem_v, tag_val, tag_len, tag_found, tag_o32, val_val, val_len, val_found,
        hdr_len, shown_fl, shown_brem_up, shown_brem_dn, fld_len, shown_bnd_fr, bnd_v, shown_bnd_up,
        shown_bnd_dn, shown_tl_fr, shown_tl_up, shown_tl_dn} = shown;
// the frame's end as registered, or the one below it after a pop, or the child's after
// entering it
assign brem_fr = same_end_q ? shown_brem_fr : up_end_q ? shown_brem_up : shown_brem_dn;
assign bnd_fr = same_end_q ? shown_bnd_fr : up_end_q ? shown_bnd_up : shown_bnd_dn;
assign tlen_fr = same_end_q ? shown_tl_fr : up_end_q ? shown_tl_up : shown_tl_dn;
assign fresh = fresh_q;

endmodule

// hw_pb_input's decodes of one window with two varint decoders in series (simulation only:
// the reference hw_pb_input's picked decodes are checked against): the tag at byte 0, the
// varint after it, both lengths, the field's length. dec = {tag_val, tag_len, tag_found,
// tag_o32, val_val, val_len, val_found, hdr_len, {longer than 15 bytes, field length}}.
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
always @* begin : g_after
    reg  [79:0] a_l;
    integer     b;
    for (b = 0; b < 10; b = b + 1)
        a_l[8 * b +: 8] = (b + {28'd0, l1} < 16) ? w[8 * (b + {28'd0, l1}) +: 8] : 8'd0;
    w_after = a_l;
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

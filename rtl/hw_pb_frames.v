/*
 * hw_pb_frames -- the protobuf core's frame stack and group stack (hw_pb_core).
 *
 * Frame stack: the frames below the current one (the current frame is in the core's fr_*
 * registers). DEPTH entries of W-bit records, opaque here: the core packs and unpacks them
 * (its FRW record: msg, inst, off, end, grp, cb, sb, start, pslot, scanned).
 *   push     push / push_a / push_d: entry push_a takes push_d at the clock edge;
 *   read     REGISTERED (block RAM style): ra_next is the address of the NEXT cycle's
 *            read; q shows in that cycle the entry as the memory holds it then, i.e. a push
 *            to the same entry in the cycle ra_next was given is forwarded past the RAM's
 *            read (the RAM reads the old record; a register holds the pushed one and a
 *            registered hit flag chooses it). The core gives ra_next = next depth - 2, so
 *            q is always the record below the current frame.
 *   q (g_q) before any read has been registered is 0; q (g_q) of an entry never pushed is
 *   the simulators' X (the core never uses it).
 *
 * Group stack: the field numbers of the open groups inside an unknown group field
 * (DEPTH + 1 entries of 32 bits, since a group can open at the deepest frame).
 *   gpush / gpush_a / gpush_d write at the clock edge; the read is REGISTERED as the
 *   frame stack's: g_ra_next addresses the next cycle's read, a push to that entry in the
 *   same cycle forwarded, so g_q is that entry as the memory holds it in the cycle g_q
 *   shows it (the core gives the next group depth - 1: g_q is the innermost open group).
 * Both reads are registered boundaries: the next-state logic's address goes into the
 * read register (and the forwarding compare), q / g_q come from registers.
 *
 * Neither memory is reset: the core writes an entry before it reads it.
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module hw_pb_frames #(
    // record width in bits (the core's FRW)
    parameter W = 273,
    // frame stack entries (the core's MAX_DEPTH + 1); the group stack has DEPTH + 1
    parameter DEPTH = 101,
    // address bits: 2**AW must reach DEPTH + 1 entries (the core's STK_BITS)
    parameter AW = 7
) (
    input  wire          clk,

    // frame stack
    input  wire          push,
    input  wire [AW-1:0] push_a,
    input  wire [W-1:0]  push_d,
    input  wire [AW-1:0] ra_next,      // the next cycle's read address
    output wire [W-1:0]  q,            // entry ra_next of the previous cycle, push forwarded

    // group stack
    input  wire          gpush,
    input  wire [AW-1:0] gpush_a,
    input  wire [31:0]   gpush_d,
    input  wire [AW-1:0] g_ra_next,    // the next cycle's read address
    output wire [31:0]   g_q           // entry g_ra_next of the previous cycle, push forwarded
);

initial begin
    if (W < 1) begin
        $error("Error: W must be at least 1 (instance %m)");
        $finish;
    end
    if (DEPTH < 1) begin
        $error("Error: DEPTH must be at least 1 (instance %m)");
        $finish;
    end
    if (AW < 1 || AW > 30 || (1 << AW) < DEPTH + 1) begin
        $error("Error: AW must be in 1..30 and address DEPTH + 1 entries (instance %m)");
        $finish;
    end
end

reg [W-1:0] stk_mem [0:DEPTH-1];
reg [31:0]  gstk_mem [0:DEPTH];

reg [W-1:0] stk_rd_reg = {W{1'b0}}, stk_fwd_reg = {W{1'b0}};
reg         stk_hit_reg = 1'b0;
assign q = stk_hit_reg ? stk_fwd_reg : stk_rd_reg;
reg [31:0]  g_rd_reg = 32'd0, g_fwd_reg = 32'd0;
reg         g_hit_reg = 1'b0;
assign g_q = g_hit_reg ? g_fwd_reg : g_rd_reg;

always @(posedge clk) begin
    if (push) stk_mem[push_a] <= push_d;
    stk_rd_reg <= stk_mem[ra_next];
    stk_hit_reg <= push && push_a == ra_next;
    stk_fwd_reg <= push_d;
    if (gpush) gstk_mem[gpush_a] <= gpush_d;
    g_rd_reg <= gstk_mem[g_ra_next];
    g_hit_reg <= gpush && gpush_a == g_ra_next;
    g_fwd_reg <= gpush_d;
end

endmodule

`resetall
`default_nettype wire

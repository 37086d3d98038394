/*
 * hw_pb_counts -- the protobuf core's per-instance slot memories (hw_pb_core): the count
 * memory with the fill state of its arrays, and the state memory.
 *
 * Both are indexed by slot numbers, an instance's base (its count base cb / state base sb,
 * handed out by the core in creation order) plus a slot the descriptor gives:
 *   count memory (2**CNT_BITS entries) per instance: one 32-bit count per repeated or map
 *            field (elements) and one for its unknown bytes (the last slot); beside each
 *            count its array's fill state: elements written so far (filn, 32 bits) and an
 *            address (fila, 40 bits), written together through one port: at a repeated
 *            field's slot the NEXT element's address (the core adds the element size as
 *            it hands one out: no count x size multiply), at the unknown-bytes slot the
 *            buffer's address (filn then counts bytes); this module does not look at them;
 *   state memory (2**ST_BITS entries) per instance: one 32-bit word per singular
 *            sub-message field (its instance, all ones while unset) and per oneof (the
 *            field number of the case set last, 0 while none).
 *
 * Write ports (one per memory; the core's next-state logic computes them): the entry is
 * written at the clock edge. Read ports:
 *   ASYNCHRONOUS (LUT RAM style; not a registered boundary: the core decides on the value
 *   in the cycle it gives the address, a slot from the descriptor tables' outputs):
 *     count  ra_c (the current field's slot);
 *     state  ra_s (the singular sub-message field's slot; the core decides on its registered
 *            read below and compares the two in simulation), ra_o (the oneof's slot);
 *     a read in the cycle of a write to the same entry shows the old value; (their slots
 *     add the field row's f_slot / f_pidx, which exist only from the cycle the row is used:
 *     the row is itself looked up a cycle ahead and comes out of registers, in the
 *     TABLES=1 build out of the field table's block RAM, so these addresses are not known
 *     a cycle ahead);
 *   REGISTERED, addressed with the NEXT cycle's slot (the core's registers' next values):
 *     count  ra_ne_next (the array being filled, ne_a_next; also the fill state's one read
 *            port: block RAM style), ra_d_next (the slot a dropped map entry is taken back
 *            from, dr_pslot_next), ra_u_next (the frame's unknown-bytes slot: the core
 *            knows it a cycle ahead, the frame's count base and message being registers or
 *            the frame stack's registered output);
 *     the output shows, in the cycle after its address, the entry as the memory holds it
 *     then: a write to it in the cycle of the address is forwarded past the RAM's read (a
 *     registered hit flag chooses the registered write data), as hw_pb_frames does. So
 *     they show the entry of the core's ne_a_reg / dr_pslot_reg / unknown-bytes slot in
 *     every cycle, as the asynchronous reads before did;
 *   REGISTERED, addressed with THIS cycle's slot: state ra_s again (st_q_s_prev, and
 *     st_set_s_prev: it is not all ones), shown a cycle later in the same way (the
 *     asynchronous read ends at a register, and the sub-message states decide on the
 *     registered word and flag: the core holds the field's row from S_MSG to S_MSG4, so
 *     the slot of the cycle before is the slot of the cycle that decides).
 *
 * The memories are not reset: the core writes each slot before it reads it (when it
 * creates the instance, or in one pass when its scan first counts the slot).
 *
 * (Not merged with hw_pb_insts: these are indexed by slot, sized by CNT_BITS / ST_BITS and
 * read in the field-handling states; the instance tables are indexed by instance number,
 * sized by INST_BITS and read when an instance is entered or checked. The two share no
 * address, port or parameter.)
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module hw_pb_counts #(
    // log2 of the count memory's entries (the core's CNT_BITS), 1..31
    parameter CNT_BITS = 11,
    // log2 of the state memory's entries (the core's ST_BITS), 1..31
    parameter ST_BITS = 11
) (
    input  wire                clk,

    // count memory
    input  wire                cnt_we,
    input  wire [CNT_BITS-1:0] cnt_wa,
    input  wire [31:0]         cnt_wd,
    input  wire [CNT_BITS-1:0] ra_c,
    input  wire [CNT_BITS-1:0] ra_ne_next,
    input  wire [CNT_BITS-1:0] ra_u_next,
    input  wire [CNT_BITS-1:0] ra_d_next,
    output wire [31:0]         cnt_q_c,
    output wire [31:0]         cnt_q_ne,     // (registered)
    output wire [31:0]         cnt_q_u,      // (registered)
    output wire [31:0]         cnt_q_d,      // (registered)
    // the arrays' fill state (elements written, address), beside the counts
    input  wire                fil_we,
    input  wire [CNT_BITS-1:0] fil_wa,
    input  wire [31:0]         filn_wd,
    input  wire [39:0]         fila_wd,
    output wire [31:0]         filn_q,       // (registered) entry ra_ne_next
    output wire [39:0]         fila_q,

    // state memory
    input  wire                st_we,
    input  wire [ST_BITS-1:0]  st_wa,
    input  wire [31:0]         st_wd,
    input  wire [ST_BITS-1:0]  ra_s,
    input  wire [ST_BITS-1:0]  ra_o,
    output wire [31:0]         st_q_s,
    output wire [31:0]         st_q_o,
    output wire [31:0]         st_q_s_prev,  // (registered) entry ra_s of the cycle before
    output wire                st_set_s_prev // (registered) st_q_s_prev != all ones
);

initial begin
    if (CNT_BITS < 1 || CNT_BITS > 31) begin
        $error("Error: CNT_BITS must be in 1..31 (instance %m)");
        $finish;
    end
    if (ST_BITS < 1 || ST_BITS > 31) begin
        $error("Error: ST_BITS must be in 1..31 (instance %m)");
        $finish;
    end
end

reg [31:0] cnt_mem [0:(1 << CNT_BITS)-1];
reg [31:0] filn_mem [0:(1 << CNT_BITS)-1];
reg [39:0] fila_mem [0:(1 << CNT_BITS)-1];
reg [31:0] st_mem [0:(1 << ST_BITS)-1];

assign cnt_q_c = cnt_mem[ra_c];
assign st_q_s = st_mem[ra_s];
assign st_q_o = st_mem[ra_o];

// the registered reads: the RAMs' read registers, the write data and per read a hit flag
reg [31:0] ne_rd = 32'd0, d_rd = 32'd0, u_rd = 32'd0, filn_rd = 32'd0, cnt_fwd = 32'd0, filn_fwd = 32'd0;
reg [39:0] fila_rd = 40'd0, fila_fwd = 40'd0;
reg        hit_ne = 1'b0, hit_d = 1'b0, hit_u = 1'b0, hit_fil = 1'b0;
reg [31:0] s_rd = 32'd0, st_fwd = 32'd0;
reg        s_set_rd = 1'b0, st_set_fwd = 1'b0, hit_s = 1'b0;
assign st_q_s_prev = hit_s ? st_fwd : s_rd;
assign st_set_s_prev = hit_s ? st_set_fwd : s_set_rd;
assign cnt_q_ne = hit_ne ? cnt_fwd : ne_rd;
assign cnt_q_d = hit_d ? cnt_fwd : d_rd;
assign cnt_q_u = hit_u ? cnt_fwd : u_rd;
assign filn_q = hit_fil ? filn_fwd : filn_rd;
assign fila_q = hit_fil ? fila_fwd : fila_rd;

always @(posedge clk) begin
    ne_rd <= cnt_mem[ra_ne_next];
    d_rd <= cnt_mem[ra_d_next];
    u_rd <= cnt_mem[ra_u_next];
    filn_rd <= filn_mem[ra_ne_next];
    fila_rd <= fila_mem[ra_ne_next];
    cnt_fwd <= cnt_wd;
    filn_fwd <= filn_wd;
    fila_fwd <= fila_wd;
    hit_ne <= cnt_we && cnt_wa == ra_ne_next;
    hit_d <= cnt_we && cnt_wa == ra_d_next;
    hit_u <= cnt_we && cnt_wa == ra_u_next;
    hit_fil <= fil_we && fil_wa == ra_ne_next;
    s_rd <= st_q_s;
    s_set_rd <= st_q_s != 32'hFFFFFFFF;
    st_fwd <= st_wd;
    st_set_fwd <= st_wd != 32'hFFFFFFFF;
    hit_s <= st_we && st_wa == ra_s;
end

always @(posedge clk) begin
    if (cnt_we) cnt_mem[cnt_wa] <= cnt_wd;
    if (fil_we) begin
        filn_mem[fil_wa] <= filn_wd;
        fila_mem[fil_wa] <= fila_wd;
    end
    if (st_we) st_mem[st_wa] <= st_wd;
end

endmodule

`resetall
`default_nettype wire

/*
 * hw_pb_counts -- the protobuf core's per-instance slot memories (hw_pb_core): the count
 * memory with the fill state of its arrays, and the state memory.
 *
 * Both are indexed by slot numbers, an instance's base (its count base cb / state base sb,
 * handed out by the core in creation order) plus a slot the descriptor gives:
 *   count memory (2**CNT_BITS entries) per instance: one 32-bit count per repeated or map
 *            field (elements) and one for its unknown bytes (the last slot); beside each
 *            count its array's fill state: elements written so far (filn, 32 bits) and the
 *            array's address (fila, 40 bits), written together through one port;
 *   state memory (2**ST_BITS entries) per instance: one 32-bit word per singular
 *            sub-message field (its instance, all ones while unset) and per oneof (the
 *            field number of the case set last, 0 while none).
 *
 * Write ports (one per memory; the core's next-state logic computes them): the entry is
 * written at the clock edge. Read ports, all ASYNCHRONOUS (LUT RAM style; not yet a
 * registered boundary: the core decides on the value in the cycle it gives the address):
 *   count    ra_c (the current field's slot), ra_ne (the array being filled; also the fill
 *            state's one read port), ra_u (the unknown-bytes slot), ra_d (the slot a dropped
 *            map entry is taken back from);
 *   state    ra_s (the singular sub-message field's slot), ra_o (the oneof's slot).
 * A read in the cycle of a write to the same entry shows the old value.
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
    input  wire [CNT_BITS-1:0] ra_ne,
    input  wire [CNT_BITS-1:0] ra_u,
    input  wire [CNT_BITS-1:0] ra_d,
    output wire [31:0]         cnt_q_c,
    output wire [31:0]         cnt_q_ne,
    output wire [31:0]         cnt_q_u,
    output wire [31:0]         cnt_q_d,
    // the arrays' fill state (elements written, address), beside the counts
    input  wire                fil_we,
    input  wire [CNT_BITS-1:0] fil_wa,
    input  wire [31:0]         filn_wd,
    input  wire [39:0]         fila_wd,
    output wire [31:0]         filn_q,       // entry ra_ne
    output wire [39:0]         fila_q,

    // state memory
    input  wire                st_we,
    input  wire [ST_BITS-1:0]  st_wa,
    input  wire [31:0]         st_wd,
    input  wire [ST_BITS-1:0]  ra_s,
    input  wire [ST_BITS-1:0]  ra_o,
    output wire [31:0]         st_q_s,
    output wire [31:0]         st_q_o
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
assign cnt_q_ne = cnt_mem[ra_ne];
assign cnt_q_u = cnt_mem[ra_u];
assign cnt_q_d = cnt_mem[ra_d];
assign filn_q = filn_mem[ra_ne];
assign fila_q = fila_mem[ra_ne];
assign st_q_s = st_mem[ra_s];
assign st_q_o = st_mem[ra_o];

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

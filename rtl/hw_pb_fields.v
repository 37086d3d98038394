/*
 * hw_pb_fields -- the protobuf core's field table in block RAM, loaded at run time
 * (hw_pb_core with TABLES=1; docs/hardware.md "Run-time-loaded tables").
 *
 * PORTS lookup ports: the message and per port a field number of the NEXT cycle in, each
 * port's field row out one cycle later from a registered block-RAM read (the row the ROM
 * build's generated hw_pb_desc_field gives, with this lookup interface; the core decodes
 * it and drives both with the same selects). Rows:
 *   direct   per message m a region of span[m] rows, row base[m] + n for field number n in
 *            1..span[m] (base/span in a small LUT RAM indexed by the message; holes are rows
 *            with the hit bit clear);
 *   overflow field numbers above a message's span (sparse numbers): up to OVF keys
 *            {row, message, number}, compared in parallel; a match gives the row.
 * The address (direct or overflow) is computed from the lookup inputs and registered into
 * the RAM's read; `hit` is the row's hit bit (its top bit, W-1) and the address's validity.
 *
 * The lookup inputs of the core are late in its cycle (its next-state logic): the module
 * takes them as late selects among early values, and does the work on the early values.
 *   message  one of MC candidates (l_msgs, the core's registers), chosen by the one-hot
 *            l_msel: each candidate's {span, base}, validity and which overflow keys are its
 *            own are computed from the candidate, then selected.
 *   number   a port whose bit in REPEAT is clear compares its own l_num against the keys
 *            (an early number: the input stage's next tags); a port whose bit is set looks
 *            up again the number a port p looked up in the previous cycle, chosen by the
 *            one-hot l_rep (its PORTS bits): that number and its key matches, registered
 *            then, are selected (the core's t_num_next is its t_num_reg or the tag shown,
 *            which the tag ports looked up a cycle before).
 * So after the selects only the base + number add, the span compare and the key-match
 * OR remain before the RAM's address. The ports share the message side and the key
 * registers; each has its own copy of the rows (block RAM). The rows are written only
 * while the core is idle, so the RAMs are marked no_rw_check (no read-during-write logic
 * around the block RAMs).
 *
 * Table-load port (the core's tbl_wr_*; written only while the core is idle): 64-bit
 * words, address {region[3:0], index[19:0]}:
 *   region 1, index 4m+3: message m's {span[31:16], base[15:0]} (words 0-2 of a message row
 *            are the core's message table, not this module's);
 *   region 2, index 4r+w: lane w (bits 64w+63:64w) of field row r;
 *   region 3, index i:    overflow key i: {row[63:48], message[47:32], number[31:0]}.
 * n_msgs and n_ovf (the loaded message count and overflow keys) come from the core's
 * configuration word. Messages at or past n_msgs and keys at or past n_ovf never hit.
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module hw_pb_fields #(
    // field rows (direct regions and overflow rows together; at most 65536)
    parameter ROWS = 1024,
    // overflow keys (sparse field numbers), 1..256
    parameter OVF = 64,
    // message types (base/span entries), at most 65536
    parameter MSGS = 256,
    // row width in bits (the core's field bundle; the top bit is the hit bit), 1..256
    parameter W = 220,
    // lookup ports (each its own copy of the rows), 1..8
    parameter PORTS = 1,
    // message candidates, 1..8
    parameter MC = 1,
    // bit p set: port p repeats a previous lookup's number (l_rep) instead of comparing
    // l_num (its slice of l_num is unused)
    parameter [7:0] REPEAT = 8'd0
) (
    input  wire          clk,

    // table-load port
    input  wire          wr_en,
    input  wire [23:0]   wr_addr,
    input  wire [63:0]   wr_data,
    input  wire [15:0]   n_msgs,
    input  wire [8:0]    n_ovf,

    // lookup: the next cycle's message (candidate c: l_msgs bits 16c+15:16c, chosen by the
    // one-hot l_msel; none: every port misses) and per port p a field number (l_num bits
    // 32p+31:32p; with REPEAT bit p, the number port q looked up last cycle, q chosen by
    // l_rep bits PORTS*p+PORTS-1:PORTS*p, one-hot); port p's row out in the next cycle
    // (bits W*p+W-1:W*p)
    input  wire [16*MC-1:0]         l_msgs,
    input  wire [MC-1:0]            l_msel,
    input  wire [32*PORTS-1:0]      l_num,
    input  wire [PORTS*PORTS-1:0]   l_rep,
    output wire [PORTS-1:0]         hit,
    output wire [W*PORTS-1:0]       row
);

localparam RB = (ROWS > 1) ? $clog2(ROWS) : 1;
localparam MB = (MSGS > 1) ? $clog2(MSGS) : 1;
localparam KB = (OVF > 1) ? $clog2(OVF) : 1;
localparam [31:0] ROWS_32 = ROWS;
localparam [31:0] MSGS_32 = MSGS;

initial begin
    if (ROWS < 1 || ROWS > 65536) begin
        $error("Error: ROWS must be in 1..65536 (instance %m)");
        $finish;
    end
    if (OVF < 1 || OVF > 256) begin
        $error("Error: OVF must be in 1..256 (instance %m)");
        $finish;
    end
    if (MSGS < 1 || MSGS > 65536) begin
        $error("Error: MSGS must be in 1..65536 (instance %m)");
        $finish;
    end
    if (W < 1 || W > 256) begin
        $error("Error: W must be in 1..256 (instance %m)");
        $finish;
    end
    if (PORTS < 1 || PORTS > 8) begin
        $error("Error: PORTS must be in 1..8 (instance %m)");
        $finish;
    end
    if (MC < 1 || MC > 8) begin
        $error("Error: MC must be in 1..8 (instance %m)");
        $finish;
    end
end

// ---------------------------------------------------------------- memories
wire [3:0]  wr_region = wr_addr[23:20];
wire [19:0] wr_idx = wr_addr[19:0];
// per message {span, base} (LUT RAM, asynchronous read)
reg  [31:0] bs_mem [0:MSGS-1];
// overflow keys (flip-flops: compared in parallel)
reg  [63:0] key_q [0:OVF-1];
// the rows: per port four 64-bit lanes, each a block RAM with a registered read (below)

integer i;
initial begin
    for (i = 0; i < MSGS; i = i + 1) bs_mem[i] = 32'd0;
    for (i = 0; i < OVF; i = i + 1) key_q[i] = 64'd0;
end

wire [31:0] wr_row = {14'd0, wr_idx[19:2]};
always @(posedge clk) begin
    if (wr_en && wr_region == 4'd1 && wr_idx[1:0] == 2'd3 && {14'd0, wr_idx[19:2]} < MSGS_32)
        bs_mem[wr_idx[MB+1:2]] <= wr_data[31:0];
    if (wr_en && wr_region == 4'd3 && {12'd0, wr_idx} < OVF)
        key_q[wr_idx[KB-1:0]] <= wr_data;
end

// ---------------------------------------------------------------- address
// (OVW: OVF for the vector widths, at least 1 so that bad parameters reach the checks)
localparam OVW = (OVF > 0) ? OVF : 1;
// message side, per candidate: valid, {span, base}, which loaded keys are its own
reg  [MC-1:0]     c_ok;
reg  [32*MC-1:0]  c_bs;
reg  [OVW*MC-1:0] c_km;
integer     c, k;
always @* begin
    for (c = 0; c < MC; c = c + 1) begin
        c_ok[c] = l_msgs[16 * c +: 16] < n_msgs && {16'd0, l_msgs[16 * c +: 16]} < MSGS_32;
        c_bs[32 * c +: 32] = bs_mem[l_msgs[16 * c +: MB]];
        // (a valid candidate is below MSGS: its low MB bits decide, the key's upper bits
        // must be zero)
        for (k = 0; k < OVF; k = k + 1)
            c_km[OVW * c + k] = k < n_ovf && {16'd0, key_q[k][47:32]} < MSGS_32
                                && key_q[k][32 +: MB] == l_msgs[16 * c +: MB];
    end
end
// the selected candidate (AND-OR: l_msel is one-hot)
reg             msg_ok;
reg  [31:0]     bs;
reg  [OVW-1:0]  kmsg;
always @* begin
    msg_ok = 1'b0;
    bs = 32'd0;
    kmsg = {OVW{1'b0}};
    for (c = 0; c < MC; c = c + 1) begin
        msg_ok = msg_ok | (l_msel[c] & c_ok[c]);
        bs = bs | ({32{l_msel[c]}} & c_bs[32 * c +: 32]);
        kmsg = kmsg | ({OVW{l_msel[c]}} & c_km[OVW * c +: OVW]);
    end
end
wire [15:0] span = bs[31:16];
wire [15:0] dbase = bs[15:0];

// number side, per port: {number in 1..65535, its low 16 bits} and its key matches; a
// repeating port selects a registered one (AND-OR: l_rep is one-hot)
reg  [17*PORTS-1:0]  p_n, p_n_q = {17*PORTS{1'b0}};
reg  [OVW*PORTS-1:0] p_m, p_m_q = {OVW*PORTS{1'b0}};
reg  [31:0] pn;
integer     p, pq;
always @* begin
    for (p = 0; p < PORTS; p = p + 1) begin
        if (REPEAT[p]) begin
            p_n[17 * p +: 17] = 17'd0;
            p_m[OVW * p +: OVW] = {OVW{1'b0}};
            for (pq = 0; pq < PORTS; pq = pq + 1) begin
                p_n[17 * p +: 17] = p_n[17 * p +: 17] | ({17{l_rep[PORTS * p + pq]}} & p_n_q[17 * pq +: 17]);
                p_m[OVW * p +: OVW] = p_m[OVW * p +: OVW] | ({OVW{l_rep[PORTS * p + pq]}} & p_m_q[OVW * pq +: OVW]);
            end
        end else begin
            pn = l_num[32 * p +: 32];
            p_n[17 * p +: 17] = {pn != 32'd0 && pn[31:16] == 16'd0, pn[15:0]};
            for (k = 0; k < OVF; k = k + 1)
                p_m[OVW * p + k] = key_q[k][31:0] == pn;
        end
    end
end
always @(posedge clk) begin
    p_n_q <= p_n;
    p_m_q <= p_m;
end

reg  [16*PORTS-1:0] arow;
reg  [PORTS-1:0]    aok;
reg  [15:0] orow;
reg         ohit, direct, km;
always @* begin
    for (p = 0; p < PORTS; p = p + 1) begin
        direct = msg_ok && p_n[17 * p + 16] && p_n[17 * p +: 16] <= span;
        // (AND-OR, not a chain of conditional assignments: keys are unique, so at most
        // one matches)
        orow = 16'd0;
        ohit = 1'b0;
        for (k = 0; k < OVF; k = k + 1) begin
            km = msg_ok && kmsg[k] && p_m[OVW * p + k];
            orow = orow | ({16{km}} & key_q[k][63:48]);
            ohit = ohit | km;
        end
        arow[16 * p +: 16] = direct ? dbase + p_n[17 * p +: 16] : orow;
        aok[p] = (direct || ohit) && {16'd0, arow[16 * p +: 16]} < ROWS_32;
    end
end

// ---------------------------------------------------------------- registered reads
// one copy of the rows per port, all written by the load
reg  [PORTS-1:0] ok_q = {PORTS{1'b0}};
/* verilator lint_off UNUSEDSIGNAL */
wire [256*PORTS-1:0] q;
/* verilator lint_on UNUSEDSIGNAL */
genvar g;
generate
for (g = 0; g < PORTS; g = g + 1) begin : g_port
    // the load writes only while the core is idle: no read-during-write behaviour needed
    (* no_rw_check *) reg [63:0] lane0 [0:ROWS-1];
    (* no_rw_check *) reg [63:0] lane1 [0:ROWS-1];
    (* no_rw_check *) reg [63:0] lane2 [0:ROWS-1];
    (* no_rw_check *) reg [63:0] lane3 [0:ROWS-1];
    reg  [63:0] q0, q1, q2, q3;
    wire [RB-1:0] ra = arow[16 * g +: RB];
    always @(posedge clk) begin
        if (wr_en && wr_region == 4'd2 && wr_row < ROWS_32) begin
            case (wr_idx[1:0])
            2'd0: lane0[wr_row[RB-1:0]] <= wr_data;
            2'd1: lane1[wr_row[RB-1:0]] <= wr_data;
            2'd2: lane2[wr_row[RB-1:0]] <= wr_data;
            default: lane3[wr_row[RB-1:0]] <= wr_data;
            endcase
        end
        q0 <= lane0[ra];
        q1 <= lane1[ra];
        q2 <= lane2[ra];
        q3 <= lane3[ra];
        ok_q[g] <= aok[g];
    end
    assign q[256 * g +: 256] = {q3, q2, q1, q0};
    assign row[W * g +: W] = q[256 * g +: W];
    assign hit[g] = ok_q[g] && q[256 * g + W - 1];
end
endgenerate

endmodule

`resetall
`default_nettype wire

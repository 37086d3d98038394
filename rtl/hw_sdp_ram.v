/*
 * hw_sdp_ram -- simple dual-port RAM (one write port, one read port, one clock) whose read
 * data passes two registers with no logic between them: the read latch, then an output
 * register. q is the word at ra as read at an edge where re was high, one edge later:
 *
 *   edge t:   re = 1  ->  latch <= mem[ra]   (a word written at the same edge: undefined)
 *   edge t+1:             q     <= latch     (every edge)
 *
 * The objgraph core's object-pointer table copies use it (rtl/hw_og_core.v).
 *
 * Why two registers: a block RAM's clock-to-output is slow (ECP5 DP16KD without its output
 * register: 5.8 ns in nextpnr's timing model, most of an 8 ns cycle before any routing).
 * Its own output register brings that to 0.9 ns. Yosys 0.23 maps an inferred ECP5 memory
 * with no output register (REGMODE "NOREG") and leaves the second register in the fabric,
 * so with HEAPWIRE_ECP5_BRAM defined (scripts/synth.sh og-ecp5) the RAM is instantiated
 * instead: DP16KD blocks in 36-bit pseudo dual-port mode (512 words; port A writes, port B
 * reads; a word is {DIB, DIA}; ADx[13:5] the word address, ADA[3:0] the write's byte
 * enables, as in yosys's ecp5/brams_map.v) with REGMODE "OUTREG". Deeper RAMs (AW > 9)
 * are inferred there too. Without the define the RAM is inferred everywhere (simulation,
 * iCE40, Xilinx). rtl/tb/hw_sdp_ram checks that both forms give the same reads, the
 * instantiated one on the cell model rtl/tb/models/DP16KD.v.
 */
`resetall
`timescale 1ns / 1ps
`default_nettype none

module hw_sdp_ram #(
    parameter AW = 8,    // address bits
    parameter DW = 36    // word bits
) (
    input  wire          clk,
    input  wire          we,
    input  wire [AW-1:0] wa,
    input  wire [DW-1:0] wd,
    input  wire          re,
    input  wire [AW-1:0] ra,
    output wire [DW-1:0] q
);

initial begin
    if (AW < 1 || DW < 1) begin
        $error("hw_sdp_ram: AW and DW must be at least 1");
        $finish;
    end
end

`ifdef HEAPWIRE_ECP5_BRAM
localparam ECP5 = AW <= 9;
`else
localparam ECP5 = 0;
`endif

generate
if (ECP5) begin : g_ecp5
`ifdef HEAPWIRE_ECP5_BRAM
    localparam NB = (DW + 35) / 36;   // blocks side by side
    // (zero-extended through a wider wire: a zero-width replication is not legal Verilog)
    wire [AW+8:0]    a_wx = {9'd0, wa}, a_rx = {9'd0, ra};
    wire [36*NB+DW-1:0] d_wx = {{36*NB{1'b0}}, wd};
    wire [8:0]       a_w = a_wx[8:0], a_r = a_rx[8:0];
    wire [36*NB-1:0] d_w = d_wx[36*NB-1:0];
    wire [36*NB-1:0] d_r;
    genvar b;
    for (b = 0; b < NB; b = b + 1) begin : g_blk
        wire [35:0] di = d_w[36*b +: 36];
        wire [35:0] dout;
        assign d_r[36*b +: 36] = dout;
        DP16KD #(
            .DATA_WIDTH_A(36), .DATA_WIDTH_B(36),
            .REGMODE_A("OUTREG"), .REGMODE_B("OUTREG"),
            .RESETMODE("SYNC"), .ASYNC_RESET_RELEASE("SYNC"),
            .CSDECODE_A("0b000"), .CSDECODE_B("0b000"),
            .WRITEMODE_A("NORMAL"), .WRITEMODE_B("NORMAL"),
            .GSR("DISABLED")
        ) ram (
            // port A: the write (byte enables on ADA[3:0])
            .CLKA(clk), .CEA(we), .OCEA(1'b1), .WEA(1'b1), .RSTA(1'b0),
            .CSA0(1'b0), .CSA1(1'b0), .CSA2(1'b0),
            .ADA0(we), .ADA1(we), .ADA2(we), .ADA3(we), .ADA4(1'b0),
            .ADA5(a_w[0]), .ADA6(a_w[1]), .ADA7(a_w[2]), .ADA8(a_w[3]), .ADA9(a_w[4]),
            .ADA10(a_w[5]), .ADA11(a_w[6]), .ADA12(a_w[7]), .ADA13(a_w[8]),
            .DIA0(di[0]), .DIA1(di[1]), .DIA2(di[2]), .DIA3(di[3]), .DIA4(di[4]), .DIA5(di[5]),
            .DIA6(di[6]), .DIA7(di[7]), .DIA8(di[8]), .DIA9(di[9]), .DIA10(di[10]), .DIA11(di[11]),
            .DIA12(di[12]), .DIA13(di[13]), .DIA14(di[14]), .DIA15(di[15]), .DIA16(di[16]), .DIA17(di[17]),
            .DIB0(di[18]), .DIB1(di[19]), .DIB2(di[20]), .DIB3(di[21]), .DIB4(di[22]), .DIB5(di[23]),
            .DIB6(di[24]), .DIB7(di[25]), .DIB8(di[26]), .DIB9(di[27]), .DIB10(di[28]), .DIB11(di[29]),
            .DIB12(di[30]), .DIB13(di[31]), .DIB14(di[32]), .DIB15(di[33]), .DIB16(di[34]), .DIB17(di[35]),
            // port B: the read
            .CLKB(clk), .CEB(re), .OCEB(1'b1), .WEB(1'b0), .RSTB(1'b0),
            .CSB0(1'b0), .CSB1(1'b0), .CSB2(1'b0),
            .ADB0(1'b0), .ADB1(1'b0), .ADB2(1'b0), .ADB3(1'b0), .ADB4(1'b0),
            .ADB5(a_r[0]), .ADB6(a_r[1]), .ADB7(a_r[2]), .ADB8(a_r[3]), .ADB9(a_r[4]),
            .ADB10(a_r[5]), .ADB11(a_r[6]), .ADB12(a_r[7]), .ADB13(a_r[8]),
            .DOA0(dout[0]), .DOA1(dout[1]), .DOA2(dout[2]), .DOA3(dout[3]), .DOA4(dout[4]), .DOA5(dout[5]),
            .DOA6(dout[6]), .DOA7(dout[7]), .DOA8(dout[8]), .DOA9(dout[9]), .DOA10(dout[10]), .DOA11(dout[11]),
            .DOA12(dout[12]), .DOA13(dout[13]), .DOA14(dout[14]), .DOA15(dout[15]), .DOA16(dout[16]), .DOA17(dout[17]),
            .DOB0(dout[18]), .DOB1(dout[19]), .DOB2(dout[20]), .DOB3(dout[21]), .DOB4(dout[22]), .DOB5(dout[23]),
            .DOB6(dout[24]), .DOB7(dout[25]), .DOB8(dout[26]), .DOB9(dout[27]), .DOB10(dout[28]), .DOB11(dout[29]),
            .DOB12(dout[30]), .DOB13(dout[31]), .DOB14(dout[32]), .DOB15(dout[33]), .DOB16(dout[34]), .DOB17(dout[35])
        );
    end
    assign q = d_r[DW-1:0];
`endif
end else begin : g_infer
    reg [DW-1:0] mem [0:(1<<AW)-1];
    reg [DW-1:0] latch = {DW{1'b0}}, q_reg = {DW{1'b0}};
    always @(posedge clk) begin
        if (we) mem[wa] <= wd;
        if (re) latch <= mem[ra];
        q_reg <= latch;
    end
    assign q = q_reg;
end
endgenerate

endmodule

`resetall

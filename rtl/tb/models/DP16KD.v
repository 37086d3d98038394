/*
 * Simulation model of the ECP5 block RAM (DP16KD) in the one configuration rtl/hw_sdp_ram.v
 * instantiates: 36-bit pseudo dual-port (port A writes, port B reads, DATA_WIDTH_A = B = 36),
 * no chip-select decode, no reset, NOREG or OUTREG. Any other configuration stops
 * elaboration. Yosys's cells_sim.v declares DP16KD with no behaviour, hence this model.
 *
 * What it encodes (Lattice's sysMEM usage guide for the 36-bit mode; pin use as in yosys's
 * ecp5/brams_map.v): a word is {DIB, DIA} written and {DOB, DOA} read; ADA[13:5] and
 * ADB[13:5] address one of 512 words; ADA[3:0] enable the four 9-bit bytes of a write
 * (CEA and WEA high). A read (CEB high) latches the word; with REGMODE "OUTREG" an output
 * register (OCEB high) passes the latch on one edge later. A read of the word written at
 * the same edge gives x: neither the guide nor yosys promises old or new data, so the
 * design under test must not use it. Initial contents: x.
 */
`timescale 1ns / 1ps

module DP16KD (
    input DIA17, DIA16, DIA15, DIA14, DIA13, DIA12, DIA11, DIA10, DIA9, DIA8, DIA7, DIA6, DIA5, DIA4, DIA3, DIA2, DIA1, DIA0,
    input ADA13, ADA12, ADA11, ADA10, ADA9, ADA8, ADA7, ADA6, ADA5, ADA4, ADA3, ADA2, ADA1, ADA0,
    input CEA, OCEA, CLKA, WEA, RSTA,
    input CSA2, CSA1, CSA0,
    output DOA17, DOA16, DOA15, DOA14, DOA13, DOA12, DOA11, DOA10, DOA9, DOA8, DOA7, DOA6, DOA5, DOA4, DOA3, DOA2, DOA1, DOA0,
    input DIB17, DIB16, DIB15, DIB14, DIB13, DIB12, DIB11, DIB10, DIB9, DIB8, DIB7, DIB6, DIB5, DIB4, DIB3, DIB2, DIB1, DIB0,
    input ADB13, ADB12, ADB11, ADB10, ADB9, ADB8, ADB7, ADB6, ADB5, ADB4, ADB3, ADB2, ADB1, ADB0,
    input CEB, OCEB, CLKB, WEB, RSTB,
    input CSB2, CSB1, CSB0,
    output DOB17, DOB16, DOB15, DOB14, DOB13, DOB12, DOB11, DOB10, DOB9, DOB8, DOB7, DOB6, DOB5, DOB4, DOB3, DOB2, DOB1, DOB0
);
parameter DATA_WIDTH_A = 18;
parameter DATA_WIDTH_B = 18;
parameter REGMODE_A = "NOREG";
parameter REGMODE_B = "NOREG";
parameter RESETMODE = "SYNC";
parameter ASYNC_RESET_RELEASE = "SYNC";
parameter CSDECODE_A = "0b000";
parameter CSDECODE_B = "0b000";
parameter WRITEMODE_A = "NORMAL";
parameter WRITEMODE_B = "NORMAL";
parameter GSR = "ENABLED";

localparam OUTREG = REGMODE_B == "OUTREG";

initial begin
    if (DATA_WIDTH_A != 36 || DATA_WIDTH_B != 36)
        $error("DP16KD model: only the 36-bit pseudo dual-port mode (DATA_WIDTH_A = B = 36)");
    if (REGMODE_A != REGMODE_B || (REGMODE_B != "NOREG" && REGMODE_B != "OUTREG"))
        $error("DP16KD model: REGMODE_A and REGMODE_B must be equal, NOREG or OUTREG");
    if (CSDECODE_A != "0b000" || CSDECODE_B != "0b000")
        $error("DP16KD model: chip-select decode not modelled");
end

wire [35:0] di = {DIB17, DIB16, DIB15, DIB14, DIB13, DIB12, DIB11, DIB10, DIB9, DIB8, DIB7, DIB6, DIB5, DIB4, DIB3, DIB2, DIB1, DIB0,
                  DIA17, DIA16, DIA15, DIA14, DIA13, DIA12, DIA11, DIA10, DIA9, DIA8, DIA7, DIA6, DIA5, DIA4, DIA3, DIA2, DIA1, DIA0};
wire [8:0]  wa = {ADA13, ADA12, ADA11, ADA10, ADA9, ADA8, ADA7, ADA6, ADA5};
wire [3:0]  be = {ADA3, ADA2, ADA1, ADA0};
wire [8:0]  ra = {ADB13, ADB12, ADB11, ADB10, ADB9, ADB8, ADB7, ADB6, ADB5};
wire        wr = CEA && WEA && !CSA0 && !CSA1 && !CSA2;
wire        rd = CEB && !CSB0 && !CSB1 && !CSB2;

reg [35:0] mem [0:511];
reg [35:0] latch = 36'bx, oreg = 36'bx;
integer i;

always @(posedge CLKA) begin
    if (RSTA !== 1'b0 || WEB !== 1'b0) $error("DP16KD model: RSTA must stay low and port B must not write");
    if (wr)
        for (i = 0; i < 4; i = i + 1)
            if (be[i]) mem[wa][9*i +: 9] <= di[9*i +: 9];
end
always @(posedge CLKB) begin
    if (RSTB !== 1'b0) $error("DP16KD model: RSTB must stay low");
    if (rd) latch <= (wr && wa == ra && be != 4'd0) ? 36'bx : mem[ra];
    if (OCEB) oreg <= latch;
end

wire [35:0] dout = OUTREG ? oreg : latch;
assign {DOB17, DOB16, DOB15, DOB14, DOB13, DOB12, DOB11, DOB10, DOB9, DOB8, DOB7, DOB6, DOB5, DOB4, DOB3, DOB2, DOB1, DOB0,
        DOA17, DOA16, DOA15, DOA14, DOA13, DOA12, DOA11, DOA10, DOA9, DOA8, DOA7, DOA6, DOA5, DOA4, DOA3, DOA2, DOA1, DOA0} = dout;

endmodule

/*
 * og_synth_top -- synthesis-only wrapper around heapwire_og_core (the generated objgraph
 * core, e.g. rtl/gen/expr_og_core.gen.v) for place and route on small FPGAs.
 *
 * Why: the core has ~780 top-level port bits (256-bit output data, two 64-bit input data,
 * 64-bit base/max_image/header data, 64-bit cycle counter...), far more than an iCE40
 * HX8K package has pins, and unregistered ports leave the core's input-to-register and
 * register-to-output paths untimed or timed against pad delays. This wrapper
 *   * feeds every wide core input from a serial-in shift register (pin `si`, shifted when
 *     `sh` is high) -- flip-flops with a clock enable, no logic in front of the core;
 *   * captures every core output into a parallel-load shift register (`cap` high: load,
 *     otherwise shift out on `so`), so no output bit can be optimised away and every
 *     core path starts and ends at a flip-flop.
 * It adds ~710 flip-flops and ~700 LUTs (measured on iCE40: load/shift muxes) of its own; the
 * core's own figures come from synthesising heapwire_og_core alone (scripts/synth.sh).
 * Not part of the design or of any test: used only by scripts/synth.sh.
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module og_synth_top #(
    parameter IN_WIDTH = 64,
    parameter IN_ADDR_WIDTH = 10,
    parameter OUT_WIDTH = 256,
    parameter OUT_ADDR_WIDTH = 10,
    parameter OBJ_BITS = 8,
    parameter CLS_BITS = 2
) (
    input  wire clk,
    input  wire rst,
    input  wire start,
    input  wire hdr_wr_en,
    input  wire sh,       // shift the input chain
    input  wire si,       // serial input
    input  wire cap,      // capture the core outputs into the output chain
    output wire so,       // serial output
    output reg  busy_q,
    output reg  done_q
);
    localparam NI = 32 + CLS_BITS + 64 + 64 + CLS_BITS + 64 + 2 * IN_WIDTH;
    localparam NO = 1 + 1 + 8 + 32 + 32 + 64 + 2 * (1 + IN_ADDR_WIDTH) + 1 + OUT_ADDR_WIDTH + OUT_WIDTH;

    reg [NI-1:0] sin;
    always @(posedge clk) if (sh) sin <= {sin[NI-2:0], si};

    wire [31:0] in_len;
    wire [CLS_BITS-1:0] root_cls, hdr_wr_idx;
    wire [63:0] base, max_image, hdr_wr_data;
    wire [IN_WIDTH-1:0] in_rd_data, in2_rd_data;
    assign {in_len, root_cls, base, max_image, hdr_wr_idx, hdr_wr_data, in_rd_data, in2_rd_data} = sin;

    wire busy, done, in_rd_en, in2_rd_en, out_wr_en;
    wire [7:0] err_code;
    wire [31:0] err_offset, image_size;
    wire [63:0] cycles;
    wire [IN_ADDR_WIDTH-1:0] in_addr, in2_addr;
    wire [OUT_ADDR_WIDTH-1:0] out_wr_addr;
    wire [OUT_WIDTH-1:0] out_wr_data;

    heapwire_og_core #(
        .IN_WIDTH(IN_WIDTH), .IN_ADDR_WIDTH(IN_ADDR_WIDTH), .OUT_WIDTH(OUT_WIDTH),
        .OUT_ADDR_WIDTH(OUT_ADDR_WIDTH), .OBJ_BITS(OBJ_BITS)
    ) core (
        .clk(clk), .rst(rst), .start(start), .in_len(in_len), .root_cls(root_cls),
        .base(base), .max_image(max_image),
        .busy(busy), .done(done), .err_code(err_code), .err_offset(err_offset),
        .image_size(image_size), .cycles(cycles),
        .hdr_wr_en(hdr_wr_en), .hdr_wr_idx(hdr_wr_idx), .hdr_wr_data(hdr_wr_data),
        .in_rd_en(in_rd_en), .in_addr(in_addr), .in_rd_data(in_rd_data),
        .in2_rd_en(in2_rd_en), .in2_addr(in2_addr), .in2_rd_data(in2_rd_data),
        .out_wr_en(out_wr_en), .out_wr_addr(out_wr_addr), .out_wr_data(out_wr_data)
    );

    reg [NO-1:0] sout;
    always @(posedge clk) begin
        if (cap)
            sout <= {busy, done, err_code, err_offset, image_size, cycles,
                     in_rd_en, in_addr, in2_rd_en, in2_addr, out_wr_en, out_wr_addr, out_wr_data};
        else
            sout <= {sout[NO-2:0], 1'b0};
        busy_q <= busy;
        done_q <= done;
    end
    assign so = sout[NO-1];
endmodule

`resetall
`default_nettype wire

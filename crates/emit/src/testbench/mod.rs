//! Icarus Verilog testbenches for the generated cores: what `heapwire-sim` compiles
//! beside a core to run it on one input. One generator; [`protobuf`] and [`objgraph`]
//! give it their core's part (the wrapper and its parameters, its memory ports, its extra
//! registers and plusargs).
//!
//! Every testbench (top module `tb`) reads the input from `+in=FILE` (64-bit hex words),
//! its length, root, base and cycle limit from `+len`, `+root`, `+base` (hex) and
//! `+maxcycles`, pulses `start`, serves the memories until `done`, prints
//! `cycles N`, `err CODE OFFSET` and `size N` (or `timeout N`, or `conflict ...` on a
//! misuse of the output memory's ports) and, without an error, writes the image to
//! `+out=FILE` as 64-bit hex words (the first image byte the low byte of the first word).

use std::fmt::Write;

pub mod objgraph;
pub mod protobuf;

/// Memory widths and address bits of one testbench build.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Memories {
    /// log2 of the input memory's 64-bit words (the core sees `in_width`-bit words).
    pub in_aw: u32,
    /// log2 of the output memory's words.
    pub out_aw: u32,
    /// Input memory word width in bits (32, 64, 128).
    pub in_width: u32,
    /// Output memory word width in bits (64, 128, 256).
    pub out_width: u32,
}

/// One core's part of its testbench.
struct Core<'a> {
    /// What the testbench is for (a comment line).
    title: &'a str,
    /// The wrapper module and its parameter overrides (`.P(V), ...`).
    module: &'a str,
    params: String,
    /// The root port (`root_msg`, `root_cls`) and its width.
    root_port: &'a str,
    root_bits: u32,
    /// Read ports of the input memory (`in_`, `in2_`), each with one cycle of latency.
    in_ports: &'a [&'a str],
    /// Write ports of the output memory (`out_`, `out2_`).
    out_ports: &'a [&'a str],
    /// Whether the write ports have byte enables (`<port>wr_be`).
    byte_enables: bool,
    /// Whether the output memory has the read port `out_rd_*` (one cycle of latency).
    read_port: bool,
    /// Further declarations, and the connections of the core's other ports (`.p(x), .q(y)`).
    decls: &'a str,
    conns: &'a str,
    /// Checks on the memory ports each clock edge.
    port_checks: &'a str,
    /// Plusargs read after the shared ones.
    args: &'a str,
    /// Steps after reset, before start (register writes).
    before_run: &'a str,
    /// Work in each cycle of the run.
    each_cycle: &'a str,
    /// Steps after the run, before the image is written.
    after_run: &'a str,
}

/// The testbench around `core` with the memories `m`.
fn testbench(core: &Core, m: &Memories) -> String {
    // the memory ports, one group per port: (type, signal [= initial value]), each connected by name
    let mut groups: Vec<Vec<(&str, String)>> = Vec::new();
    for p in core.in_ports {
        groups.push(vec![("wire", format!("{p}rd_en")), ("wire [IN_AW:0]", format!("{p}addr")), ("reg [IW-1:0]", format!("{p}rd_data = 0"))]);
    }
    for p in core.out_ports {
        let mut g = vec![("wire", format!("{p}wr_en")), ("wire [OUT_AW-1:0]", format!("{p}wr_addr")), ("wire [OW-1:0]", format!("{p}wr_data"))];
        if core.byte_enables {
            g.push(("wire [OW/8-1:0]", format!("{p}wr_be")));
        }
        groups.push(g);
    }
    if core.read_port {
        groups.push(vec![("wire", "out_rd_en".into()), ("wire [OUT_AW-1:0]", "out_rd_addr".into()), ("reg [OW-1:0]", "out_rd_data = 0".into())]);
    }
    let (mut ports, mut conns) = (String::new(), String::new());
    for g in &groups {
        conns.push_str(",\n   ");
        for (decl, sig) in g {
            let _ = writeln!(ports, "{decl} {sig};");
            let name = sig.split(' ').next().unwrap_or_default();
            let _ = write!(conns, " .{name}({name}),");
        }
        conns.pop();
    }
    let mut memories = String::new();
    for p in core.in_ports {
        let _ = writeln!(memories, "    if ({p}rd_en) {p}rd_data <= in_word({p}addr);");
    }
    if core.read_port {
        memories.push_str("    if (out_rd_en) out_rd_data <= omem[out_rd_addr];\n");
    }
    for p in core.out_ports {
        if core.byte_enables {
            let _ = writeln!(
                memories,
                "    if ({p}wr_en)\n        for (b = 0; b < OW/8; b = b + 1)\n            if ({p}wr_be[b]) omem[{p}wr_addr][8*b +: 8] <= {p}wr_data[8*b +: 8];"
            );
        } else {
            let _ = writeln!(memories, "    if ({p}wr_en) omem[{p}wr_addr] <= {p}wr_data;");
        }
    }
    let Memories { in_aw, out_aw, in_width, out_width } = *m;
    let Core { title, module, params, root_port, root_bits, decls, conns: core_conns, port_checks, args, before_run, each_cycle, after_run, .. } =
        core;
    let rbm = root_bits - 1;
    format!(
        r#"// generated testbench: {title}
// input from +in=FILE (hex words), image to +out=FILE (hex words)
`timescale 1ns / 1ps
module tb;
localparam IN_AW = {in_aw};
localparam OUT_AW = {out_aw};
localparam OW = {out_width};
localparam IW = {in_width};
reg clk = 1'b0;
reg rst = 1'b1;
reg start = 1'b0;
reg [31:0] in_len = 0;
reg [{rbm}:0] root = 0;
reg [63:0] base = 0;
reg [63:0] max_cycles = 0;
reg [63:0] tb_cycles = 0;
wire busy, done;
wire [7:0] err_code;
wire [31:0] err_offset, image_size;
wire [63:0] cycles;
{ports}reg [63:0] imem [0:(1<<IN_AW)-1];
reg [OW-1:0] omem [0:(1<<OUT_AW)-1];
integer i, b, fd;
reg [1023:0] fin, fout;
{decls}{module} #(.IN_WIDTH(IW), .IN_ADDR_WIDTH(IN_AW + 1), .OUT_WIDTH(OW), .OUT_ADDR_WIDTH(OUT_AW), {params}) dut (
    .clk(clk), .rst(rst), .start(start), .in_len(in_len), .{root_port}(root), .base(base),
    .busy(busy), .done(done), .err_code(err_code), .err_offset(err_offset), .image_size(image_size), .cycles(cycles),
    {core_conns}{conns});
always #5 clk = ~clk;
// the input memory's word at a (the input file holds 64-bit words)
function [IW-1:0] in_word;
    input [IN_AW:0] a;
begin
    if (IW == 128) in_word = {{imem[{{a[IN_AW-2:0], 1'b1}}], imem[{{a[IN_AW-2:0], 1'b0}}]}};
    else if (IW == 64) in_word = imem[a[IN_AW-1:0]];
    else in_word = a[0] ? imem[a[IN_AW:1]][63:32] : imem[a[IN_AW:1]][31:0];
end
endfunction
always @(posedge clk) begin
{memories}{port_checks}end
initial begin
    // garbage, not zeros: the core must write (or zero) every byte of the image
    for (i = 0; i < (1<<OUT_AW); i = i + 1) omem[i] = {{(OW/8){{8'hA5}}}};
    for (i = 0; i < (1<<IN_AW); i = i + 1) imem[i] = 64'h0;
    if (!$value$plusargs("in=%s", fin)) begin $display("tb: no +in"); $finish; end
    if (!$value$plusargs("out=%s", fout)) begin $display("tb: no +out"); $finish; end
    if (!$value$plusargs("len=%d", in_len)) in_len = 0;
    if (!$value$plusargs("root=%d", root)) root = 0;
    if (!$value$plusargs("base=%h", base)) base = 0;
    if (!$value$plusargs("maxcycles=%d", max_cycles)) max_cycles = 1000000;
{args}    if (in_len != 0) $readmemh(fin, imem);
    repeat (3) @(posedge clk);
    rst <= 1'b0;
    @(posedge clk);
{before_run}    start <= 1'b1;
    @(posedge clk);
    start <= 1'b0;
    @(posedge clk);
    tb_cycles = 0;
    while (!done && tb_cycles < max_cycles) begin
        @(posedge clk);
        tb_cycles = tb_cycles + 1;
{each_cycle}    end
    repeat (3) @(posedge clk);
    if (!done) begin
        $display("timeout %0d", cycles);
        $finish;
    end
    $display("cycles %0d", cycles);
    $display("err %0d %0d", err_code, err_offset);
    $display("size %0d", image_size);
{after_run}    if (err_code == 0) begin
        fd = $fopen(fout, "w");
        for (i = 0; i < (image_size + 7) / 8; i = i + 1) $fdisplay(fd, "%h", omem[i / (OW/64)][64*(i % (OW/64)) +: 64]);
        $fclose(fd);
    end
    $finish;
end
endmodule
"#
    )
}

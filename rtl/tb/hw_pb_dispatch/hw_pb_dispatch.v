/*
 * hw_pb_dispatch -- testbench wrapper (rtl/tb/hw_pb_dispatch) around the protobuf core's
 * generated descriptor ROMs (`<stem>_core.gen.v`, crates/emit/src/verilog/protobuf.rs):
 * the tag dispatch table hw_pb_desc_field, the per-message ROM hw_pb_desc_msg and the closed-enum
 * ROM hw_pb_desc_enum, side by side on one set of ports so one cocotb test can sweep
 * them. Port names and widths are the generated modules' (hw_pb_desc_field's with the f_
 * prefix on its outputs, built with the core's parameters). hw_pb_desc_msg and
 * hw_pb_desc_field have registered outputs, looked up a cycle ahead (clk, m_idx_next;
 * l_msgs / l_msel / l_num / l_rep); hw_pb_desc_enum is combinational.
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module hw_pb_dispatch (
    // hw_pb_desc_msg
    input  wire        clk,
    input  wire [15:0] m_idx_next,
    output wire [31:0] m_size,
    output wire [31:0] m_size8,
    output wire [31:0] m_hasoff,
    output wire [31:0] m_unkoff,
    output wire [7:0]  m_nc,
    output wire [7:0]  m_ns,
    output wire [7:0]  m_nms,
    output wire        m_req,
    output wire [7:0]  m_hwords,
    output wire        m_map,
    // hw_pb_desc_field, as the core uses it: three lookups, five message candidates, the
    // last port repeating a number a port looked up the cycle before
    input  wire [79:0]  l_msgs,
    input  wire [4:0]   l_msel,
    input  wire [95:0]  l_num,
    input  wire [8:0]   l_rep,
    output wire [2:0]   f_hit,
    output wire [659:0] f_row,
    // hw_pb_desc_enum
    input  wire [15:0] e_idx,
    input  wire [31:0] e_val,
    output wire        e_known
);

hw_pb_desc_msg msg_rom (
    .clk(clk), .m_idx_next(m_idx_next), .m_size(m_size), .m_size8(m_size8), .m_hasoff(m_hasoff), .m_unkoff(m_unkoff),
    .m_nc(m_nc), .m_ns(m_ns), .m_nms(m_nms), .m_req(m_req), .m_hwords(m_hwords), .m_map(m_map)
);

hw_pb_desc_field #(.PORTS(3), .MC(5), .REPEAT(8'b100)) field_rom (
    .clk(clk), .l_msgs(l_msgs), .l_msel(l_msel), .l_num(l_num), .l_rep(l_rep), .hit(f_hit), .row(f_row)
);

hw_pb_desc_enum enum_rom (.e_idx(e_idx), .e_val(e_val), .e_known(e_known));

endmodule

`resetall
`default_nettype wire

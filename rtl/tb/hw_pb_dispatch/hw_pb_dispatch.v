/*
 * hw_pb_dispatch -- testbench wrapper (rtl/tb/hw_pb_dispatch) around the protobuf core's
 * generated descriptor ROMs (`<stem>_core.gen.v`, crates/emit/src/verilog/protobuf.rs):
 * the tag dispatch ROM hw_pb_desc_field, the per-message ROM hw_pb_desc_msg and the closed-enum
 * ROM hw_pb_desc_enum, side by side on one set of ports so one cocotb test can sweep
 * them. Port names and widths are the generated modules'. hw_pb_desc_msg is a block RAM
 * with a registered read (clk, m_idx_next); the others are combinational.
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
    // hw_pb_desc_field
    input  wire [15:0] f_msg,
    input  wire [31:0] f_num,
    output wire        f_hit,
    output wire [4:0]  f_kind,
    output wire [2:0]  f_kwt,
    output wire        f_rep,
    output wire        f_closed,
    output wire        f_utf8,
    output wire        f_packable,
    output wire [31:0] f_off,
    output wire [1:0]  f_pres,
    output wire [15:0] f_pidx,
    output wire [15:0] f_sub,
    output wire [7:0]  f_slot,
    output wire [31:0] f_elem,
    output wire [3:0]  f_size,
    output wire [31:0] f_ocase,
    output wire [31:0] f_ostor,
    output wire [31:0] f_osize,
    output wire        f_map,
    // hw_pb_desc_enum
    input  wire [15:0] e_idx,
    input  wire [31:0] e_val,
    output wire        e_known
);

hw_pb_desc_msg msg_rom (
    .clk(clk), .m_idx_next(m_idx_next), .m_size(m_size), .m_size8(m_size8), .m_hasoff(m_hasoff), .m_unkoff(m_unkoff),
    .m_nc(m_nc), .m_ns(m_ns), .m_nms(m_nms), .m_req(m_req), .m_hwords(m_hwords), .m_map(m_map)
);

hw_pb_desc_field field_rom (
    .f_msg(f_msg), .f_num(f_num), .f_hit(f_hit), .f_kind(f_kind), .f_kwt(f_kwt), .f_rep(f_rep),
    .f_closed(f_closed), .f_utf8(f_utf8), .f_packable(f_packable), .f_off(f_off), .f_pres(f_pres),
    .f_pidx(f_pidx), .f_sub(f_sub), .f_slot(f_slot), .f_elem(f_elem), .f_size(f_size),
    .f_ocase(f_ocase), .f_ostor(f_ostor), .f_osize(f_osize), .f_map(f_map)
);

hw_pb_desc_enum enum_rom (.e_idx(e_idx), .e_val(e_val), .e_known(e_known));

endmodule

`resetall
`default_nettype wire

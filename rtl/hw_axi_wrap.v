/*
 * hw_axi_wrap -- a generated heapwire core on standard buses: an AXI4-Lite slave with the
 * device register map (docs/device.md, "Register map" and its hardware variant), an
 * AXI4-Stream slave taking the input bytes, an AXI4 master writing each image into host
 * memory. The generated wrappers heapwire_axi (protobuf core) and heapwire_og_axi
 * (objgraph core) instantiate this module beside the core and connect the core's ports
 * (the `core_` ports here; docs/hardware.md); the core's ports are the contract, so both
 * cores fit unchanged.
 *
 * Flow (store and forward, one message at a time):
 *   IDLE   until the host writes the go bit (CTRL bit 0): the image cursor = BASE
 *          (after checking SLOT, MSG, WIRE: a bad one is the device error, HALT).
 *   RECV   stream beats into the input memory, one IN_WIDTH word per beat; tkeep must be
 *          contiguous from byte 0 and all ones except on the beat with tlast (which ends
 *          the message; a lone tlast beat with tkeep 0 ends an empty message or the
 *          bytes before it). A bad tkeep is `protocol` (78) at the beat's byte offset, a
 *          message longer than the input memory `input too large` (70); the rest of such
 *          a message is drained up to its tlast, then HALT.
 *   RUN    start the core on in_len bytes at base = the cursor; wait for done. A
 *          rejection (err_code, mapped to heapwire_engine::RejectKind's code by ERR_MAP)
 *          and its offset land in ERR_KIND / ERR_OFFSET, then HALT.
 *   DMA    the image (output memory words 0..) to host address = the cursor, in INCR
 *          bursts of at most MAX_BURST beats that never cross a 4 KB boundary, at most
 *          MAX_OUTSTANDING bursts awaiting their write response; the data realigned to
 *          the cursor's byte offset in the bus word (wstrb masks the edges).
 *   then   REQUESTS/BYTES counters, cursor += image length (as `decode --delimited`
 *          places the images), DONE set (and irq), back to RECV for the next message.
 *          REQUESTS and BYTES_IN count every message the core ran, as the device's
 *          counters do (docs/device.md): images when written, rejections when the core
 *          reports them; framing errors and oversized messages are not requests.
 *   HALT   stream held (tready 0) until the next go bit; STATUS.error (until then) and irq
 *          (until acknowledged) set.
 * A reset (rst) anywhere returns to IDLE with every register at its reset value.
 *
 * AXI4-Lite: byte address = 4 * the register map's word address. A read of an address
 * with no register, a write to a read-only one, answer SLVERR (the device's errors 64
 * and 65). CTRL write bits: 0 go, 1 stop after the current message, 2 acknowledge
 * (clears DONE, ERROR and irq).
 *
 * Run-time-loaded tables (TABLES=1: the protobuf core built with TABLES=1; docs/device.md
 * "The hardware variant"): slot 0's S_TABLE_CTRL, S_TABLE_ADDR, S_TABLE_DATA drive the
 * core's table-load port. S_TABLE_CTRL bit 0 written 1 raises table_load, written 0 drops
 * it (tables_ok rises the cycle after, if the words loaded a configuration that fits);
 * S_TABLE_ADDR is the next word's address (it counts up by one after each word); writing
 * S_TABLE_DATA's high word (0x007) writes {high, low} to the core at S_TABLE_ADDR. While
 * busy (STATUS bit 0: armed, a message in flight) every write to these three answers
 * SLVERR and changes nothing (stop first: CTRL bit 1), as does a data word with table_load
 * low. S_STATE reads 0 (no tables), 1 (loading) or 2 (tables_ok); S_NUM_TYPES the loaded
 * configuration's message count (0 without tables), which the go bit checks MSG against;
 * a go without tables runs the core, which refuses with `unsupported` at offset 0.
 * rst leaves a load in progress open (table_load high, S_STATE 1): the core would take the
 * words loaded so far as its tables if table_load fell then, so only the host ends a load
 * (redoing it after a reset); the core keeps its tables and type registers across rst.
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module hw_axi_wrap #(
    // core memories (as the core's parameters)
    parameter IN_WIDTH = 64,            // input memory word = stream width (32, 64, 128)
    parameter IN_ADDR_WIDTH = 12,
    parameter OUT_WIDTH = 64,           // output memory word = AXI4 data width (64, 128, 256)
    parameter OUT_ADDR_WIDTH = 12,
    // the core behind it (the generated wrapper sets these)
    parameter WIRE = 0,                 // 0 protobuf, 1 objgraph
    parameter PTR_BYTES = 8,            // pointer width of the images
    parameter NUM_TYPES = 1,            // message types (protobuf) / classes (objgraph)
    parameter MAX_DEPTH = 100,          // the core's nesting limit (read-only MAX_DEPTH)
    parameter [127:0] ERR_MAP = 128'h0f0e0d0c0b0a09080706050403020100, // core code c < 16 -> RejectKind code, byte c
    parameter [511:0] NAME = 512'd0,    // schema name, NUL-padded, byte 0 first (S_NAME)
    parameter TABLES = 0,               // 1 = the core's tables are loaded at run time (the
                                        // S_TABLE_ registers; NUM_TYPES = its MSG_ROWS - 1)
    // buses
    parameter AXIL_ADDR_WIDTH = 16,     // AXI4-Lite byte address bits (slot 0 ends at 0x8000)
    parameter AXI_ADDR_WIDTH = 32,      // AXI4 master address bits (the low bits of the cursor)
    parameter AXI_ID = 0,               // AWID of every write
    parameter MAX_BURST = 16,           // beats per burst, 1..256
    parameter MAX_OUTSTANDING = 4       // bursts awaiting their write response, 1..15
) (
    input  wire                        clk,
    input  wire                        rst,            // synchronous, active high
    output wire                        irq,            // level: DONE or ERROR, until acknowledged

    // AXI4-Lite slave: the register map
    input  wire [AXIL_ADDR_WIDTH-1:0]  s_axil_awaddr,
    input  wire [2:0]                  s_axil_awprot,
    input  wire                        s_axil_awvalid,
    output wire                        s_axil_awready,
    input  wire [31:0]                 s_axil_wdata,
    input  wire [3:0]                  s_axil_wstrb,
    input  wire                        s_axil_wvalid,
    output wire                        s_axil_wready,
    output wire [1:0]                  s_axil_bresp,
    output wire                        s_axil_bvalid,
    input  wire                        s_axil_bready,
    input  wire [AXIL_ADDR_WIDTH-1:0]  s_axil_araddr,
    input  wire [2:0]                  s_axil_arprot,
    input  wire                        s_axil_arvalid,
    output wire                        s_axil_arready,
    output wire [31:0]                 s_axil_rdata,
    output wire [1:0]                  s_axil_rresp,
    output wire                        s_axil_rvalid,
    input  wire                        s_axil_rready,

    // AXI4-Stream slave: the input messages
    input  wire [IN_WIDTH-1:0]         s_axis_tdata,
    input  wire [IN_WIDTH/8-1:0]       s_axis_tkeep,
    input  wire                        s_axis_tvalid,
    output wire                        s_axis_tready,
    input  wire                        s_axis_tlast,

    // AXI4 master, write channels only: the images
    output wire [7:0]                  m_axi_awid,
    output wire [AXI_ADDR_WIDTH-1:0]   m_axi_awaddr,
    output wire [7:0]                  m_axi_awlen,
    output wire [2:0]                  m_axi_awsize,
    output wire [1:0]                  m_axi_awburst,
    output wire                        m_axi_awlock,
    output wire [3:0]                  m_axi_awcache,
    output wire [2:0]                  m_axi_awprot,
    output wire                        m_axi_awvalid,
    input  wire                        m_axi_awready,
    output wire [OUT_WIDTH-1:0]        m_axi_wdata,
    output wire [OUT_WIDTH/8-1:0]      m_axi_wstrb,
    output wire                        m_axi_wlast,
    output wire                        m_axi_wvalid,
    input  wire                        m_axi_wready,
    input  wire [7:0]                  m_axi_bid,
    input  wire [1:0]                  m_axi_bresp,
    input  wire                        m_axi_bvalid,
    output wire                        m_axi_bready,

    // the core (heapwire_core / heapwire_og_core ports, seen from the other side)
    output wire                        core_start,
    output wire [31:0]                 core_in_len,
    output wire [15:0]                 core_root,
    output wire [63:0]                 core_base,
    output wire [63:0]                 core_max_image,
    input  wire                        core_busy,
    input  wire                        core_done,
    input  wire [7:0]                  core_err_code,
    input  wire [31:0]                 core_err_offset,
    input  wire [31:0]                 core_image_size,
    input  wire [63:0]                 core_cycles,
    output wire                        core_type_wr_en,
    output wire [15:0]                 core_type_wr_idx,
    output wire [63:0]                 core_type_wr_data,
    output wire                        core_table_load,   // TABLES=1: the table-load port
    output wire                        core_tbl_wr_en,
    output wire [23:0]                 core_tbl_wr_addr,
    output wire [63:0]                 core_tbl_wr_data,
    input  wire                        core_tables_ok,    // (tie high without TABLES)
    input  wire                        core_in_rd_en,
    input  wire [IN_ADDR_WIDTH-1:0]    core_in_addr,
    output wire [IN_WIDTH-1:0]         core_in_rd_data,
    input  wire                        core_in2_rd_en,
    input  wire [IN_ADDR_WIDTH-1:0]    core_in2_addr,
    output wire [IN_WIDTH-1:0]         core_in2_rd_data,
    input  wire                        core_out_wr_en,
    input  wire [OUT_ADDR_WIDTH-1:0]   core_out_wr_addr,
    input  wire [OUT_WIDTH-1:0]        core_out_wr_data,
    input  wire [OUT_WIDTH/8-1:0]      core_out_wr_be,
    input  wire                        core_out_rd_en,
    input  wire [OUT_ADDR_WIDTH-1:0]   core_out_rd_addr,
    output wire [OUT_WIDTH-1:0]        core_out_rd_data,
    input  wire                        core_out2_wr_en,
    input  wire [OUT_ADDR_WIDTH-1:0]   core_out2_wr_addr,
    input  wire [OUT_WIDTH-1:0]        core_out2_wr_data,
    input  wire [OUT_WIDTH/8-1:0]      core_out2_wr_be
);

// ---------------------------------------------------------------- derived parameters
localparam IB = IN_WIDTH / 8;                       // input bytes per word / beat
localparam OB = OUT_WIDTH / 8;                      // output bytes per word / beat
localparam OB_SH = (OB == 32) ? 5 : (OB == 16) ? 4 : 3;
localparam IB_SH = (IB == 16) ? 4 : (IB == 8) ? 3 : 2;
localparam [31:0] IN_BYTES = IB << IN_ADDR_WIDTH;
localparam [31:0] OUT_BYTES = OB << OUT_ADDR_WIDTH;
localparam RA = AXIL_ADDR_WIDTH - 2;                // register (word) address bits
localparam [31:0] MAX_BURST_32 = MAX_BURST, OB_32 = OB;
localparam [8:0] MAX_BURST_LEN = MAX_BURST_32[8:0];
localparam [11:0] OB_12 = OB_32[11:0];

initial begin
    if (IN_WIDTH != 32 && IN_WIDTH != 64 && IN_WIDTH != 128) begin
        $error("hw_axi_wrap: IN_WIDTH must be 32, 64 or 128"); $finish;
    end
    if (OUT_WIDTH != 64 && OUT_WIDTH != 128 && OUT_WIDTH != 256) begin
        $error("hw_axi_wrap: OUT_WIDTH must be 64, 128 or 256"); $finish;
    end
    if (MAX_BURST < 1 || MAX_BURST > 256 || MAX_BURST * OB > 4096) begin
        $error("hw_axi_wrap: MAX_BURST must be 1..256 and a burst at most 4 KB"); $finish;
    end
    if (MAX_OUTSTANDING < 1 || MAX_OUTSTANDING > 15) begin
        $error("hw_axi_wrap: MAX_OUTSTANDING must be 1..15"); $finish;
    end
    if (AXIL_ADDR_WIDTH < 15 || AXIL_ADDR_WIDTH > 16) begin
        $error("hw_axi_wrap: AXIL_ADDR_WIDTH must be 15 or 16 (slot 0's block)"); $finish;
    end
    if (AXI_ADDR_WIDTH < 12 || AXI_ADDR_WIDTH > 64) begin
        $error("hw_axi_wrap: AXI_ADDR_WIDTH must be 12..64"); $finish;
    end
    if (TABLES != 0 && (TABLES != 1 || WIRE != 0)) begin
        $error("hw_axi_wrap: TABLES must be 0 or 1, and 1 only with the protobuf core (WIRE 0)"); $finish;
    end
end

// ---------------------------------------------------------------- the register map
// Word addresses: the same numbers as crates/device/src/regs.rs (a test of crates/device
// compares every R_ localparam here with the constant of that name there).
localparam [RA-1:0] R_H_MAGIC = 'h000, R_H_VERSION = 'h001, R_H_CAPS = 'h002, R_H_SLOTS = 'h003,
                    R_H_IN_BYTES = 'h004, R_H_OUT_BYTES = 'h005, R_H_PTR_WIDTHS = 'h006, R_H_ENGINE = 'h007,
                    R_H_TYPE_REGS = 'h008, R_H_TABLE_BYTES = 'h009, R_H_TIME_UNIT = 'h00A;
localparam [RA-1:0] R_C_CTRL = 'h040, R_C_STATUS = 'h041, R_C_SLOT = 'h042, R_C_MSG = 'h043, R_C_WIRE = 'h044,
                    R_C_BASE = 'h045, R_C_IN_LEN = 'h047, R_C_MAX_DEPTH = 'h048, R_C_MAX_IMAGE = 'h049,
                    R_C_ERR_KIND = 'h04A, R_C_ERR_OFFSET = 'h04B, R_C_IMAGE_LEN = 'h04D, R_C_TIME = 'h04E,
                    R_C_NEEDED = 'h050, R_C_CURSOR = 'h052;
localparam [RA-1:0] R_N_REQUESTS = 'h080, R_N_BYTES_IN = 'h082, R_N_BYTES_OUT = 'h084, R_N_REJECTIONS = 'h086,
                    R_N_PROTOCOL_ERRORS = 'h088, R_N_RELOADS = 'h08A, R_N_RELOAD_BYTES = 'h08C;
// slot 0's block (the schema built into the core)
localparam [RA-1:0] R_SLOT0 = 'h1000;
localparam [RA-1:0] R_S_STATE = 'h000, R_S_CHECKSUM = 'h001, R_S_TABLE_LEN = 'h002, R_S_NUM_TYPES = 'h003,
                    R_S_NAME = 'h010, R_S_TYPE = 'h040;
// the table-load port (TABLES=1 only)
localparam [RA-1:0] R_S_TABLE_CTRL = 'h004, R_S_TABLE_ADDR = 'h005, R_S_TABLE_DATA = 'h006;
localparam [31:0] MAGIC = 32'h56445748;             // "HWDV"
localparam [31:0] VERSION = 32'd1;
localparam [31:0] ENGINE_RTL = 32'd3;               // H_ENGINE of a hardware device
// device errors (docs/device.md) the wrapper raises
localparam [7:0] D_NO_SLOT = 8'd66, D_NO_MESSAGE = 8'd68, D_BAD_WIRE = 8'd69, D_INPUT_TOO_LARGE = 8'd70,
                 D_OUT_OF_RANGE = 8'd71, D_PROTOCOL = 8'd78;

// ---------------------------------------------------------------- state
localparam [2:0] ST_IDLE = 3'd0, ST_RECV = 3'd1, ST_DRAIN = 3'd2, ST_START = 3'd3, ST_RUN = 3'd4,
                 ST_DMA0 = 3'd5, ST_DMA = 3'd6, ST_HALT = 3'd7;
reg [2:0] st_reg = ST_IDLE;

// host registers
reg [31:0] slot_reg = 0, msg_reg = 0, wire_reg = 0, in_len_reg = 0, max_image_reg = 0;
reg [63:0] base_reg = 0, cursor_reg = 0;
reg [7:0]  err_kind_reg = 0;
reg [31:0] err_offset_reg = 0, image_len_reg = 0;
reg [63:0] time_reg = 0;
reg [63:0] n_requests_reg = 0, n_bytes_in_reg = 0, n_bytes_out_reg = 0, n_rejections_reg = 0, n_protocol_reg = 0;
reg done_flag_reg = 1'b0, err_flag_reg = 1'b0, stop_reg = 1'b0;
reg [31:0] type_lo_reg = 0;                         // S_TYPE low word, written to the core with the high word
// the table-load port (TABLES=1)
reg        tload_reg = 1'b0;                        // table_load
reg [23:0] taddr_reg = 0;                           // S_TABLE_ADDR: the next word's address
reg [31:0] tdata_lo_reg = 0;                        // S_TABLE_DATA low word
reg [15:0] tn_types_reg = 0;                        // messages of the loaded configuration word (kept by rst, as the tables)

// ---------------------------------------------------------------- AXI4-Lite slave
reg s_axil_bvalid_reg = 1'b0, s_axil_rvalid_reg = 1'b0;
reg [1:0] s_axil_bresp_reg = 2'd0, s_axil_rresp_reg = 2'd0;
reg [31:0] s_axil_rdata_reg = 32'd0;
// a write takes its address and data together
wire axil_wr = s_axil_awvalid && s_axil_wvalid && !s_axil_bvalid_reg;
wire axil_rd = s_axil_arvalid && !s_axil_rvalid_reg;
assign s_axil_awready = axil_wr;
assign s_axil_wready = axil_wr;
assign s_axil_bvalid = s_axil_bvalid_reg;
assign s_axil_bresp = s_axil_bresp_reg;
assign s_axil_arready = axil_rd;
assign s_axil_rvalid = s_axil_rvalid_reg;
assign s_axil_rresp = s_axil_rresp_reg;
assign s_axil_rdata = s_axil_rdata_reg;

wire [RA-1:0] wa = s_axil_awaddr[AXIL_ADDR_WIDTH-1:2];
wire [RA-1:0] ra = s_axil_araddr[AXIL_ADDR_WIDTH-1:2];
wire [31:0] wd = s_axil_wdata;  // byte strobes: registers take whole words

wire busy = (st_reg != ST_IDLE) && (st_reg != ST_HALT);
// error: halted on an error until the next go bit (the irq flag may be acknowledged sooner)
wire [31:0] status = {29'd0, st_reg == ST_HALT, done_flag_reg, busy};
wire [31:0] caps = (WIRE == 0 ? 32'd1 : 32'd2) | 32'h10 | (TABLES != 0 ? 32'h8 : 32'd0);
wire tables_on = TABLES != 0;
// slot 0: ready (the schema built in), or with TABLES=1 empty / loading / ready (tables_ok)
wire [31:0] slot_state = !tables_on ? 32'd2 : tload_reg ? 32'd1 : core_tables_ok ? 32'd2 : 32'd0;
wire [31:0] num_types = !tables_on ? NUM_TYPES : core_tables_ok ? {16'd0, tn_types_reg} : 32'd0;

// the read side: value and whether the address has a register
reg [31:0] rd_val;
reg rd_hit;
always @* begin
    rd_val = 32'd0;
    rd_hit = 1'b1;
    case (ra)
    R_H_MAGIC: rd_val = MAGIC;
    R_H_VERSION: rd_val = VERSION;
    R_H_CAPS: rd_val = caps;
    R_H_SLOTS: rd_val = 32'd1;
    R_H_IN_BYTES: rd_val = IN_BYTES;
    R_H_OUT_BYTES: rd_val = OUT_BYTES;
    R_H_PTR_WIDTHS: rd_val = tables_on ? 32'h110 : 32'd1 << PTR_BYTES;  // loaded: either width
    R_H_ENGINE: rd_val = ENGINE_RTL;
    R_H_TYPE_REGS: rd_val = NUM_TYPES;
    R_H_TABLE_BYTES: rd_val = 32'd0;
    R_H_TIME_UNIT: rd_val = 32'd0;
    R_C_CTRL: rd_val = {31'd0, busy};
    R_C_STATUS: rd_val = status;
    R_C_SLOT: rd_val = slot_reg;
    R_C_MSG: rd_val = msg_reg;
    R_C_WIRE: rd_val = wire_reg;
    R_C_BASE: rd_val = base_reg[31:0];
    R_C_BASE + 1'b1: rd_val = base_reg[63:32];
    R_C_IN_LEN: rd_val = in_len_reg;
    R_C_MAX_DEPTH: rd_val = MAX_DEPTH;
    R_C_MAX_IMAGE: rd_val = max_image_reg;
    R_C_ERR_KIND: rd_val = {24'd0, err_kind_reg};
    R_C_ERR_OFFSET: rd_val = err_offset_reg;
    R_C_ERR_OFFSET + 1'b1: rd_val = 32'd0;
    R_C_IMAGE_LEN: rd_val = image_len_reg;
    R_C_TIME: rd_val = time_reg[31:0];
    R_C_TIME + 1'b1: rd_val = time_reg[63:32];
    R_C_NEEDED, R_C_NEEDED + 1'b1: rd_val = 32'd0;
    R_C_CURSOR: rd_val = cursor_reg[31:0];
    R_C_CURSOR + 1'b1: rd_val = cursor_reg[63:32];
    R_N_REQUESTS: rd_val = n_requests_reg[31:0];
    R_N_REQUESTS + 1'b1: rd_val = n_requests_reg[63:32];
    R_N_BYTES_IN: rd_val = n_bytes_in_reg[31:0];
    R_N_BYTES_IN + 1'b1: rd_val = n_bytes_in_reg[63:32];
    R_N_BYTES_OUT: rd_val = n_bytes_out_reg[31:0];
    R_N_BYTES_OUT + 1'b1: rd_val = n_bytes_out_reg[63:32];
    R_N_REJECTIONS: rd_val = n_rejections_reg[31:0];
    R_N_REJECTIONS + 1'b1: rd_val = n_rejections_reg[63:32];
    R_N_PROTOCOL_ERRORS: rd_val = n_protocol_reg[31:0];
    R_N_PROTOCOL_ERRORS + 1'b1: rd_val = n_protocol_reg[63:32];
    R_N_RELOADS, R_N_RELOADS + 1'b1, R_N_RELOAD_BYTES, R_N_RELOAD_BYTES + 1'b1: rd_val = 32'd0;
    R_SLOT0 + R_S_STATE: rd_val = slot_state;
    R_SLOT0 + R_S_CHECKSUM, R_SLOT0 + R_S_TABLE_LEN: rd_val = 32'd0;  // no table file
    R_SLOT0 + R_S_NUM_TYPES: rd_val = num_types;
    default: begin
        if (ra >= R_SLOT0 + R_S_NAME && ra < R_SLOT0 + R_S_NAME + 16)
            rd_val = NAME[32 * (ra - (R_SLOT0 + R_S_NAME)) +: 32];
        else if (tables_on && ra == R_SLOT0 + R_S_TABLE_CTRL)
            rd_val = {30'd0, core_tables_ok, tload_reg};
        else if (tables_on && ra == R_SLOT0 + R_S_TABLE_ADDR)
            rd_val = {8'd0, taddr_reg};
        else
            rd_hit = 1'b0;
    end
    endcase
end

// the write side: which register, and whether it is writable
localparam [31:0] TYPE_WORDS = 2 * NUM_TYPES;
wire wr_type = wa >= R_SLOT0 + R_S_TYPE && {{(32-RA){1'b0}}, wa - (R_SLOT0 + R_S_TYPE)} < TYPE_WORDS;
wire [RA-1:0] wr_type_word = wa - (R_SLOT0 + R_S_TYPE);
// the table-load registers: there with TABLES=1, taken only while not busy (a data word
// only while loading)
wire wr_tbl = tables_on && wa >= R_SLOT0 + R_S_TABLE_CTRL && wa <= R_SLOT0 + R_S_TABLE_DATA + 1'b1;
wire wr_tbl_ok = !busy && (wa != R_SLOT0 + R_S_TABLE_DATA + 1'b1 || tload_reg);
wire wr_tbl_take = axil_wr && wr_tbl && wr_tbl_ok;
reg wr_ok;
always @* begin
    case (wa)
    R_C_CTRL, R_C_SLOT, R_C_MSG, R_C_WIRE, R_C_BASE, R_C_BASE + 1'b1, R_C_IN_LEN, R_C_MAX_IMAGE: wr_ok = 1'b1;
    default: wr_ok = wr_type || (wr_tbl && wr_tbl_ok);
    endcase
end
wire wr_go = axil_wr && wa == R_C_CTRL && wd[0];
wire wr_stop = axil_wr && wa == R_C_CTRL && wd[1];
wire wr_ack = axil_wr && wa == R_C_CTRL && wd[2];

assign core_type_wr_en = axil_wr && wr_type && wr_type_word[0];
assign core_type_wr_idx = {{(17-RA){1'b0}}, wr_type_word[RA-1:1]};
assign core_type_wr_data = {wd, type_lo_reg};

assign core_table_load = tload_reg;
assign core_tbl_wr_en = wr_tbl_take && wa == R_SLOT0 + R_S_TABLE_DATA + 1'b1;
assign core_tbl_wr_addr = taddr_reg;
assign core_tbl_wr_data = {wd, tdata_lo_reg};

always @(posedge clk) begin
    if (wr_tbl_take) begin
        case (wa)
        R_SLOT0 + R_S_TABLE_CTRL: tload_reg <= wd[0];
        R_SLOT0 + R_S_TABLE_ADDR: taddr_reg <= wd[23:0];
        R_SLOT0 + R_S_TABLE_DATA: tdata_lo_reg <= wd;
        default: begin                              // the high word: the word is written
            taddr_reg <= taddr_reg + 24'd1;
            if (taddr_reg == 24'd0) tn_types_reg <= tdata_lo_reg[15:0];  // the configuration word
        end
        endcase
    end
    if (rst) begin                                  // (tload_reg kept: see the opening comment)
        taddr_reg <= 0;
        tdata_lo_reg <= 0;
    end
end

always @(posedge clk) begin
    if (axil_wr) begin
        s_axil_bvalid_reg <= 1'b1;
        s_axil_bresp_reg <= wr_ok ? 2'b00 : 2'b10;  // SLVERR: no register or read-only
        case (wa)
        R_C_SLOT: slot_reg <= wd;
        R_C_MSG: msg_reg <= wd;
        R_C_WIRE: wire_reg <= wd;
        R_C_BASE: base_reg[31:0] <= wd;
        R_C_BASE + 1'b1: base_reg[63:32] <= wd;
        R_C_IN_LEN: in_len_reg <= wd;
        R_C_MAX_IMAGE: max_image_reg <= wd;
        default: if (wr_type && !wr_type_word[0]) type_lo_reg <= wd;
        endcase
    end else if (s_axil_bready) begin
        s_axil_bvalid_reg <= 1'b0;
    end
    if (axil_rd) begin
        s_axil_rvalid_reg <= 1'b1;
        s_axil_rdata_reg <= rd_val;
        s_axil_rresp_reg <= rd_hit ? 2'b00 : 2'b10;
    end else if (s_axil_rready) begin
        s_axil_rvalid_reg <= 1'b0;
    end
    if (rst) begin
        s_axil_bvalid_reg <= 1'b0;
        s_axil_rvalid_reg <= 1'b0;
        slot_reg <= 0; msg_reg <= 0; wire_reg <= 0; base_reg <= 0; in_len_reg <= 0; max_image_reg <= 0;
        type_lo_reg <= 0;
    end
end

// ---------------------------------------------------------------- input memory
reg [IN_WIDTH-1:0] imem [0:(1 << IN_ADDR_WIDTH)-1];
reg [IN_WIDTH-1:0] in_rd_data_reg = 0, in2_rd_data_reg = 0;
assign core_in_rd_data = in_rd_data_reg;
assign core_in2_rd_data = in2_rd_data_reg;

reg [31:0] len_reg = 0;                             // bytes of the message received so far
// tkeep: how many bytes (contiguous from byte 0), and whether it is contiguous
reg [7:0] keep_n;
reg keep_ok;
integer k;
always @* begin
    keep_n = 8'd0;
    keep_ok = 1'b1;
    for (k = 0; k < IB; k = k + 1) begin
        if (s_axis_tkeep[k]) begin
            if (keep_n != k[7:0]) keep_ok = 1'b0;
            keep_n = keep_n + 8'd1;
        end
    end
    if (keep_n != IB[7:0] && !s_axis_tlast) keep_ok = 1'b0;
end
wire recv_open = st_reg == ST_RECV && !(stop_reg && len_reg == 0);
assign s_axis_tready = recv_open || st_reg == ST_DRAIN;
wire beat = s_axis_tvalid && s_axis_tready;
wire [32:0] len_after = {1'b0, len_reg} + {25'd0, keep_n};
wire beat_fits = len_after <= {1'b0, IN_BYTES};

// two ports, so that it maps onto true dual-port block RAM: port A the stream's writes
// while receiving (the core is idle then), else the core's first read port; port B the
// core's second read port
wire in_a_we = beat && st_reg == ST_RECV && keep_ok && beat_fits;
wire [IN_ADDR_WIDTH-1:0] in_a_addr = in_a_we ? len_reg[IN_ADDR_WIDTH - 1 + IB_SH:IB_SH] : core_in_addr;
always @(posedge clk) begin
    if (in_a_we) imem[in_a_addr] <= s_axis_tdata;
    if (core_in_rd_en) in_rd_data_reg <= imem[in_a_addr];
    if (core_in2_rd_en) in2_rd_data_reg <= imem[core_in2_addr];
end

// ---------------------------------------------------------------- output memory
// Port A: the core's write port (byte enables). Port B, one address: the core's second
// write port or its read port (the core never uses both in one cycle), or the DMA's read
// while the core is idle. The two write ports sit in separate processes (no write
// priority between them: the core never writes one word through both in a cycle) and a
// read is never beside a write on its own port, so yosys maps the memory onto true
// dual-port block RAM with byte enables (ECP5: DP16KD in 18-bit mode, 2 KB each).
// no_rw_check: a read of the word port A writes in the same cycle is undefined in the
// block RAM (the core never does it; checked below in simulation).
(* no_rw_check *) reg [OUT_WIDTH-1:0] omem [0:(1 << OUT_ADDR_WIDTH)-1];
reg [OUT_WIDTH-1:0] out_rd_data_reg = 0;
assign core_out_rd_data = out_rd_data_reg;
wire dma_rd = st_reg == ST_DMA0 || st_reg == ST_DMA;
wire [OUT_ADDR_WIDTH-1:0] dma_rd_addr;
wire [OUT_ADDR_WIDTH-1:0] b_addr = core_out2_wr_en ? core_out2_wr_addr : dma_rd ? dma_rd_addr : core_out_rd_addr;
wire b_rd = (dma_rd || core_out_rd_en) && !core_out2_wr_en;
integer b;
always @(posedge clk) begin
    for (b = 0; b < OB; b = b + 1)
        if (core_out_wr_en && core_out_wr_be[b]) omem[core_out_wr_addr][8*b +: 8] <= core_out_wr_data[8*b +: 8];
end
always @(posedge clk) begin
    for (b = 0; b < OB; b = b + 1)
        if (core_out2_wr_en && core_out2_wr_be[b]) omem[b_addr][8*b +: 8] <= core_out2_wr_data[8*b +: 8];
    if (b_rd) out_rd_data_reg <= omem[b_addr];
end

`ifndef SYNTHESIS
// the port contract the block RAM needs (the core's, docs/hardware.md "Ports")
always @(posedge clk) begin
    if (!rst && core_out2_wr_en && (core_out_rd_en || dma_rd))
        $fatal(1, "hw_axi_wrap: output memory second write port beside a read");
    if (!rst && core_out2_wr_en && core_out_wr_en && core_out2_wr_addr == core_out_wr_addr)
        $fatal(1, "hw_axi_wrap: output memory word %0d written through both ports", core_out_wr_addr);
    if (!rst && core_out_wr_en && (core_out_rd_en || dma_rd) && !core_out2_wr_en && b_addr == core_out_wr_addr)
        $fatal(1, "hw_axi_wrap: output memory word %0d read while written", core_out_wr_addr);
end
`endif

// ---------------------------------------------------------------- control
assign core_start = st_reg == ST_START;
assign core_in_len = len_reg;
assign core_root = msg_reg[15:0];
assign core_base = cursor_reg;
assign core_max_image = max_image_reg == 0 ? {32'd0, OUT_BYTES} : {32'd0, max_image_reg};
wire [31:0] cur_off = {{(32-OB_SH){1'b0}}, cursor_reg[OB_SH-1:0]};  // the cursor's byte offset in a bus word
wire [7:0] kind_of_code = core_err_code < 8'd16 ? ERR_MAP[8 * core_err_code[3:0] +: 8] : core_err_code;

// DMA state
reg [AXI_ADDR_WIDTH-1:0] aw_addr_reg = 0;           // next burst's (beat-aligned) address
reg [31:0] aw_beats_reg = 0, w_beats_reg = 0;       // beats not yet announced / not yet sent
reg [11:0] w_addr_reg = 0;                          // address of the next beat in its 4 KB page
reg [8:0] w_burst_left_reg = 0;                     // beats left in the current W burst (0: none open)
reg [3:0] outstanding_reg = 0;                      // bursts announced, response not yet received
reg [15:0] aw_ahead_reg = 0;                        // bursts announced whose data has not started
reg [OB_SH-1:0] shift_reg = 0;                      // the cursor's byte offset in a bus word
reg [31:0] w_index_reg = 0;                         // beat index = output memory word index
reg [OUT_WIDTH-1:0] prev_word_reg = 0;              // word w_index - 1 (the realigner's low half)
reg [31:0] dma_lo_reg = 0, dma_hi_reg = 0;          // image bytes [shift, shift + len) of the beats
reg bresp_err_reg = 1'b0;

// burst length: beats left, capped by MAX_BURST and by the next 4 KB boundary
function [8:0] burst_len;
    input [11:0] addr;                              // the address within its 4 KB page
    input [31:0] left;
    reg [12:0] to_4k;
    begin
        to_4k = (13'd4096 - {1'b0, addr}) >> OB_SH;
        burst_len = MAX_BURST_LEN;
        if (left < burst_len) burst_len = left[8:0];
        if ({19'd0, to_4k} < burst_len) burst_len = to_4k[8:0];
    end
endfunction

wire [8:0] aw_len = burst_len(aw_addr_reg[11:0], aw_beats_reg);
wire [8:0] w_len = burst_len(w_addr_reg, w_beats_reg);
assign m_axi_awid = AXI_ID;
assign m_axi_awaddr = aw_addr_reg;
assign m_axi_awlen = aw_len[7:0] - 8'd1;
assign m_axi_awsize = OB_SH;
assign m_axi_awburst = 2'b01;                       // INCR
assign m_axi_awlock = 1'b0;
assign m_axi_awcache = 4'b0011;
assign m_axi_awprot = 3'b000;
assign m_axi_awvalid = st_reg == ST_DMA && aw_beats_reg != 0 && {28'd0, outstanding_reg} < MAX_OUTSTANDING;
wire aw_fire = m_axi_awvalid && m_axi_awready;

// a beat is ready when its burst is announced (or being opened with one announced)
wire w_open = w_burst_left_reg != 0 || (aw_ahead_reg != 0 && w_beats_reg != 0);
assign m_axi_wvalid = st_reg == ST_DMA && w_open;
wire w_fire = m_axi_wvalid && m_axi_wready;
wire [8:0] w_left_now = w_burst_left_reg != 0 ? w_burst_left_reg : w_len;
assign m_axi_wlast = w_left_now == 9'd1;
// the beat: bytes [OB - shift, 2 OB - shift) of {word w_index, word w_index - 1}
wire [2*OUT_WIDTH-1:0] pair = {out_rd_data_reg, prev_word_reg};
wire [31:0] lane = OB - {{(32-OB_SH){1'b0}}, shift_reg};
wire [OUT_WIDTH-1:0] beat_data = pair[8 * lane +: OUT_WIDTH];
// bytes outside the image go out as zeros: never stale output memory (nor x in simulation)
genvar g;
generate
    for (g = 0; g < OB; g = g + 1) begin : strobe
        wire [31:0] pos = (w_index_reg << OB_SH) + g;
        assign m_axi_wstrb[g] = pos >= dma_lo_reg && pos < dma_hi_reg;
        assign m_axi_wdata[8*g +: 8] = m_axi_wstrb[g] ? beat_data[8*g +: 8] : 8'd0;
    end
endgenerate
assign dma_rd_addr = st_reg == ST_DMA0 ? {OUT_ADDR_WIDTH{1'b0}} : w_fire ? w_index_reg[OUT_ADDR_WIDTH-1:0] + 1'b1 : w_index_reg[OUT_ADDR_WIDTH-1:0];
assign m_axi_bready = 1'b1;
wire b_fire = m_axi_bvalid && m_axi_bready;

assign irq = done_flag_reg | err_flag_reg;

// go: the request registers checked as the device checks them
// (TABLES=1 without tables: MSG is not checked, the core refuses the message: `unsupported`)
wire msg_bad = tables_on ? core_tables_ok && msg_reg >= {16'd0, tn_types_reg} : msg_reg >= NUM_TYPES;
wire [7:0] go_err = slot_reg != 0 ? D_NO_SLOT : msg_bad ? D_NO_MESSAGE : wire_reg != WIRE ? D_BAD_WIRE : 8'd0;

task halt;
    input [7:0] kind;
    input [31:0] offset;
    begin
        err_kind_reg <= kind;
        err_offset_reg <= offset;
        err_flag_reg <= 1'b1;
    end
endtask

always @(posedge clk) begin
    if (wr_ack) begin
        done_flag_reg <= 1'b0;
        err_flag_reg <= 1'b0;
    end
    if (wr_stop) stop_reg <= 1'b1;
    case (st_reg)
    ST_IDLE, ST_HALT: begin
        if (wr_go) begin
            stop_reg <= 1'b0;
            err_flag_reg <= 1'b0;
            cursor_reg <= base_reg;
            len_reg <= 0;
            if (go_err != 0) begin
                halt(go_err, 0);
                st_reg <= ST_HALT;
            end else begin
                err_kind_reg <= 0;
                err_offset_reg <= 0;
                st_reg <= ST_RECV;
            end
        end
    end
    ST_RECV: begin
        if (stop_reg && len_reg == 0) begin
            st_reg <= ST_IDLE;
            stop_reg <= 1'b0;
        end else if (beat) begin
            if (!keep_ok || !beat_fits) begin
                halt(!keep_ok ? D_PROTOCOL : D_INPUT_TOO_LARGE, len_reg);
                if (!keep_ok) n_protocol_reg <= n_protocol_reg + 1;
                st_reg <= s_axis_tlast ? ST_HALT : ST_DRAIN;
            end else begin
                len_reg <= len_after[31:0];
                if (s_axis_tlast) st_reg <= ST_START;
            end
        end
    end
    ST_DRAIN: if (beat && s_axis_tlast) st_reg <= ST_HALT;
    ST_START: st_reg <= ST_RUN;
    ST_RUN: begin
        if (core_done) begin
            time_reg <= core_cycles;
            if (core_err_code != 0) begin
                halt(kind_of_code, core_err_offset);
                n_requests_reg <= n_requests_reg + 1;
                n_bytes_in_reg <= n_bytes_in_reg + {32'd0, len_reg};
                n_rejections_reg <= n_rejections_reg + 1;
                st_reg <= ST_HALT;
            end else begin
                image_len_reg <= core_image_size;
                shift_reg <= cursor_reg[OB_SH-1:0];
                aw_addr_reg <= {cursor_reg[AXI_ADDR_WIDTH-1:OB_SH], {OB_SH{1'b0}}};
                w_addr_reg <= {cursor_reg[11:OB_SH], {OB_SH{1'b0}}};
                aw_beats_reg <= (cur_off + core_image_size + OB - 1) >> OB_SH;
                w_beats_reg <= (cur_off + core_image_size + OB - 1) >> OB_SH;
                dma_lo_reg <= cur_off;
                dma_hi_reg <= cur_off + core_image_size;
                w_index_reg <= 0;
                w_burst_left_reg <= 0;
                aw_ahead_reg <= 0;
                prev_word_reg <= 0;
                bresp_err_reg <= 1'b0;
                st_reg <= ST_DMA0;
            end
        end
    end
    ST_DMA0: st_reg <= ST_DMA;                      // the first word's read
    ST_DMA: begin
        if (aw_fire) begin
            aw_addr_reg <= aw_addr_reg + ({{(AXI_ADDR_WIDTH-9){1'b0}}, aw_len} << OB_SH);
            aw_beats_reg <= aw_beats_reg - {23'd0, aw_len};
        end
        aw_ahead_reg <= aw_ahead_reg + {15'd0, aw_fire} - {15'd0, w_fire && w_burst_left_reg == 0};
        outstanding_reg <= outstanding_reg + {3'd0, aw_fire} - {3'd0, b_fire};
        if (b_fire && m_axi_bresp[1]) bresp_err_reg <= 1'b1;
        if (w_fire) begin
            w_burst_left_reg <= w_left_now - 9'd1;
            w_addr_reg <= w_addr_reg + OB_12;
            w_beats_reg <= w_beats_reg - 1;
            w_index_reg <= w_index_reg + 1;
            prev_word_reg <= out_rd_data_reg;
        end
        if (aw_beats_reg == 0 && w_beats_reg == 0 && outstanding_reg == 0) begin
            n_requests_reg <= n_requests_reg + 1;
            n_bytes_in_reg <= n_bytes_in_reg + {32'd0, len_reg};
            if (bresp_err_reg) begin
                halt(D_OUT_OF_RANGE, 0);
                st_reg <= ST_HALT;
            end else begin
                n_bytes_out_reg <= n_bytes_out_reg + {32'd0, image_len_reg};
                cursor_reg <= cursor_reg + {32'd0, image_len_reg};
                done_flag_reg <= 1'b1;
                len_reg <= 0;
                st_reg <= ST_RECV;
            end
        end
    end
    default: st_reg <= ST_IDLE;
    endcase
    if (st_reg != ST_DMA) outstanding_reg <= 0;
    if (rst) begin
        st_reg <= ST_IDLE;
        cursor_reg <= 0; len_reg <= 0; err_kind_reg <= 0; err_offset_reg <= 0; image_len_reg <= 0; time_reg <= 0;
        n_requests_reg <= 0; n_bytes_in_reg <= 0; n_bytes_out_reg <= 0; n_rejections_reg <= 0; n_protocol_reg <= 0;
        done_flag_reg <= 1'b0; err_flag_reg <= 1'b0; stop_reg <= 1'b0; outstanding_reg <= 0; aw_ahead_reg <= 0;
        aw_beats_reg <= 0; w_beats_reg <= 0; w_burst_left_reg <= 0;
    end
end

// the core's status outputs the wrapper does not need, and the bus fields it ignores
wire unused = &{1'b0, core_busy, s_axil_awprot, s_axil_arprot, s_axil_wstrb, m_axi_bid, m_axi_bresp[0],
                s_axil_awaddr[1:0], s_axil_araddr[1:0]};

endmodule

`resetall
`default_nettype wire

/*
 * hw_og_reader -- one input stage of the objgraph core (rtl/hw_og_core.v has two: the
 * allocation phase reads the type ids through one, the member phase the members through
 * the other, each on its own read port of the input memory).
 *
 * A FIFO of FIFO_WORDS input words, fed one word per cycle from a read port with 1-cycle
 * latency, starting at word `first_word`; the consumer sees a window of the next
 * WIN = 2*IN_WIDTH/8 bytes at the byte position and takes 0..WIN bytes per cycle (`fire`,
 * `take_n`). `ok` says the window is full or every requested word has landed (then it
 * holds every byte still to come). Every register's outcomes are computed from registers
 * (take_n must be one), so `fire` only selects; the words a take uses up leave the FIFO a
 * cycle later (the window skips them meanwhile), so the FIFO's multiplexers are driven by
 * registers only; the fetch conditions are registered a cycle ahead.
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module hw_og_reader #(
    // Input memory word width in bits: 32, 64 or 128.
    parameter IN_WIDTH = 64,
    // Input memory word address bits.
    parameter IN_ADDR_WIDTH = 12
) (
    input  wire                      clk,
    input  wire                      rst,            // synchronous, active high

    input  wire                      start,          // pulse: read nwords words from first_word on
    input  wire [31:0]               first_word,
    input  wire [31:0]               nwords,
    input  wire                      stop,           // stop requesting words

    input  wire                      fire,           // the consumer takes take_n bytes now
    input  wire [5:0]                take_n,         // (a register of the consumer's)
    output wire [2*IN_WIDTH-1:0]     window,         // bytes at the position (past what landed: garbage)
    output wire                      ok,             // window full, or everything landed
    output wire [31:0]               pos,            // byte position, less pos_q (it catches up a cycle late)
    output wire [5:0]                pos_q,

    // input memory read port (1-cycle latency)
    output wire                      in_rd_en,
    output wire [IN_ADDR_WIDTH-1:0]  in_addr,
    input  wire [IN_WIDTH-1:0]       in_rd_data
);

localparam IB = IN_WIDTH / 8;
localparam IB_SH = (IB == 16) ? 4 : (IB == 8) ? 3 : 2;
localparam WIN = 2 * IB;
// a window spans up to 3 words; the fetch is conservative (room_reg), hence the spare words
localparam FIFO_WORDS = 10;
localparam [31:0] IB32 = IB;
localparam [31:0] WIN32 = WIN;
localparam [31:0] FD32 = FIFO_WORDS;
localparam [4:0] FD5 = FD32[4:0];
localparam [7:0] WIN8 = WIN32[7:0];
localparam [7:0] IB8 = IB32[7:0];

initial begin
    if (IN_WIDTH != 32 && IN_WIDTH != 64 && IN_WIDTH != 128) begin
        $error("Error: IN_WIDTH must be 32, 64 or 128 (instance %m)");
        $finish;
    end
end

reg [FIFO_WORDS*IN_WIDTH-1:0] fq_reg = {FIFO_WORDS*IN_WIDTH{1'b0}};  // word 0 = oldest
reg [3:0]            occ_reg = 4'd0;      // words in the FIFO
reg [1:0]            pp_reg = 2'd0;       // words the last take used up: dropped this cycle
reg                  land_reg = 1'b0;     // the word requested last cycle lands now
reg [31:0]           fetch_reg = 32'd0;   // next word to request
reg [31:0]           left_reg = 32'd0;    // words not yet requested
reg                  more_reg = 1'b0;     // left_reg != 0
reg                  room_reg = 1'b0;     // a word may be requested
reg                  rd_on_reg = 1'b0;    // fetching enabled
reg [IB_SH-1:0]      bofs_reg = {IB_SH{1'b0}}; // byte position mod IB (offset in word 0)
reg [7:0]            avail_reg = 8'd0;    // bytes buffered from the byte position
reg [31:0]           pos_reg = 32'd0;
reg [5:0]            take_q_reg = 6'd0;   // last cycle's take
reg                  all_reg = 1'b0;      // every requested word has landed
reg                  full_reg = 1'b0;     // avail_reg >= WIN
// the FIFO slot a landing word goes to (occ_reg - pp_reg), one-hot, decided a cycle ahead
// for both outcomes of that cycle's take: ins0 with no word used up, ins1 with the take's
reg [FIFO_WORDS-1:0] ins0_reg = {{FIFO_WORDS-1{1'b0}}, 1'b1}, ins1_reg = {{FIFO_WORDS-1{1'b0}}, 1'b1};

wire [5*IN_WIDTH-1:0] fq_head = fq_reg[5*IN_WIDTH-1:0];
wire [5*IN_WIDTH-1:0] fq_shift = fq_head >> {pp_reg, bofs_reg, 3'b000};
assign window = fq_shift[WIN*8-1:0];
assign ok = full_reg || all_reg;
assign pos = pos_reg;
assign pos_q = take_q_reg;

wire issue = rd_on_reg && more_reg && room_reg;
assign in_rd_en = issue;
assign in_addr = fetch_reg[IN_ADDR_WIDTH-1:0];

// FIFO update: drop the pp_reg words used up last cycle, append the landing word behind the rest
// (continuous assignments throughout, not always @*: Icarus evaluates those only on a change)
wire [FIFO_WORDS*IN_WIDTH-1:0] fq_next;
wire [(FIFO_WORDS+2)*IN_WIDTH-1:0] fq_ext = {{2*IN_WIDTH{1'b0}}, fq_reg};
wire [3:0] occ_left = occ_reg - {2'b00, pp_reg};
wire [3:0] occ_n = occ_left + {3'b000, land_reg};             // occ_reg next
wire [FIFO_WORDS-1:0] ins_oh = (pp_reg != 2'd0) ? ins1_reg : ins0_reg;   // (= K == occ_left)
genvar gk;
generate
for (gk = 0; gk < FIFO_WORDS; gk = gk + 1) begin : g_fq
    assign fq_next[gk*IN_WIDTH +: IN_WIDTH] = (land_reg && ins_oh[gk]) ? in_rd_data :
        (pp_reg == 2'd0) ? fq_ext[gk*IN_WIDTH +: IN_WIDTH] :
        (pp_reg == 2'd1) ? fq_ext[(gk+1)*IN_WIDTH +: IN_WIDTH] : fq_ext[(gk+2)*IN_WIDTH +: IN_WIDTH];
end
endgenerate

// both outcomes of a take, from registers
wire [7:0] avail_land = avail_reg + (land_reg ? IB8 : 8'd0);
wire [7:0] avail_take = avail_land - {2'b00, take_n};
wire [5:0] tend = {{6-IB_SH{1'b0}}, bofs_reg} + take_n;   // (whole words used up: bits IB_SH+1:IB_SH)
// the "window full" flag for the next cycle leaves out the word landing now (conservative:
// it only delays a fire by a cycle when the window is nearly empty; no adder before the
// comparison)
wire [7:0] avail_left = avail_reg - {2'b00, take_n};
wire full_take = avail_left >= WIN8, full_keep = avail_reg >= WIN8;

integer k;
always @(posedge clk) begin
    take_q_reg <= fire ? take_n : 6'd0;
    pos_reg <= pos_reg + {26'd0, take_q_reg};
    all_reg <= !issue && !land_reg && !more_reg;
    if (fire) bofs_reg <= tend[IB_SH-1:0];
    avail_reg <= fire ? avail_take : avail_land;
    full_reg <= fire ? full_take : full_keep;
    occ_reg <= occ_n;
    for (k = 0; k < FIFO_WORDS; k = k + 1) begin
        ins0_reg[k] <= occ_n == k[3:0];
        ins1_reg[k] <= occ_n - {2'b00, tend[IB_SH+1:IB_SH]} == k[3:0];
    end
    pp_reg <= fire ? tend[IB_SH+1:IB_SH] : 2'd0;
    fq_reg <= fq_next;
    land_reg <= issue;
    if (issue) fetch_reg <= fetch_reg + 32'd1;
    if (issue) left_reg <= left_reg - 32'd1;
    more_reg <= issue ? (left_reg != 32'd1) : (left_reg != 32'd0);
    // room for one more word beside those in the FIFO and up to two on their way
    // (conservative: the words a take frees count a cycle later; no adder on the path)
    room_reg <= {1'b0, occ_reg} <= FD5 - 5'd3;
    if (stop) rd_on_reg <= 1'b0;

    if (start) begin
        pos_reg <= first_word << IB_SH;
        take_q_reg <= 6'd0; all_reg <= 1'b0; full_reg <= 1'b0; bofs_reg <= {IB_SH{1'b0}};
        avail_reg <= 8'd0; occ_reg <= 4'd0; pp_reg <= 2'd0;
        ins0_reg <= {{FIFO_WORDS-1{1'b0}}, 1'b1}; ins1_reg <= {{FIFO_WORDS-1{1'b0}}, 1'b1};
        fq_reg <= {FIFO_WORDS*IN_WIDTH{1'b0}};
        land_reg <= 1'b0; fetch_reg <= first_word; rd_on_reg <= 1'b1;
        left_reg <= nwords;
        more_reg <= nwords != 32'd0;
        room_reg <= 1'b1;
    end
    if (rst) begin
        rd_on_reg <= 1'b0;
        land_reg <= 1'b0;
    end
end

wire unused_ok = &{1'b0, fq_shift[5*IN_WIDTH-1:WIN*8], tend};

endmodule

`resetall
`default_nettype wire

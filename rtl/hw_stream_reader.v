/*
 * hw_stream_reader -- unaligned little-endian field reader over a word-wide input memory.
 *
 * Input side: a synchronous memory READ PORT (BRAM style), no backpressure:
 *   mem_rd_en / mem_addr are driven in cycle k (word address, DATA_WIDTH-bit words,
 *   byte 0 of the stream is bits [7:0] of word 0); mem_rd_data must carry mem[mem_addr]
 *   during cycle k+1 (exactly one cycle of read latency). Between reads mem_rd_data may
 *   hold anything; it is only sampled in the cycle after mem_rd_en. Words are never
 *   requested at or beyond the input length (rounded up to a whole word).
 *
 * Consumer side: a zero-latency request/response handshake.
 *   The consumer drives rd_valid with an operation:
 *     rd_skip = 0: READ  rd_size bytes (rd_size = log2 bytes: 0->1, 1->2, 2->4, 3->8);
 *     rd_skip = 1: SKIP  rd_skip_len bytes (0 .. 2^32-1).
 *   rd_ready depends combinationally on the operation (and on start); the transfer happens
 *   at the rising edge of a cycle with rd_valid && rd_ready, and in THAT cycle
 *     rd_data     = the field, little-endian, zero-extended to 64 bits (0 for SKIP),
 *     rd_offset   = byte position of the field (= offset),
 *     rd_past_end = the operation ends beyond the input length; the stream does not move,
 *                   rd_data is unspecified, and the sticky flag past_end is set.
 *   A READ is ready when the field is buffered (or when it is known to run past the end).
 *   A SKIP is always ready: within the buffer it shifts the buffer, beyond it the buffer
 *   is flushed and fetching restarts at the new position (refill takes 2-3 cycles).
 *   rd_valid may be dropped at any time (consumer backpressure costs nothing).
 *
 * Peek window (for varints, tags, lookahead): win_data holds the next WIN_BYTES bytes
 * of the stream starting at `offset`, of which the low win_avail bytes are valid (the
 * rest read as zero). win_eof says the buffer holds everything up to the input end, so a
 * window shorter than needed then means "truncated input" rather than "wait".
 *
 * The move: adv_en says this cycle's operation is taken and moves the stream (not past
 * the end, not in a start cycle), so at the edge offset becomes offset + adv_len (the SKIP
 * length or the READ size; modulo 2^32, so a BACK_SKIP length goes back); without adv_en
 * offset holds, except that start (and rst) set it to 0. A consumer can so tell from its
 * own small inputs where the reader will be next cycle, without the 32-bit sum.
 *
 * start (one-cycle pulse) samples in_len, rewinds to offset 0 and clears past_end.
 * Operations presented in the start cycle are not accepted (rd_ready = 0). With
 * FAST_START=1 the start cycle requests word 0 itself (when in_len > 0).
 *
 * Buffer: BUF_WORDS words of flip-flops (at least 3, as in the MSR paper's Stream Reader,
 * the minimum that hides the one-cycle memory latency) kept as a shift register whose byte
 * 0 is the byte at `offset`. A word is requested whenever the buffer plus the word in
 * flight plus one more word still fits, so once full the reader accepts one memory word
 * per cycle and completes one READ per cycle whenever the field is buffered:
 * 8-byte reads on a 64-bit datapath run at 8 bytes/cycle. Latency: start in cycle 0, first
 * word requested in cycle 1, lands in cycle 2, first field readable in cycle 3 (FAST_START:
 * requested in cycle 0, readable in cycle 2); a SKIP beyond the buffer likewise makes the
 * new position readable 3 cycles later (FAST_FLUSH: 2).
 *
 * Timing (the protobuf core's skip length comes late in its cycle, out of its next-state
 * logic): what the op's length decides is split by its compare with the buffered bytes
 * (the borrow of cnt - length, a carry chain). A SKIP no longer than them, or a buffered
 * READ, steps inside the buffer: the buffer shifts by the length's low bits and the count
 * drops by them, without the compare with the bytes left (such a step is never past the
 * end, as the buffer holds only input bytes). A longer SKIP, or a back one, flushes: the
 * word holding pos + adv_len is requested (FAST_FLUSH) and the one after it, posw_reg +
 * adv_len (posw_reg = pos + one word, kept beside pos_reg), is the next to request; both
 * sums run in parallel with rem - adv_len (the bytes left; its borrow is "past the end")
 * and adv_len - rem (with that borrow, adv_len == rem: the new position is the input's end,
 * where on a word boundary nothing is requested), so no compare or add follows a sum. A
 * word's input bytes are counted when it lands, from registers (the input's last word is
 * flagged when requested: an equality of its word address with the last word's), not when
 * it is requested. The cycle behaviour is the one described above, unchanged by this split
 * (rtl/tb/hw_stream_reader checks it cycle by cycle against a timing model). With
 * SKIP_IN_BOUNDS=1 a SKIP always moves (its consumer never skips past the end), so the
 * enables of the position and the bytes left come from rd_valid alone, not from the
 * borrows of the late length (the protobuf core's longest path ended there).
 *
 * Lengths and offsets are 32-bit byte counts; the stream may be at most 2^32-1 bytes and
 * at most 2^ADDR_WIDTH words.
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module hw_stream_reader #(
    // Width of the memory data port in bits: 32, 64 or 128.
    parameter DATA_WIDTH = 64,
    // Width of the memory word address (the memory holds 2^ADDR_WIDTH words).
    parameter ADDR_WIDTH = 12,
    // Bytes exposed on the peek window (>= 10 so a whole varint fits; <= buffer size).
    parameter WIN_BYTES = 16,
    // 1 = a SKIP beyond the buffer requests the new position's word in the same cycle
    // (readable 2 cycles later instead of 3; mem_addr then depends on rd_skip_len).
    parameter FAST_FLUSH = 0,
    // 1 = a SKIP whose rd_skip_len has bit 31 set goes BACK 2^32 - rd_skip_len bytes (the
    // consumer keeps it within the stream; streams are then below 2 GiB).
    parameter BACK_SKIP = 0,
    // 1 = the consumer never presents a forward SKIP past the end (the protobuf core checks
    // every length against its frame first): a SKIP then moves without the compare with the
    // bytes left, so the move (adv_en, and the position's enables) does not wait for that
    // 32-bit borrow of the late length; rd_past_end is for READs only. Every simulation
    // stops ($fatal) on a SKIP past the end.
    parameter SKIP_IN_BOUNDS = 0,
    // 1 = a start requests word 0 in the same cycle (the first bytes readable 2 cycles after
    // start instead of 3; mem_rd_en / mem_addr then depend on start and in_len).
    parameter FAST_START = 0
) (
    input  wire                     clk,
    input  wire                     rst,            // synchronous, active high

    // control
    input  wire                     start,          // pulse: begin a new stream of in_len bytes
    input  wire [31:0]              in_len,         // input length in bytes, sampled on start

    // memory read port (1-cycle latency)
    output wire                     mem_rd_en,
    output wire [ADDR_WIDTH-1:0]    mem_addr,
    input  wire [DATA_WIDTH-1:0]    mem_rd_data,

    // request/response
    input  wire                     rd_valid,
    output wire                     rd_ready,
    input  wire                     rd_skip,        // 0 = READ, 1 = SKIP
    input  wire [1:0]               rd_size,        // READ size: log2 of 1/2/4/8 bytes
    input  wire [31:0]              rd_skip_len,    // SKIP length in bytes
    output wire [63:0]              rd_data,
    output wire [31:0]              rd_offset,
    output wire                     rd_past_end,
    output wire                     adv_en,         // the operation moves the stream now ...
    output wire [31:0]              adv_len,        // ... by these bytes (offset's next value = offset + adv_len)

    // peek window and status
    output wire [WIN_BYTES*8-1:0]   win_data,
    output wire [$clog2(WIN_BYTES+1)-1:0] win_avail,  // valid bytes in win_data (0..WIN_BYTES)
    output wire                     win_eof,
    output wire [31:0]              offset,         // byte position of win_data[7:0]
    output wire [31:0]              rem_bytes,      // in_len - offset
    output wire                     at_end,         // offset == in_len
    output wire                     past_end        // sticky: some operation ran past the end
);

// ---------------------------------------------------------------- derived parameters
// bytes per memory word
localparam WORD_BYTES = DATA_WIDTH / 8;
// log2(WORD_BYTES)
localparam WORD_SHIFT = (WORD_BYTES == 16) ? 4 : (WORD_BYTES == 8) ? 3 : 2;
// words needed to show a whole window
localparam WIN_WORDS = (WIN_BYTES + WORD_BYTES - 1) / WORD_BYTES;
// buffer size in words: 3 hides the memory latency at full rate; more if the window needs it
localparam BUF_WORDS = (WIN_WORDS > 3) ? WIN_WORDS : 3;
// buffer size in bytes
localparam BUF_BYTES = BUF_WORDS * WORD_BYTES;
// width of a byte count 0..BUF_BYTES
localparam CNT_WIDTH = $clog2(BUF_BYTES + 1);
// width of win_avail (0..WIN_BYTES)
localparam WIN_AVAIL_WIDTH = $clog2(WIN_BYTES + 1);
// WORD_BYTES, WIN_BYTES and BUF_BYTES as 32-bit constants (for width-clean arithmetic)
localparam [31:0] WORD_BYTES_32 = WORD_BYTES;
localparam [31:0] WIN_BYTES_32 = WIN_BYTES;
localparam [31:0] BUF_BYTES_32 = BUF_BYTES;
localparam [32:0] WORD_BYTES_33 = {1'b0, WORD_BYTES_32};

// ---------------------------------------------------------------- parameter checks
initial begin
    if (DATA_WIDTH != 32 && DATA_WIDTH != 64 && DATA_WIDTH != 128) begin
        $error("Error: DATA_WIDTH must be 32, 64 or 128 (instance %m)");
        $finish;
    end
    if (WIN_BYTES < 10 || WIN_BYTES > BUF_BYTES) begin
        $error("Error: WIN_BYTES must be in 10..BUF_BYTES (instance %m)");
        $finish;
    end
    if (ADDR_WIDTH < 1 || ADDR_WIDTH + WORD_SHIFT > 32) begin
        $error("Error: ADDR_WIDTH + log2(DATA_WIDTH/8) must be in 1..32 (instance %m)");
        $finish;
    end
end

// ---------------------------------------------------------------- state
reg [BUF_BYTES*8-1:0]  buf_reg = {BUF_BYTES*8{1'b0}}, buf_next;   // byte 0 = byte at pos
reg [CNT_WIDTH-1:0]    cnt_reg = {CNT_WIDTH{1'b0}}, cnt_next;     // valid bytes in buf
reg [31:0]             pos_reg = 32'd0, pos_next;                 // stream offset of buf byte 0
reg [32:0]             posw_reg = WORD_BYTES_33, posw_next;       // pos + WORD_BYTES, kept beside it
reg [31:0]             rem_reg = 32'd0, rem_next;                 // in_len - pos
reg [31:0]             len_reg = 32'd0, len_next;                 // sampled in_len
reg [ADDR_WIDTH-1:0]   lastw_reg = {ADDR_WIDTH{1'b0}}, lastw_next; // word address of the input's last byte
reg [WORD_SHIFT:0]     lastb_reg = {WORD_SHIFT+1{1'b0}}, lastb_next; // input bytes in that word (1..WORD_BYTES)
reg [WORD_BYTES-1:0]   lastm_reg = {WORD_BYTES{1'b0}}, lastm_next;   // its bytes that are input bytes (lastb_reg ones)
reg [32:0]             fetch_pos_reg = 33'd0, fetch_pos_next;     // byte address of next word to request (word aligned)
reg [WORD_SHIFT-1:0]   fetch_drop_reg = {WORD_SHIFT{1'b0}}, fetch_drop_next; // leading bytes to drop from that word
reg                    land_valid_reg = 1'b0, land_valid_next;    // a requested word lands this cycle
reg [WORD_SHIFT-1:0]   land_drop_reg = {WORD_SHIFT{1'b0}}, land_drop_next;   // leading bytes of it to drop
reg                    land_last_reg = 1'b0, land_last_next;      // it is the input's last word (lastb_reg bytes)
reg                    past_end_reg = 1'b0, past_end_next;

// ---------------------------------------------------------------- request decode
// The operation's length (adv_len, the SKIP length) arrives late in the consumer's cycle.
// What it decides is split so that it reaches the registers through as little as possible:
//   * in the buffer (`step_in`, the common case): a SKIP no longer than the buffered bytes
//     (the borrow of cnt_reg - adv_len, a carry chain beside the sum) or
//     a buffered READ. Such an op is never past the end (cnt_reg <= rem_reg), so the buffer,
//     its count and the position move on it without the compare with rem_reg;
//   * beyond the buffer (`flush`, a SKIP to a new position, or back): the new position's
//     word, its refill, and the end tests are the sum pos + adv_len (the one carry chain
//     behind adv_len; posw + adv_len beside it for the word after, the difference rem -
//     adv_len for the bytes left and the past-end borrow, and adv_len - rem whose borrow
//     with it tells adv_len == rem (the new position is the input's end), in parallel), so
//     no compare follows the sum;
//   * a word's input bytes (all, or the last word's lastb_reg) are not counted when it is
//     requested: the request only registers whether it is the input's last word (an
//     ADDR_WIDTH-bit equality of its word address with lastw_reg; on a flush, of the sum's
//     word bits, the one compare after the sum, into a register alone).
wire [3:0]  need = 4'd1 << rd_size;                          // READ size in bytes
// READ runs past the end: rem < need (need <= 8)
wire        read_past = (rem_reg[31:4] == 28'd0) && (rem_reg[3:0] < need);
wire        skip_back = (BACK_SKIP != 0) && rd_skip_len[31];
wire        read_buffered = {{CNT_WIDTH{1'b0}}, need} <= {4'd0, cnt_reg};
// SKIP that stays within the buffered bytes (never past the end): the borrow of cnt - len,
// a carry chain (faster than a zero test of the length's high bits and a small compare)
/* verilator lint_off UNUSEDSIGNAL */
wire [32:0] near_diff = {{33-CNT_WIDTH{1'b0}}, cnt_reg} - {1'b0, rd_skip_len};   // (the borrow only)
/* verilator lint_on UNUSEDSIGNAL */
wire        skip_near = !skip_back && !near_diff[32];
assign      adv_len = rd_skip ? rd_skip_len : {28'd0, need};
// rem - adv_len: the bytes left after the move; its borrow is a forward SKIP past the end
// (skip_over; with SKIP_IN_BOUNDS never taken as such: checked in simulation below)
wire [32:0] rem_diff = {1'b0, rem_reg} - {1'b0, adv_len};
wire        skip_over = !skip_back && rem_diff[32];
wire        skip_past = (SKIP_IN_BOUNDS == 0) && skip_over;
wire        op_past = rd_skip ? skip_past : read_past;

assign rd_ready    = !start && (rd_skip || read_past || read_buffered);
assign rd_past_end = op_past;
assign rd_offset   = pos_reg;

wire        accept = rd_valid && rd_ready;
// the op moves the stream within the buffer (implies !op_past)
wire        step_in = rd_valid && !start && (rd_skip ? skip_near : read_buffered);
// a SKIP beyond the buffer (or back): flush and refetch at the new position
wire        flush = rd_valid && !start && rd_skip && !skip_near && !skip_past;
// (SKIP_IN_BOUNDS: a SKIP always moves, near or not: written so, not left to the mapper)
wire        advance = (SKIP_IN_BOUNDS != 0) ? rd_valid && !start && (rd_skip || read_buffered) : step_in || flush;
// (the same as advance, cnt_reg <= rem_reg, written without the buffer compares: the move
// the consumer sees is the op taken and not past the end)
assign      adv_en = accept && !op_past;
// bytes removed from the buffer by an in-buffer step (<= cnt_reg)
wire [CNT_WIDTH-1:0] consume = adv_len[CNT_WIDTH-1:0];
// the new position; back skips (bit 31) wrap modulo 2^32
wire [31:0] new_pos = pos_reg + adv_len;
// the new position + WORD_BYTES (33 bits: the word after new_pos's, for the refetch)
wire [32:0] new_posw = posw_reg + {skip_back & rd_skip, adv_len};
// the word holding new_pos is the input's last (for a flush; kept apart so that the flush
// decision only selects it)
(* keep *) wire new_last;
assign new_last = new_pos[WORD_SHIFT +: ADDR_WIDTH] == lastw_reg;

// READ result: low bytes of the buffer, zero-extended
reg [63:0] rd_data_r;
always @* begin
    case (rd_size)
        2'd0: rd_data_r = {56'd0, buf_reg[7:0]};
        2'd1: rd_data_r = {48'd0, buf_reg[15:0]};
        2'd2: rd_data_r = {32'd0, buf_reg[31:0]};
        default: rd_data_r = buf_reg[63:0];
    endcase
end
assign rd_data = rd_skip ? 64'd0 : rd_data_r;

// ---------------------------------------------------------------- fetch decision
// Room for the buffer, the word in flight and one more word (consumption this cycle is
// ignored so the memory request does not depend on the consumer). The word in flight is
// counted as a whole word: it is less only when it is the input's last word (then no word
// is left to request) or the first word after a flush (then the buffer is empty and there
// is room either way), so the request is the one a count of its bytes would give.
wire        room = land_valid_reg ? ({{32-CNT_WIDTH{1'b0}}, cnt_reg} + 2 * WORD_BYTES_32 <= BUF_BYTES_32)
                                  : ({{32-CNT_WIDTH{1'b0}}, cnt_reg} + WORD_BYTES_32 <= BUF_BYTES_32);
wire        more = fetch_pos_reg < {1'b0, len_reg};
wire        issue = !start && room && more;

// FAST_FLUSH: the word holding the new position, requested in the flush cycle unless the
// new position is the input's end on a word boundary (forward: adv_len == rem; a back skip
// always lands before the end)
wire        len_aligned = len_reg[WORD_SHIFT-1:0] == {WORD_SHIFT{1'b0}};
// (adv_len == rem as two borrows, adv_len < rem and rem_diff's adv_len > rem: carry chains
// beside the sum instead of an equality tree, which the mapper chained into the request)
/* verilator lint_off UNUSEDSIGNAL */
wire [32:0] rem_under = {1'b0, adv_len} - {1'b0, rem_reg};                        // (the borrow only)
/* verilator lint_on UNUSEDSIGNAL */
wire        flush_at_end = !skip_back && !rem_under[32] && !rem_diff[32] && len_aligned;
wire        flush_issue = (FAST_FLUSH != 0) && flush && !flush_at_end;

// in_len - 1: the last byte's address (used when in_len > 0; the bits of a word address)
wire [WORD_SHIFT+ADDR_WIDTH-1:0] in_len_m1 = in_len[WORD_SHIFT+ADDR_WIDTH-1:0] - 1'b1;
// FAST_START: word 0, requested in the start cycle (when the input is not empty)
wire        start_issue = (FAST_START != 0) && start && in_len != 32'd0;

assign mem_rd_en = (FAST_START != 0 && start) ? start_issue : (FAST_FLUSH != 0 && flush) ? flush_issue : issue;
assign mem_addr  = (FAST_START != 0 && start) ? {ADDR_WIDTH{1'b0}}
                 : (FAST_FLUSH != 0 && flush) ? new_pos[WORD_SHIFT +: ADDR_WIDTH] : fetch_pos_reg[WORD_SHIFT +: ADDR_WIDTH];

// ---------------------------------------------------------------- landing word
// its input bytes: all, or the last word's lastb_reg (lastm_reg: registers only, a LUT a
// bit); drop the leading land_drop_reg bytes (a flush word's bytes before the position),
// zero the rest
wire [WORD_SHIFT:0]   land_end = land_last_reg ? lastb_reg : WORD_BYTES_32[WORD_SHIFT:0];
wire [WORD_SHIFT:0]   land_nbytes = land_end - {1'b0, land_drop_reg};
reg  [DATA_WIDTH-1:0] land_kept;
always @* begin : g_kept
    reg  [DATA_WIDTH-1:0] k_l;    // (stored once: a store wakes the readers)
    integer i;
    for (i = 0; i < WORD_BYTES; i = i + 1) begin
        k_l[i*8 +: 8] = (land_last_reg && !lastm_reg[i]) ? 8'd0 : mem_rd_data[i*8 +: 8];
    end
    land_kept = k_l;
end
wire [DATA_WIDTH-1:0] land_masked = land_kept >> {land_drop_reg, 3'b000};

// ---------------------------------------------------------------- next state
// The landing word is appended behind the CURRENT contents (offset cnt_reg, registers
// only), and the merged buffer is then shifted by the consumed bytes; the request only
// selects the shift amount and the final mux. This fits: the word was requested when
// buffer + word in flight + one word <= BUF_BYTES, and the buffer has not grown since.
wire [BUF_BYTES*8-1:0] land_wide = {{(BUF_WORDS-1)*DATA_WIDTH{1'b0}}, land_masked};
wire [BUF_BYTES*8-1:0] merged = land_valid_reg ? (buf_reg | (land_wide << {cnt_reg, 3'b000})) : buf_reg;
wire [CNT_WIDTH-1:0]   merged_cnt = land_valid_reg ? cnt_reg + {{CNT_WIDTH-WORD_SHIFT-1{1'b0}}, land_nbytes} : cnt_reg;
wire [BUF_BYTES*8-1:0] merged_shifted = merged >> {consume, 3'b000};

integer k;
always @* begin
    buf_next         = step_in ? merged_shifted : merged;
    cnt_next         = step_in ? merged_cnt - consume : merged_cnt;
    pos_next         = advance ? new_pos : pos_reg;
    posw_next        = advance ? new_posw : posw_reg;
    rem_next         = advance ? rem_diff[31:0] : rem_reg;
    len_next         = len_reg;
    lastw_next       = lastw_reg;
    lastb_next       = lastb_reg;
    lastm_next       = lastm_reg;
    fetch_pos_next   = issue ? fetch_pos_reg + WORD_BYTES : fetch_pos_reg;
    fetch_drop_next  = issue ? {WORD_SHIFT{1'b0}} : fetch_drop_reg;
    land_valid_next  = issue;
    land_drop_next   = fetch_drop_reg;
    land_last_next   = fetch_pos_reg[WORD_SHIFT +: ADDR_WIDTH] == lastw_reg;
    past_end_next    = past_end_reg || (accept && op_past);

    if (start) begin
        buf_next        = {BUF_BYTES*8{1'b0}};
        cnt_next        = {CNT_WIDTH{1'b0}};
        pos_next        = 32'd0;
        posw_next       = WORD_BYTES_33;
        rem_next        = in_len;
        len_next        = in_len;
        lastw_next      = in_len_m1[WORD_SHIFT +: ADDR_WIDTH];
        lastb_next      = {1'b0, in_len_m1[WORD_SHIFT-1:0]} + 1'b1;
        for (k = 0; k < WORD_BYTES; k = k + 1)
            lastm_next[k] = k <= in_len_m1[WORD_SHIFT-1:0];
        fetch_pos_next  = start_issue ? WORD_BYTES_33 : 33'd0;
        fetch_drop_next = {WORD_SHIFT{1'b0}};
        land_valid_next = start_issue;
        land_drop_next  = {WORD_SHIFT{1'b0}};
        land_last_next  = in_len_m1[WORD_SHIFT +: ADDR_WIDTH] == {ADDR_WIDTH{1'b0}};
        past_end_next   = 1'b0;
    end else if (flush) begin
        // the word landing now (and any requested now) belong to the old position; with
        // FAST_FLUSH the next word to request is the one after new_pos's (when new_pos is
        // the end on a word boundary nothing is requested, and both are past the end)
        buf_next        = {BUF_BYTES*8{1'b0}};
        cnt_next        = {CNT_WIDTH{1'b0}};
        fetch_pos_next  = (FAST_FLUSH != 0) ? {new_posw[32:WORD_SHIFT], {WORD_SHIFT{1'b0}}}
                                            : {1'b0, new_pos[31:WORD_SHIFT], {WORD_SHIFT{1'b0}}};
        fetch_drop_next = (FAST_FLUSH != 0) ? {WORD_SHIFT{1'b0}} : new_pos[WORD_SHIFT-1:0];
        land_valid_next = flush_issue;
        land_drop_next  = new_pos[WORD_SHIFT-1:0];
        land_last_next  = new_last;
    end
end

always @(posedge clk) begin
    buf_reg         <= buf_next;
    cnt_reg         <= cnt_next;
    pos_reg         <= pos_next;
    posw_reg        <= posw_next;
    rem_reg         <= rem_next;
    len_reg         <= len_next;
    lastw_reg       <= lastw_next;
    lastb_reg       <= lastb_next;
    lastm_reg       <= lastm_next;
    fetch_pos_reg   <= fetch_pos_next;
    fetch_drop_reg  <= fetch_drop_next;
    land_valid_reg  <= land_valid_next;
    land_drop_reg   <= land_drop_next;
    land_last_reg   <= land_last_next;
    past_end_reg    <= past_end_next;

    if (rst) begin
        buf_reg        <= {BUF_BYTES*8{1'b0}};
        cnt_reg        <= {CNT_WIDTH{1'b0}};
        pos_reg        <= 32'd0;
        posw_reg       <= WORD_BYTES_33;
        rem_reg        <= 32'd0;
        len_reg        <= 32'd0;
        fetch_pos_reg  <= 33'd0;
        fetch_drop_reg <= {WORD_SHIFT{1'b0}};
        land_valid_reg <= 1'b0;
        past_end_reg   <= 1'b0;
    end
end

// every simulation checks what the split of the move relies on: the buffered bytes are
// never more than the bytes left (so a step within the buffer is never past the end), and
// so the move the consumer sees (adv_en) is the one the registers take (advance)
`ifndef SYNTHESIS
always @(posedge clk) begin
    if (!rst && ({{32-CNT_WIDTH{1'b0}}, cnt_reg} > rem_reg || adv_en !== advance))
        $fatal(1, "hw_stream_reader: cnt_reg %0d, rem_reg %0d, adv_en %b, advance %b", cnt_reg, rem_reg, adv_en, advance);
    if (SKIP_IN_BOUNDS != 0 && !rst && rd_valid && !start && rd_skip && skip_over)
        $fatal(1, "hw_stream_reader: SKIP_IN_BOUNDS: a skip of %0d bytes at offset %0d, %0d bytes left",
               rd_skip_len, pos_reg, rem_reg);
end
`endif

// ---------------------------------------------------------------- outputs
assign win_data  = buf_reg[WIN_BYTES*8-1:0];
assign win_avail = ({{32-CNT_WIDTH{1'b0}}, cnt_reg} > WIN_BYTES_32) ? WIN_BYTES_32[WIN_AVAIL_WIDTH-1:0] : cnt_reg[WIN_AVAIL_WIDTH-1:0];
assign win_eof   = {{32-CNT_WIDTH{1'b0}}, cnt_reg} == rem_reg;
assign offset    = pos_reg;
assign rem_bytes = rem_reg;
assign at_end    = rem_reg == 32'd0;
assign past_end  = past_end_reg;

endmodule

`resetall
`default_nettype wire

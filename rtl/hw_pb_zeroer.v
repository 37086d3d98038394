/*
 * hw_pb_zeroer -- the protobuf core's zeroer: the lazily zeroed allocation [lo, hi) of up to
 * 2^RZB output words, whose words are zeroed by the first write that touches them or in a
 * cycle the image port is idle (docs/hardware.md, "lazily"), and the range [za, ze) zeroed
 * at once, a word a cycle.
 *
 * The state machine (hw_pb_core) decides what is zeroed lazily and what at once (its
 * zero_lazy task, S_RZF, S_ZERO, the pre-pass root zeroing): it arms an allocation (`arm`,
 * `arm_a`, `arm_n`; only while nothing is pending, `any` low) and clears it (`clear`: a
 * decode starts, one pass is given up); it sets the range (`z_set`, `z_set_a`, `z_set_n`; S_RZF
 * keeps an allocation waiting there too) and, in S_ZERO, writes `z_n` zero bytes at `za`
 * and steps (`z_step`: za moves past them; `z_last`: they end the range, `z_left`: some
 * bytes are left).
 * This module keeps which words are still to be zeroed (`need`, bit i = the allocation's
 * word i counted from the word holding `lo`). It checks the image-port writes a cycle
 * after the state machine made them, as the writer's stage 1 holds them (`q_we`, `q_wa`,
 * `q_we2`, `q_wa2`; `hold`, given with the request, is registered here) and answers, for
 * the requests so registered:
 *   zw, zw_a       its own zero write on port 1: the registered port 1 has no request and
 *                  was not held (`hold` low when it was made), and some word is pending:
 *                  the lowest one, word address zw_a (byte address of the word's first
 *                  byte); the writer puts it straight into its stage 2 (the port
 *                  registers), so it reaches port 1 in the slot the idle request left;
 *   hit, hit_idx   port 1's registered write (or zw) lands on pending word hit_idx: the
 *                  writer widens that write's byte enables to the allocation's bytes there
 *                  (the data is zero there), and the word is no longer pending;
 *   hit2, hit2_idx the same for port 2's registered write;
 * and, to the state machine in this cycle, with those hits taken out (a word whose write
 * is being checked counts as zeroed: that write reaches its port before any request made
 * now, so a read made now sees it):
 *   pa_pending     byte pa is in the allocation and its word is pending (it reads as zero:
 *                  the presence-word read-modify-write);
 *   any, count     some word / how many words are pending;
 *   lo_rel, hi_rel the allocation relative to its first word's start, for the writer's masks.
 * The requests made in the cycle of an `arm` are not checked, and there is no zw in the
 * cycle after it (the state machine arms only while `any` is low: nothing was pending for
 * them). So the pending words after the checks of cycle t + 1 are those the combinational
 * checks of cycle t left: the same words zeroed, on the same port cycles, and the same
 * `any`, `count`, `pa_pending` in every cycle as when the checks were not registered --
 * but in a `clear` cycle: the abandoned allocation's last idle-port zero write is not made
 * and that cycle's writes are not widened (nothing reads those words as zero any more).
 * Requests in flight (made now, checked next cycle) cannot be clobbered by zw: zw's write
 * reaches port 1 a cycle before any of them, so a zw on a word one of them writes is a zero
 * write first and the data write (not widened: the word is no longer pending) after it.
 *
 * Registered and unregistered boundaries: `need`, `lo`, `hi`, `za`, `ze`, `hold` and `arm`
 * as registered here and the writer's stage-1 registers (`q_*`) are registers, so `zw`,
 * `zw_a`, `hit*`, `any`, `count`,
 * `lo_rel`, `hi_rel`, `za`, `ze`, `z_left`, `z_n`, `z_last` come from registers only: the
 * hit compares, the writer's widened byte enables and the `need` update start at
 * registers, not at the state machine's requests. The hit compares are equalities, not a
 * subtraction: a written word is in the allocation when its address above the low RZB word
 * bits equals lo's (and its low bits are not below lo's) or lo's + 1 (a register; and
 * they are below), its index the low bits' RZB-bit difference. `count` and `any` do not
 * count the pending words left after the hits: `count` is `cnt` (a register, the number of
 * pending words, kept with `need`) less this cycle's hits (0, 1 or 2: each hit is one
 * pending word, both ports on the same word count once), `any` a compare of `cnt` with 0,
 * 1, 2 and the hits; so their path is the hit compares and a (RZB+1)-bit subtraction, not
 * the hit masks and a popcount (every simulation checks them against the popcount of the
 * words left). `pa_pending` is combinational from `pa` (the state machine's address this
 * cycle) and registers. The arm/clear inputs and the hits take effect at the clock edge.
 *
 * The next `need`: 0 on `clear` (or `rst`), else `arm` ? the armed allocation's words :
 * `need` without the words hit on either port. `arm` with `clear` still sets lo and hi.
 * The next `cnt`: 0, the armed allocation's word count (its words are a thermometer code:
 * an OR of its edges), or `count`.
 * The next `za`: `z_set_a` on `z_set`, else past this cycle's z_n bytes on `z_step` (when z_left).
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module hw_pb_zeroer #(
    // Output memory word width in bits (64, 128 or 256).
    parameter OUT_WIDTH = 64,
    // log2 of the words of one allocation zeroed lazily (2^RZB words; the core's RZB)
    parameter RZB = 4,
    // the address bits kept (the ports are 40 bits wide): below 40, every address and
    // allocation or range end must be below 2^(AW-1) (checked in simulation), as the core's
    // image offsets are (its output memory's bytes, and a bit); a probed byte pa at or above
    // 2^AW is never pending
    parameter AW = 40
) (
    input  wire                      clk,
    input  wire                      rst,

    // from the state machine, taken at the clock edge
    input  wire                      arm,          // zero [arm_a, arm_a + arm_n) lazily
    input  wire [39:0]               arm_a,        // (fits 2^RZB words from arm_a's word)
    input  wire [39:0]               arm_n,
    input  wire                      clear,        // nothing pending any more
    input  wire                      z_set,        // the range at once: [z_set_a, z_set_a + z_set_n)
    input  wire [39:0]               z_set_a,
    input  wire [39:0]               z_set_n,
    input  wire                      z_step,       // z_n bytes at za are zeroed this cycle

    // the image-port writes made last cycle, registered (the writer's stage 1)
    input  wire                      q_we,         // port 1 writes the word of byte q_wa
    input  wire [39:0]               q_wa,
    input  wire                      q_we2,        // port 2 writes the word of byte q_wa2
    input  wire [39:0]               q_wa2,
    // from the state machine, this cycle
    input  wire                      hold,         // port 1 must stay idle (registered here)
    input  wire [39:0]               pa,           // a byte read now: is it still to be zeroed

    // for the requests registered last cycle (from registers)
    output wire                      zw,           // this module's zero write on port 1
    output wire [39:0]               zw_a,
    output wire                      hit,          // port 1's write zeroes pending word hit_idx
    output wire [RZB-1:0]            hit_idx,
    output wire                      hit2,         // port 2's write zeroes pending word hit2_idx
    output wire [RZB-1:0]            hit2_idx,
    // for the state machine now, this cycle's hits taken out
    output wire                      pa_pending,
    output wire                      any,
    output wire [RZB:0]              count,
    // the allocation relative to its first word's start (RZB + log2(bytes per word) + 1 bits)
    output wire [RZB+$clog2(OUT_WIDTH/8):0] lo_rel,
    output wire [RZB+$clog2(OUT_WIDTH/8):0] hi_rel,
    // the range zeroed at once: what is left of it, [za, ze); this cycle's zero write: z_n
    // bytes (up to a word) from za when z_left, the range's last when z_last
    output wire [39:0]               za,
    output wire [39:0]               ze,
    output wire                      z_left,
    output wire [$clog2(OUT_WIDTH/8):0] z_n,
    output wire                      z_last
);

// bytes per output word and its log2
localparam OB = OUT_WIDTH / 8;
localparam OB_SHIFT = (OB == 32) ? 5 : (OB == 16) ? 4 : 3;
// words of the allocation, and the width of positions relative to its first word
localparam RZW = 1 << RZB;
localparam RZP = RZB + OB_SHIFT + 1;
localparam [AW-1:0] OB_AW = {{(AW-1){1'b0}}, 1'b1} << OB_SHIFT;

initial begin
    if (OUT_WIDTH != 64 && OUT_WIDTH != 128 && OUT_WIDTH != 256) begin
        $error("Error: OUT_WIDTH must be 64, 128 or 256 (instance %m)");
        $finish;
    end
    if (RZB < 1 || RZB > 8) begin
        $error("Error: RZB must be in 1..8 (instance %m)");
        $finish;
    end
    if (AW < OB_SHIFT + RZB + 2 || AW > 40) begin
        $error("Error: AW must be in %0d..40 (instance %m)", OB_SHIFT + RZB + 2);
        $finish;
    end
end

// the inputs' kept bits
wire [AW-1:0] arm_a_k = arm_a[AW-1:0], arm_n_k = arm_n[AW-1:0];
wire [AW-1:0] z_set_a_k = z_set_a[AW-1:0], z_set_n_k = z_set_n[AW-1:0];
wire [AW-1:0] q_wa_k = q_wa[AW-1:0], q_wa2_k = q_wa2[AW-1:0], pa_k = pa[AW-1:0];
wire          pa_in = (pa >> AW) == 40'd0;
reg  [AW-1:0] za_k = {AW{1'b0}}, ze_k = {AW{1'b0}};
wire [AW-1:0] zw_a_k;
generate
    if (AW < 40) begin : g_widen
        assign za = {{(40-AW){1'b0}}, za_k};
        assign ze = {{(40-AW){1'b0}}, ze_k};
        assign zw_a = {{(40-AW){1'b0}}, zw_a_k};
    end else begin : g_whole
        assign za = za_k;
        assign ze = ze_k;
        assign zw_a = zw_a_k;
    end
endgenerate
`ifndef SYNTHESIS
localparam [39:0] A_LIM = 40'd1 << (AW - 1);
always @(posedge clk)
    if (AW < 40 && !rst && ((arm && ({1'b0, arm_a} + {1'b0, arm_n} > {1'b0, A_LIM}))
                 || (z_set && ({1'b0, z_set_a} + {1'b0, z_set_n} > {1'b0, A_LIM}))
                 || (q_we && q_wa >= A_LIM) || (q_we2 && q_wa2 >= A_LIM)))
        $fatal(1, "hw_pb_zeroer: an address at or past 2^(AW-1) = %h: arm %b %h + %h, z_set %b %h + %h, q %b %h, q2 %b %h",
               A_LIM, arm, arm_a, arm_n, z_set, z_set_a, z_set_n, q_we, q_wa, q_we2, q_wa2);
`endif

reg [RZW-1:0] need_reg = {RZW{1'b0}};
reg [AW-1:0]  lo_reg = {AW{1'b0}}, hi_reg = {AW{1'b0}};

/* verilator lint_off UNUSEDSIGNAL */
// (the functions read some bits of their address inputs only)
// the allocation's word holding byte a: {still to be zeroed, its index}
function [RZB:0] word_of;
    input [AW-1:0]  a;
    input [AW-1:0]  lo;
    input [RZW-1:0] need;
    reg [AW-1:0] d;
    begin
        d = {{OB_SHIFT{1'b0}}, a[AW-1:OB_SHIFT] - lo[AW-1:OB_SHIFT]};
        word_of = {d < RZW && need[d[RZB-1:0]], d[RZB-1:0]};
    end
endfunction

// the words [a, a + n) spans from a's word (n bytes; none when n is 0)
function [RZW-1:0] words_of;
    input [AW-1:0] a;
    input [AW-1:0] n;
    integer k;
    begin
        for (k = 0; k < RZW; k = k + 1)
            words_of[k] = n != {AW{1'b0}} && {{(AW-OB_SHIFT-RZB){1'b0}}, k[RZB-1:0], {OB_SHIFT{1'b0}}}
                                             < {{(AW-OB_SHIFT){1'b0}}, a[OB_SHIFT-1:0]} + n;
    end
endfunction
/* verilator lint_on UNUSEDSIGNAL */

// the lowest pending word (0 when none)
function [RZB-1:0] lowest;
    input [RZW-1:0] need;
    integer k;
    begin
        lowest = {RZB{1'b0}};
        for (k = RZW - 1; k >= 0; k = k - 1) if (need[k]) lowest = k[RZB-1:0];
    end
endfunction

// the ones of a thermometer code (bits 0 .. m-1 set: m), as words_of gives: an OR of the
// code's edges, not an adder chain
function [RZB:0] therm_count;
    input [RZW-1:0] t;
    integer k;
    reg [RZB:0] m;
    begin
        therm_count = {(RZB+1){1'b0}};
        for (k = 0; k < RZW; k = k + 1) begin
            m = k[RZB:0] + 1'b1;
            if (t[k] && (k == RZW - 1 || !t[(k + 1) % RZW])) therm_count = therm_count | m;
        end
    end
endfunction

`ifndef SYNTHESIS
function [RZB:0] popcount;
    input [RZW-1:0] need;
    integer k;
    begin
        popcount = {(RZB+1){1'b0}};
        for (k = 0; k < RZW; k = k + 1) popcount = popcount + {{RZB{1'b0}}, need[k]};
    end
endfunction
`endif

// with the writes in stage 1: their hold, and whether they are checked (not made in an
// arm's cycle)
reg rq_hold = 1'b0, rq_chk = 1'b0;
always @(posedge clk) begin
    rq_chk <= !rst && !arm;
    rq_hold <= hold;
end

wire [RZB-1:0] low = lowest(need_reg);
assign zw = rq_chk && need_reg != {RZW{1'b0}} && !q_we && !rq_hold;
assign zw_a_k = {lo_reg[AW-1:OB_SHIFT] + {{(AW-OB_SHIFT-RZB){1'b0}}, low}, {OB_SHIFT{1'b0}}};

// The word of a registered write, without a subtraction: the allocation's words are those
// of [lo's word, lo's word + 2^RZB), so a word address {hi part, low RZB bits} is one of
// them when its hi part is lo's and its low bits are not below lo's, or its hi part is lo's
// + 1 and its low bits are below lo's; its index is the low bits' difference (RZB bits).
// Equality compares against registers (lo_hi1_reg: lo's hi part + 1, registered a cycle
// after the arm: in that cycle no write is checked) in place of word_of's 40-bit subtract.
localparam HB = AW - OB_SHIFT - RZB;     // the hi part's bits
wire [HB-1:0]  lo_hi = lo_reg[AW-1:OB_SHIFT+RZB];
wire [RZB-1:0] lo_lw = lo_reg[OB_SHIFT+RZB-1:OB_SHIFT];
reg  [HB-1:0]  lo_hi1_reg = {HB{1'b0}};
always @(posedge clk) lo_hi1_reg <= lo_hi + 1'b1;
/* verilator lint_off UNUSEDSIGNAL */
// (a's byte-in-word bits are not read)
function [RZB:0] word_in;                // {in the allocation's 2^RZB words, its index}
    input [AW-1:0] a;
    input [HB-1:0] h0;
    input [HB-1:0] h1;
    input [RZB-1:0] l;
    reg [RZB-1:0] al;
    begin
        al = a[OB_SHIFT+RZB-1:OB_SHIFT];
        word_in = {(a[AW-1:OB_SHIFT+RZB] == h0 && al >= l) || (a[AW-1:OB_SHIFT+RZB] == h1 && al < l), al - l};
    end
endfunction
/* verilator lint_on UNUSEDSIGNAL */

// port 1 (the state machine's registered write, or this module's own: its word is the
// lowest pending one) and port 2
wire [RZB:0] w1 = word_in(q_wa_k, lo_hi, lo_hi1_reg, lo_lw);
wire [RZB:0] w2 = word_in(q_wa2_k, lo_hi, lo_hi1_reg, lo_lw);
wire         p1 = w1[RZB] && need_reg[w1[RZB-1:0]];
wire         p2 = w2[RZB] && need_reg[w2[RZB-1:0]];
assign hit = zw || (rq_chk && q_we && p1);
assign hit_idx = zw ? low : hit ? w1[RZB-1:0] : {RZB{1'b0}};
assign hit2 = rq_chk && q_we2 && p2;
assign hit2_idx = q_we2 ? w2[RZB-1:0] : {RZB{1'b0}};

wire [RZW-1:0] hit_mask = hit ? {{(RZW-1){1'b0}}, 1'b1} << hit_idx : {RZW{1'b0}};
wire [RZW-1:0] hit2_mask = hit2 ? {{(RZW-1){1'b0}}, 1'b1} << hit2_idx : {RZW{1'b0}};
// pending once this cycle's hits are out
wire [RZW-1:0] need_left = need_reg & ~hit_mask & ~hit2_mask;

// any / count: not from need_left (a popcount chain behind the hits) but from cnt_reg, the
// pending words' count kept with need_reg (the next need's count registered), less this
// cycle's hits: each is one pending word, the two the same word at most once
reg  [RZB:0] cnt_reg = {(RZB+1){1'b0}};
localparam [RZB:0] C0 = 0, C1 = 1, C2 = 2;
wire         hit_both = hit && hit2 && hit_idx != hit2_idx;
wire [RZB:0] n_hit = hit_both ? C2 : (hit || hit2) ? C1 : C0;
assign count = cnt_reg - n_hit;
assign any = !(cnt_reg == C0 || (cnt_reg == C1 && n_hit != C0) || (cnt_reg == C2 && hit_both));
`ifndef SYNTHESIS
always @(posedge clk)
    if (count !== popcount(need_left) || any !== (need_left != {RZW{1'b0}}))
        $fatal(1, "hw_pb_zeroer: count %0d / any %b, pending words %b", count, any, need_left);
`endif

wire [RZB:0] wp = word_of(pa_k, lo_reg, need_left);
assign pa_pending = pa_in && pa_k >= lo_reg && pa_k < hi_reg && wp[RZB];

// (lo_rel: lo's byte within its word; hi_rel: hi from that word's start)
assign lo_rel = {{(RZB+1){1'b0}}, lo_reg[OB_SHIFT-1:0]};
assign hi_rel = hi_reg[RZP-1:0] - {lo_reg[RZP-1:OB_SHIFT], {OB_SHIFT{1'b0}}};

// the range at once: up to the end of za's word, or of the range
wire [AW-1:0] z_rest = ze_k - za_k;
wire [AW-1:0] z_word = OB_AW - {{(AW-OB_SHIFT){1'b0}}, za_k[OB_SHIFT-1:0]};
wire [AW-1:0] z_now = (z_rest < z_word) ? z_rest : z_word;
assign z_left = za_k < ze_k;
assign z_n = z_now[OB_SHIFT:0];
// the last write: the rest fits za's word (za + z_now >= ze, without the add after the
// minimum: a third carry chain in series, on the core's path into its next state); with
// nothing left (za >= ze) that sum reaches ze too
assign z_last = !z_left || z_rest <= z_word;
`ifndef SYNTHESIS
always @(posedge clk)
    if (!rst && z_last !== (za_k + z_now >= ze_k))
        $fatal(1, "hw_pb_zeroer: z_last %b for [%0d, %0d)", z_last, za, ze);
`endif

always @(posedge clk) begin
    if (rst || clear) begin
        need_reg <= {RZW{1'b0}};
        cnt_reg <= {(RZB+1){1'b0}};
    end else if (arm) begin
        need_reg <= words_of(arm_a_k, arm_n_k);
        cnt_reg <= therm_count(words_of(arm_a_k, arm_n_k));
    end else begin
        need_reg <= need_left;
        cnt_reg <= count;
    end
    if (arm) begin
        lo_reg <= arm_a_k;
        hi_reg <= arm_a_k + arm_n_k;
    end
    if (z_set) begin
        za_k <= z_set_a_k;
        ze_k <= z_set_a_k + z_set_n_k;
    end else if (z_step && z_left) begin
        za_k <= za_k + z_now;
    end
end

endmodule

`resetall
`default_nettype wire

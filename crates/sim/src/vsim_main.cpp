// heapwire's persistent simulated device: the generated core (Verilator's C++ model,
// class Vcore) with its input and output memories, serving requests from stdin and
// answering on stdout until stdin closes. Built by crates/sim/src/verilated.rs, which
// defines the core (HW_PB: heapwire_core, HW_OG: heapwire_og_core) and the memories:
// IW and OW (word widths in bits), IN_BYTES and OUT_BYTES (sizes, powers of two),
// NREGS (per-type header registers: messages for HW_PB, classes for HW_OG).
//
// The memories behave as heapwire_emit::testbench's Icarus testbench serves them: reads
// with one cycle of latency, read-first; byte-enabled writes (HW_PB) or whole words
// (HW_OG); the input memory zero past the input, the output memory 0xA5 wherever the core
// has not written (restored after every request, so each request sees what a fresh
// testbench would); the protobuf core's second write port never beside a read nor on the
// word the first port writes. The registers are written through the core's register port
// before start, only those that changed.
//
// Framing (all integers little-endian):
//   request:  u32 magic 'HWRQ' | u32 root | u64 base | u64 max_image | u64 max_cycles |
//             u32 in_len | u32 nregs (0: unchanged, else at most NREGS: registers 0..nregs-1)
//             | nregs x u64 | in_len bytes
//   response: u32 magic 'HWRS' | u32 status | u32 err_code | u32 err_offset |
//             u32 image_size | u32 reserved | u64 cycles | [HW_AXI: u32 STATUS | u32 0 |
//             5 x u64 REQUESTS, BYTES_IN, BYTES_OUT, REJECTIONS, PROTOCOL_ERRORS, the
//             wrapper's registers as the request ended, zeros if it did not] |
//             image bytes (status 0, err_code 0)
//   status: 0 done; 1 no done within max_cycles (core reset); 2 input longer than the
//           input memory (not run); 3 output-port misuse by the core (core reset).
// With HW_TABLES (HW_AXI, the protobuf core built with run-time-loaded tables) also:
//   load:     u32 magic 'HWTL' | u32 n | n x (u32 address, u64 data): the table words,
//             written through the wrapper's S_TABLE_CTRL / S_TABLE_ADDR / S_TABLE_DATA
//             (docs/device.md) between a load's start and end
//   answer:   u32 magic 'HWTA' | u32 status (0 tables_ok, 1 a register write refused,
//             2 tables_ok low after the load) | u32 S_NUM_TYPES | u32 0 | u64 cycles
// A malformed request ends the process (exit 3): the host restarts it.
//
// With HW_AXI the top is the core inside its bus wrapper (heapwire_axi / heapwire_og_axi,
// rtl/hw_axi_wrap.v) and the harness is the host of docs/device.md's hardware variant: the
// memories are the wrapper's; a request is register writes over AXI4-Lite (changed S_TYPE
// words by message index, BASE, MSG = the root message index, WIRE, MAX_IMAGE, go), the
// input as an AXI4-Stream message, a wait for irq, the verdict read back (ERR_KIND: a
// RejectKind code, ERR_OFFSET, IMAGE_LEN, TIME; STATUS and the counters, answered with
// it), stop and acknowledge; the image is what
// the wrapper's AXI4 master wrote into the harness's host memory (at address - base).
// Status 3 there: a device error in ERR_KIND, a bus error, or a write outside the image.

#include "Vcore.h"
#include "verilated.h"

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unistd.h>
#include <vector>

#if defined(HW_PB) == defined(HW_OG)
#error "define exactly one of HW_PB and HW_OG"
#endif
#if defined(HW_TABLES) && !(defined(HW_PB) && defined(HW_AXI))
#error "HW_TABLES: the protobuf core in its bus wrapper only (HW_PB, HW_AXI)"
#endif

static const uint32_t OB = OW / 8;  // output word bytes
static const uint32_t IB = IW / 8;  // input word bytes

// ---- ports of any width as bytes (Verilator: IData/QData up to 64 bits, VlWide above)
static inline void load(CData& d, const uint8_t* p) { d = p[0]; }
static inline void load(SData& d, const uint8_t* p) { memcpy(&d, p, 2); }
static inline void load(IData& d, const uint8_t* p) { memcpy(&d, p, 4); }
static inline void load(QData& d, const uint8_t* p) { memcpy(&d, p, 8); }
template <std::size_t N> static inline void load(VlWide<N>& d, const uint8_t* p) {
    for (std::size_t i = 0; i < N; i++) memcpy(&d[i], p + 4 * i, 4);
}
static inline void store(const IData& d, uint8_t* p) { memcpy(p, &d, 4); }
static inline void store(const QData& d, uint8_t* p) { memcpy(p, &d, 8); }
template <std::size_t N> static inline void store(const VlWide<N>& d, uint8_t* p) {
    for (std::size_t i = 0; i < N; i++) memcpy(p + 4 * i, &d[i], 4);
}

static Vcore* top;
static uint8_t* imem;        // IN_BYTES
static uint8_t* omem;        // OUT_BYTES
static uint64_t out_hi;      // one past the highest output byte written since the last restore
static bool conflict;        // HW_PB: second write port misused in this request

#ifndef HW_AXI
// One output-memory write of one word, byte-enabled.
static inline void write_word(uint64_t waddr, const uint8_t* data, uint64_t be) {
    uint64_t a = (waddr * OB) & (OUT_BYTES - 1);
    for (uint32_t b = 0; b < OB; b++)
        if ((be >> b) & 1) omem[a + b] = data[b];
    if (a + OB > out_hi) out_hi = a + OB;
}

// The input memory's word at core address a (IW-bit words; the memory wraps).
static inline const uint8_t* in_word(uint64_t a) { return imem + ((a * IB) & (IN_BYTES - 1)); }

// One clock cycle: the ports sampled before the rising edge, the edge, then the memories
// (reads first: a read sees the word as it was before this edge's writes). The ports are
// as last evaluated, before the start and controls the host has set since: the cores'
// memory ports must not depend on those in the same cycle (docs/hardware.md, Interfaces;
// the protobuf core's testbench checks it on every request).
static void cycle() {
    uint8_t w1[32], w2[32];
#ifdef HW_PB
    const bool ire = top->in_rd_en;
    const uint64_t ia = top->in_addr;
    const bool ore = top->out_rd_en;
    const uint64_t ora = top->out_rd_addr;
    const bool we1 = top->out_wr_en, we2 = top->out2_wr_en;
    const uint64_t wa1 = top->out_wr_addr, wa2 = top->out2_wr_addr;
    const uint64_t be1 = top->out_wr_be, be2 = top->out2_wr_be;
    if (we1) store(top->out_wr_data, w1);
    if (we2) store(top->out2_wr_data, w2);
    if (we2 && (ore || (we1 && wa1 == wa2))) conflict = true;
#else
    const bool ire = top->in_rd_en, ire2 = top->in2_rd_en;
    const uint64_t ia = top->in_addr, ia2 = top->in2_addr;
    const bool we1 = top->out_wr_en;
    const uint64_t wa1 = top->out_wr_addr;
    if (we1) store(top->out_wr_data, w1);
#endif
    top->clk = 1;
    top->eval();
    if (ire) load(top->in_rd_data, in_word(ia));
#ifdef HW_PB
    if (ore) load(top->out_rd_data, omem + ((ora * OB) & (OUT_BYTES - 1)));
    if (we1) write_word(wa1, w1, be1);
    if (we2) write_word(wa2, w2, be2);
#else
    if (ire2) load(top->in2_rd_data, in_word(ia2));
    if (we1) write_word(wa1, w1, ~0ull);
#endif
    top->clk = 0;
    top->eval();
}

static std::vector<uint64_t> regs;  // what the registers hold (as last written), NREGS or empty

static void write_regs(const std::vector<uint64_t>& want, bool all) {
    for (std::size_t i = 0; i < want.size(); i++) {
        if (!all && i < regs.size() && regs[i] == want[i]) continue;
#ifdef HW_PB
        top->type_wr_en = 1; top->type_wr_idx = i; top->type_wr_data = want[i];
#else
        top->hdr_wr_en = 1; top->hdr_wr_idx = i; top->hdr_wr_data = want[i];
#endif
        cycle();
    }
#ifdef HW_PB
    top->type_wr_en = 0;
#else
    top->hdr_wr_en = 0;
#endif
    regs = want;
}

// Reset as the testbench does (3 cycles, then one idle cycle); the registers the objgraph
// core resets are written again.
static void reset() {
    top->rst = 1;
    for (int i = 0; i < 3; i++) cycle();
    top->rst = 0;
    cycle();
    if (!regs.empty()) write_regs(regs, true);
}

#else
// ---- HW_AXI: the host of the wrapped core. imem holds the request's input (streamed from
// there), omem is host memory (the image, written by the wrapper's AXI4 master at
// address - base). The bus models drive their inputs between clock edges and take a
// handshake at an edge when valid and ready were both high just before it.
static const uint32_t R_CTRL = 0x040, R_STATUS = 0x041, R_MSG = 0x043, R_WIRE = 0x044, R_BASE = 0x045,
                      R_MAX_IMAGE = 0x049, R_ERR_KIND = 0x04A, R_ERR_OFFSET = 0x04B, R_IMAGE_LEN = 0x04D,
                      R_TIME = 0x04E, R_N_REQUESTS = 0x080, R_S_TYPE = 0x1000 + 0x040;  // docs/device.md (crates/device/src/regs.rs)
static const int N_COUNTERS = 5;  // REQUESTS, BYTES_IN, BYTES_OUT, REJECTIONS, PROTOCOL_ERRORS (64-bit each, from R_N_REQUESTS)
static uint64_t n_cycles;      // clock cycles since the start
static uint64_t axi_base;      // the request's base: host address of omem[0]
static bool axi_fault;         // a write outside omem, or a burst the wrapper should not make
static uint64_t aw_addr[64];   // accepted bursts whose data has not all arrived: address, beats
static uint32_t aw_beats[64];
static uint32_t aw_head, aw_tail, b_pending;

static void cycle() {
    // sample the handshakes of this edge
    const bool aw = top->m_axi_awvalid && top->m_axi_awready;
    const bool w = top->m_axi_wvalid && top->m_axi_wready;
    const bool b = top->m_axi_bvalid && top->m_axi_bready;
    const uint64_t awa = top->m_axi_awaddr;
    const uint32_t awl = top->m_axi_awlen + 1u;
    uint8_t wd[32];
    const uint64_t ws = top->m_axi_wstrb;
    const bool wl = top->m_axi_wlast;
    if (w) store(top->m_axi_wdata, wd);
    n_cycles++;
    top->clk = 1;
    top->eval();
    if (aw) {
        if (aw_tail - aw_head == 64 || ((awa & 4095) + (uint64_t)awl * OB) > 4096) axi_fault = true;  // 4 KB edge
        aw_addr[aw_tail % 64] = awa;
        aw_beats[aw_tail % 64] = awl;
        aw_tail++;
    }
    if (w) {
        if (aw_head == aw_tail) {
            axi_fault = true;  // data before its address: the wrapper never does that
        } else {
            const uint64_t a = aw_addr[aw_head % 64] - axi_base;
            for (uint32_t i = 0; i < OB; i++) {
                if (!((ws >> i) & 1)) continue;
                if (a + i >= OUT_BYTES) { axi_fault = true; continue; }
                omem[a + i] = wd[i];
                if (a + i + 1 > out_hi) out_hi = a + i + 1;
            }
            aw_addr[aw_head % 64] += OB;
            if (--aw_beats[aw_head % 64] == 0) {
                if (!wl) axi_fault = true;
                aw_head++;
                b_pending++;
            } else if (wl) {
                axi_fault = true;
            }
        }
    }
    if (b) b_pending--;
    top->m_axi_bvalid = b_pending != 0;
    top->m_axi_bresp = 0;
    top->m_axi_bid = 0;
    top->clk = 0;
    top->eval();
}

// One AXI4-Lite write / read (word address); false on a response other than OKAY.
static bool reg_write(uint32_t word, uint32_t v) {
    top->s_axil_awaddr = word * 4;
    top->s_axil_wdata = v;
    top->s_axil_wstrb = 0xF;
    top->s_axil_awvalid = 1;
    top->s_axil_wvalid = 1;
    top->s_axil_bready = 1;
    top->eval();
    while (!top->s_axil_awready) { cycle(); }
    cycle();  // taken at this edge
    top->s_axil_awvalid = 0;
    top->s_axil_wvalid = 0;
    top->eval();
    while (!top->s_axil_bvalid) cycle();
    const bool ok = top->s_axil_bresp == 0;
    cycle();
    return ok;
}
static bool reg_read(uint32_t word, uint32_t& v) {
    top->s_axil_araddr = word * 4;
    top->s_axil_arvalid = 1;
    top->s_axil_rready = 1;
    top->eval();
    while (!top->s_axil_arready) cycle();
    cycle();
    top->s_axil_arvalid = 0;
    top->eval();
    while (!top->s_axil_rvalid) cycle();
    v = top->s_axil_rdata;
    const bool ok = top->s_axil_rresp == 0;
    cycle();
    return ok;
}
static bool reg_read64(uint32_t word, uint64_t& v) {
    uint32_t lo = 0, hi = 0;
    const bool ok = reg_read(word, lo) && reg_read(word + 1, hi);
    v = (uint64_t)hi << 32 | lo;
    return ok;
}

static std::vector<uint64_t> regs;  // the S_TYPE registers as last written (by message index)

static bool write_type_regs(const std::vector<uint64_t>& want, bool all) {
    bool ok = true;
    for (std::size_t i = 0; i < want.size(); i++) {
        if (!all && i < regs.size() && regs[i] == want[i]) continue;
        ok &= reg_write(R_S_TYPE + 2 * (uint32_t)i, (uint32_t)want[i]);
        ok &= reg_write(R_S_TYPE + 2 * (uint32_t)i + 1, (uint32_t)(want[i] >> 32));
    }
    regs = want;
    return ok;
}

#ifdef HW_TABLES
// Loads n table words ({u32 address, u64 data} each at p) through the table-load
// registers; the answer's status (see the framing above), S_NUM_TYPES and the cycles.
static const uint32_t R_S_NUM_TYPES = 0x1000 + 0x003, R_S_TABLE_CTRL = 0x1000 + 0x004, R_S_TABLE_ADDR = 0x1000 + 0x005,
                      R_S_TABLE_DATA = 0x1000 + 0x006;  // docs/device.md (crates/device/src/regs.rs)
static uint32_t axi_load(const uint8_t* p, uint32_t n, uint32_t& types, uint64_t& cycles) {
    const uint64_t c0 = n_cycles;
    bool ok = reg_write(R_S_TABLE_CTRL, 1);
    uint32_t next = 0;
    for (uint32_t i = 0; i < n && ok; i++, p += 12) {
        uint32_t a;
        uint64_t d;
        memcpy(&a, p, 4);
        memcpy(&d, p + 4, 8);
        if (i == 0 || a != next) ok &= reg_write(R_S_TABLE_ADDR, a);
        ok &= reg_write(R_S_TABLE_DATA, (uint32_t)d) && reg_write(R_S_TABLE_DATA + 1, (uint32_t)(d >> 32));
        next = a + 1;
    }
    ok &= reg_write(R_S_TABLE_CTRL, 0);
    uint32_t ctrl = 0;
    ok &= reg_read(R_S_TABLE_CTRL, ctrl) && reg_read(R_S_NUM_TYPES, types);
    cycles = n_cycles - c0;
    return !ok ? 1 : (ctrl & 2) ? 0 : 2;
}
#endif

// Reset as the memory-port harness does; the registers written again (the objgraph core
// resets its header registers).
static void reset() {
    top->rst = 1;
    for (int i = 0; i < 3; i++) cycle();
    top->rst = 0;
    aw_head = aw_tail = b_pending = 0;
    top->m_axi_bvalid = 0;
    top->m_axi_awready = 1;  // host memory takes every address and data beat at once
    top->m_axi_wready = 1;
    top->s_axil_awvalid = top->s_axil_wvalid = top->s_axil_arvalid = 0;
    top->s_axis_tvalid = 0;
    cycle();
    if (!regs.empty()) write_type_regs(std::vector<uint64_t>(regs), true);
}

// One request; returns the answer's status (0 done, 1 no irq within max_cycles, 3 a bus
// or device error), the verdict in the out parameters, and STATUS (as the request ended,
// before the acknowledge) and the counters as the wrapper's registers read.
static uint32_t axi_request(const std::vector<uint64_t>& want, bool new_regs, uint32_t root, uint64_t base, uint64_t max_image,
                            uint64_t max_cycles, uint32_t in_len, uint32_t& err, uint32_t& off, uint32_t& size, uint64_t& cycles,
                            uint32_t& status_reg, uint64_t* counters) {
    bool ok = true;
    if (new_regs) ok &= write_type_regs(want, false);
    axi_base = base;
    axi_fault = false;
    ok &= reg_write(R_BASE, (uint32_t)base) && reg_write(R_BASE + 1, (uint32_t)(base >> 32));
    ok &= reg_write(R_MSG, root);
#ifdef HW_PB
    ok &= reg_write(R_WIRE, 0);
    (void)max_image;
#else
    ok &= reg_write(R_WIRE, 1);
    // MAX_IMAGE 0 means the output memory: a limit of 0 bytes is asked as 1 (no image is 1 byte)
    ok &= reg_write(R_MAX_IMAGE, (uint32_t)(max_image == 0 ? 1 : max_image));
#endif
    ok &= reg_write(R_CTRL, 1);
    if (!ok) return 3;
    // the message: IB bytes a beat, tkeep contiguous, tlast on the last (an empty message:
    // one null beat)
    const uint32_t beats = in_len == 0 ? 1 : (in_len + IB - 1) / IB;
    uint32_t beat = 0;
    uint64_t n = 0;
    auto drive = [&]() {
        if (beat < beats) {
            const uint32_t from = beat * IB, left = in_len - (in_len < from ? in_len : from);
            const uint32_t keep = left >= IB ? IB : left;
            load(top->s_axis_tdata, imem + from);
            top->s_axis_tkeep = (1ull << keep) - 1;
            top->s_axis_tlast = beat + 1 == beats;
            top->s_axis_tvalid = 1;
        } else {
            top->s_axis_tvalid = 0;
        }
        top->eval();
    };
    drive();
    for (; n < max_cycles && !top->irq; n++) {
        const bool taken = top->s_axis_tvalid && top->s_axis_tready;
        cycle();
        if (taken) beat++;
        drive();
    }
    top->s_axis_tvalid = 0;
    top->eval();
    if (!top->irq) return 1;
    uint32_t kind = 0;
    uint64_t offset = 0, time = 0;
    ok &= reg_read(R_ERR_KIND, kind) && reg_read64(R_ERR_OFFSET, offset) && reg_read(R_IMAGE_LEN, size) && reg_read64(R_TIME, time);
    ok &= reg_read(R_STATUS, status_reg);
    for (int i = 0; i < N_COUNTERS; i++) ok &= reg_read64(R_N_REQUESTS + 2 * (uint32_t)i, counters[i]);
    ok &= reg_write(R_CTRL, 2 | 4);  // stop at this message boundary, acknowledge
    uint32_t st = 1;
    for (int i = 0; i < 16 && (st & 1); i++) ok &= reg_read(R_STATUS, st);
    if (!ok || (st & 1) || kind >= 64 || axi_fault || b_pending || aw_head != aw_tail) return 3;
    err = kind;
    off = (uint32_t)offset;
    cycles = time;
    if (kind) size = 0;
    return 0;
}
#endif

// All n bytes read from stdin (to_host false) or written to stdout, across signals.
static bool full(bool to_host, void* buf, std::size_t n) {
    uint8_t* p = static_cast<uint8_t*>(buf);
    while (n > 0) {
        ssize_t r = to_host ? write(1, p, n) : read(0, p, n);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return false;
        p += r;
        n -= (std::size_t)r;
    }
    return true;
}
static bool read_full(void* buf, std::size_t n) { return full(false, buf, n); }
static bool write_full(const void* buf, std::size_t n) { return full(true, const_cast<void*>(buf), n); }

template <typename T> static T get(const uint8_t*& p) {
    T v;
    memcpy(&v, p, sizeof v);
    p += sizeof v;
    return v;
}

template <typename T> static void put(std::vector<uint8_t>& out, T v) {
    const uint8_t* b = reinterpret_cast<const uint8_t*>(&v);
    out.insert(out.end(), b, b + sizeof v);
}

int main(int argc, char** argv) {
    Verilated::commandArgs(argc, argv);
    imem = static_cast<uint8_t*>(calloc(IN_BYTES + 64, 1));
    omem = static_cast<uint8_t*>(malloc(OUT_BYTES));
    if (!imem || !omem) {
        fprintf(stderr, "vsim: cannot allocate the memories (%llu + %llu bytes)\n", (unsigned long long)IN_BYTES,
                (unsigned long long)OUT_BYTES);
        return 4;
    }
    memset(omem, 0xA5, OUT_BYTES);
    top = new Vcore;
    top->clk = 0;
    top->rst = 1;
#ifndef HW_AXI
    top->start = 0;
#endif
    top->eval();
    if (Verilated::gotFinish()) {
        fprintf(stderr, "vsim: the core stopped at elaboration (bad parameters)\n");
        return 4;
    }
    reset();

    std::vector<uint8_t> out;
    std::vector<uint64_t> want;
    for (;;) {
        uint8_t hdr[40];
        if (!read_full(hdr, 4)) break;  // stdin closed: done
#ifdef HW_TABLES
        uint32_t magic0;
        memcpy(&magic0, hdr, 4);
        if (magic0 == 0x4C545748u) {  // 'HWTL'
            uint32_t n;
            if (!read_full(&n, 4) || n > (1u << 24)) return 3;
            std::vector<uint8_t> words(12ull * n);
            if (!read_full(words.data(), words.size())) return 3;
            uint32_t types = 0;
            uint64_t cycles = 0;
            const uint32_t st = axi_load(words.data(), n, types, cycles);
            out.clear();
            put<uint32_t>(out, 0x41545748u);  // 'HWTA'
            put<uint32_t>(out, st);
            put<uint32_t>(out, types);
            put<uint32_t>(out, 0);
            put<uint64_t>(out, cycles);
            if (!write_full(out.data(), out.size())) return 0;
            continue;
        }
#endif
        if (!read_full(hdr + 4, sizeof hdr - 4)) return 3;
        const uint8_t* p = hdr;
        const uint32_t magic = get<uint32_t>(p), root = get<uint32_t>(p);
        const uint64_t base = get<uint64_t>(p), max_image = get<uint64_t>(p), max_cycles = get<uint64_t>(p);
        const uint32_t in_len = get<uint32_t>(p), nregs = get<uint32_t>(p);
        if (magic != 0x51525748u || nregs > NREGS) {
            fprintf(stderr, "vsim: malformed request (magic %08x, %u registers)\n", magic, nregs);
            return 3;
        }
        if (nregs) {
            want.resize(nregs);
            if (!read_full(want.data(), 8ull * nregs)) return 3;
        }
        uint32_t status = 0;
        if (in_len > IN_BYTES) {
            // refused: the bytes are read and dropped, the core does not run
            status = 2;
            uint8_t sink[4096];
            for (uint64_t left = in_len; left > 0;) {
                std::size_t n = left < sizeof sink ? (std::size_t)left : sizeof sink;
                if (!read_full(sink, n)) return 3;
                left -= n;
            }
        } else if (!read_full(imem, in_len)) {
            return 3;
        }
        out.clear();
        put<uint32_t>(out, 0x53525748u);  // 'HWRS'
#ifdef HW_AXI
        uint32_t err = 0, off = 0, size = 0, status_reg = 0;
        uint64_t cycles = 0, counters[N_COUNTERS] = {0, 0, 0, 0, 0};
        if (status == 0)
            status = axi_request(want, nregs != 0, root, base, max_image, max_cycles, in_len, err, off, size, cycles, status_reg, counters);
#else
        if (status == 0) {
            if (nregs) write_regs(want, false);
            top->in_len = in_len;
            top->base = base;
#ifdef HW_PB
            top->root_msg = root;
            (void)max_image;
#else
            top->root_cls = root;
            top->max_image = max_image;
#endif
            conflict = false;
            top->start = 1;
            cycle();
            top->start = 0;
            cycle();
            for (uint64_t n = 0; !top->done && n < max_cycles && !conflict; n++) cycle();
            for (int i = 0; i < 3; i++) cycle();
            if (conflict) status = 3;
            else if (!top->done) status = 1;
        }
        const uint32_t err = top->err_code, off = top->err_offset;
        uint32_t size = top->image_size;
        const uint64_t cycles = top->cycles;
#endif
        if (status == 0 && err == 0 && size > OUT_BYTES) status = 3;  // cannot happen: the core checks
        const bool image = status == 0 && err == 0;
        put<uint32_t>(out, status);
        put<uint32_t>(out, status == 2 ? 0 : err);
        put<uint32_t>(out, status == 2 ? 0 : off);
        put<uint32_t>(out, image ? size : 0);
        put<uint32_t>(out, 0);
        put<uint64_t>(out, status == 2 ? 0 : cycles);
#ifdef HW_AXI
        put<uint32_t>(out, status_reg);
        put<uint32_t>(out, 0);
        for (int i = 0; i < N_COUNTERS; i++) put<uint64_t>(out, counters[i]);
#endif
        if (image) out.insert(out.end(), omem, omem + size);
        if (!write_full(out.data(), out.size())) return 0;  // the host went away
        if (status == 1 || status == 3) reset();
        // what a fresh testbench would hold: zeros past the input, 0xA5 in the output memory
        if (status != 2) memset(imem, 0, in_len);
        memset(omem, 0xA5, out_hi < OUT_BYTES ? out_hi : OUT_BYTES);
        out_hi = 0;
    }
    top->final();
    delete top;
    return 0;
}

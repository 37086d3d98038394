"""cocotb testbench for the bus wrapper rtl/hw_axi_wrap.v around both generated cores
(`heapwire_axi`: the protobuf core, `heapwire_og_axi`: the objgraph core, both written by
`heapwire compile --rtl`), cocotb 2.x on Icarus Verilog with the cocotbext-axi bus models:
an AxiLiteMaster on the register map (s_axil), an AxiStreamSource feeding the messages
(s_axis), an AxiRamWrite as host memory (m_axi).

Every message goes through the registers and buses only: the host programs BASE, MSG and
WIRE, writes the go bit, queues the messages on the stream back to back, and waits on the
irq line and the STATUS / REQUESTS registers. The oracle is the CPU engine (`heapwire
decode`), run as `decode --delimited` places images: each image's base is where the
previous one ended. Images read back from the AXI RAM must equal its images byte for byte
(and the bytes around them stay untouched); a rejected message must leave ERR_KIND (the
RejectKind code) and ERR_OFFSET as `decode` reports them, after which the host acknowledges,
sets BASE to the CURSOR register and writes go again, and the rest of the queued stream
decodes on. The counters (REQUESTS, BYTES_IN, BYTES_OUT, REJECTIONS) are checked at the end.

Stalls: the stream source pauses tvalid at random, the RAM model's AW and W channels pause
awready / wready at random and its B channel holds write responses back at random (the
wrapper's own tready / bready are its outputs). Also: a reset in the middle of a message
(the source drops the rest of that frame, as a shell resetting its datapath does), then a
correct message; tkeep patterns a message may not carry (`protocol`); a message longer than
the input memory (`input too large`); header words from the per-type registers (S_TYPE); the header block and the register map's addresses,
which are crates/device/src/regs.rs's (checked without a simulator, below).

Configurations (CI: a few messages each, about half a minute on a busy 2-core machine):
  * pb: tests/differential/schemas/scalars3.proto, 64-bit stream and AXI data;
  * og: examples/expression_tree/expr.proto, 64-bit stream, 256-bit AXI data;
  * pb_p32, og_p32: the same schemas with 32-bit pointers, 128-bit stream / 256-bit AXI
    data and 32-bit stream / 64-bit AXI data (pb_p32 with a header word per struct);
  * pb_tables: the protobuf core built with run-time-loaded tables (heapwire_axi with
    TABLES=1), loaded over AXI4-Lite through the S_TABLE_ registers with one schema's
    table words (`<stem>_core_tables.gen.hex`), then with another's, then the first again
    (test_tables_reload only).
Knobs: HW_TB_SEED, HW_TB_THOROUGH=1 (5x the messages); HW_AXI_BENCH=1 also measures
stream-to-host-memory throughput (bytes/cycle) with and without stalls and logs it.
"""

import logging
import os
import random
import re
import sys
from pathlib import Path

import pytest

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import RisingEdge, ReadOnly

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # rtl/tb (tbutil, hwsc) when run as a script
import hwsc
from tbutil import REPO, RTL_DIR, Rejected, engine_files, first_difference, generated_core, run_cocotb, run_heapwire, seed_for, thorough

TB_DIR = Path(__file__).resolve().parent
DIFF = REPO / "tests" / "differential"
EXPR = REPO / "examples" / "expression_tree" / "expr.proto"
SCALE = 5 if thorough() else 1
RAM_SIZE = 1 << 20
FILL = 0x5A  # host memory before the test: a byte the wrapper fails to write, or writes too many, shows


# --------------------------------------------------------------------------- the register map


def device_regs():
    """{name: word address} of crates/device/src/regs.rs (`pub const NAME: u32 = 0x...;`)."""
    text = (REPO / "crates" / "device" / "src" / "regs.rs").read_text()
    return {n: int(v, 0) for n, v in re.findall(r"pub const ([A-Z0-9_]+): u32 = (0x[0-9A-Fa-f]+|\d+);", text)}


def wrapper_regs():
    """{name: word address} of rtl/hw_axi_wrap.v's `R_<NAME> = 'h...` localparams."""
    text = (RTL_DIR / "hw_axi_wrap.v").read_text()
    return {n: int(v, 16) for n, v in re.findall(r"\bR_([A-Z0-9_]+) = 'h([0-9A-Fa-f]+)", text)}


def reject_kinds():
    """{code: name} of heapwire_engine::RejectKind (crates/engine/src/reject.rs)."""
    text = (REPO / "crates" / "engine" / "src" / "reject.rs").read_text()
    codes = dict(re.findall(r"^\s+(\w+) = (\d+),", text, re.M))
    names = dict(re.findall(r"^\s+(\w+) => \"(\w+)\",", text, re.M))
    return {int(c): names[k] for k, c in codes.items()}


R = device_regs()
R["C_CURSOR"] = R["CONTROL_END"]  # the hardware variant's register after the control block (docs/device.md)
KINDS = reject_kinds()
DEVICE_ERRORS = {70: "input_too_large", 78: "protocol"}


class AxiHost:
    """The host: registers over AXI4-Lite, messages on the stream, images in the AXI RAM."""

    def __init__(self, dut, rng):
        from cocotbext.axi import AxiLiteBus, AxiLiteMaster, AxiRamWrite, AxiStreamBus, AxiStreamSource, AxiWriteBus

        self.dut, self.rng = dut, rng
        Clock(dut.clk, 10, unit="ns").start()
        self.axil = AxiLiteMaster(AxiLiteBus.from_prefix(dut, "s_axil"), dut.clk, dut.rst)
        self.src = AxiStreamSource(AxiStreamBus.from_prefix(dut, "s_axis"), dut.clk, dut.rst)
        self.ram = AxiRamWrite(AxiWriteBus.from_prefix(dut, "m_axi"), dut.clk, dut.rst, size=RAM_SIZE)
        for bus in ("s_axil", "s_axis", "m_axi"):  # the bus models log every transfer at INFO
            logging.getLogger(f"cocotb.{dut._name}.{bus}").setLevel(logging.WARNING)
        self.cycle = 0
        self.states = None  # {wrapper state: cycles} while measuring
        cocotb.start_soon(self._count())

    async def _count(self):
        while True:
            await RisingEdge(self.dut.clk)
            self.cycle += 1
            if self.states is not None:
                st = int(self.dut.wrap.st_reg.value)
                self.states[st] = self.states.get(st, 0) + 1

    async def reset(self, cycles=4):
        self.dut.rst.value = 1
        for _ in range(cycles):
            await RisingEdge(self.dut.clk)
        self.dut.rst.value = 0
        for _ in range(2):
            await RisingEdge(self.dut.clk)

    def stalls(self, on):
        """Random tvalid pauses, awready / wready pauses and write-response delays."""
        def gen(p):
            r = random.Random(self.rng.getrandbits(32))
            while True:
                yield r.random() < p
        self.src.set_pause_generator(gen(0.3) if on else None)
        self.ram.aw_channel.set_pause_generator(gen(0.4) if on else None)
        self.ram.w_channel.set_pause_generator(gen(0.3) if on else None)
        self.ram.b_channel.set_pause_generator(gen(0.6) if on else None)

    async def read(self, addr):
        r = await self.axil.read(4 * addr, 4)
        return int.from_bytes(r.data, "little"), int(r.resp)

    async def reg(self, addr):
        v, resp = await self.read(addr)
        assert resp == 0, f"read of register {addr:#x}: response {resp}"
        return v

    async def reg64(self, addr):
        return await self.reg(addr) | await self.reg(addr + 1) << 32

    async def write(self, addr, value):
        r = await self.axil.write(4 * addr, int(value).to_bytes(4, "little"))
        return int(r.resp)

    async def set(self, addr, value):
        assert await self.write(addr, value) == 0, f"write of register {addr:#x}: SLVERR"

    async def set64(self, addr, value):
        await self.set(addr, value & 0xFFFFFFFF)
        await self.set(addr + 1, value >> 32)

    async def set_type(self, t, word):
        """Message t's header word (S_TYPE): the low word is held, the high word's write
        writes the core's register."""
        await self.set64(R["SLOT_STRIDE"] + R["S_TYPE"] + 2 * t, word)

    async def go(self, base, msg, wire):
        await self.set64(R["C_BASE"], base)
        await self.set(R["C_MSG"], msg)
        await self.set(R["C_WIRE"], wire)
        await self.set(R["C_CTRL"], 1)

    async def wait_irq(self, limit):
        """Waits for irq (at most `limit` cycles); then STATUS."""
        for _ in range(limit):
            await ReadOnly()
            if int(self.dut.irq.value):
                break
            await RisingEdge(self.dut.clk)
        await RisingEdge(self.dut.clk)
        return await self.reg(R["C_STATUS"])


class Oracle:
    """The CPU engine as `decode --delimited` runs it: each message at the cursor."""

    def __init__(self, cli):
        self.cli = cli

    def decode(self, data, base):
        try:
            return "ok", run_heapwire(["decode", *self.cli, "--base", str(base)], data)
        except Rejected as e:
            return e.kind, e.offset


def frame_of(data, ib):
    """The stream frame of a message; an empty message is one beat of null bytes (tkeep 0)
    with tlast (the bus model sends nothing for an empty frame)."""
    from cocotbext.axi import AxiStreamFrame
    return AxiStreamFrame(data) if data else AxiStreamFrame(bytes(ib), tkeep=[0] * ib)


def check_image(img, cpu, words, pw, ctx):
    """The image read back against the CPU engine's (which carries every type's default
    header word, its message index): equal, except that a pointer-aligned word where the CPU
    image has message index t may be `words[t]` (the S_TYPE value the host wrote). Returns
    how many words were such header words."""
    assert len(img) == len(cpu), f"{ctx}: {first_difference(img, cpu)}"
    if not words:
        assert img == cpu, f"{ctx}: {first_difference(img, cpu)}"
        return 0
    replaced = 0
    for i in range(0, len(cpu), pw):
        g, c = img[i:i + pw], cpu[i:i + pw]
        if g == c:
            continue
        t = int.from_bytes(c, "little")
        assert len(c) == pw and t in words and g == words[t].to_bytes(pw, "little"), \
            f"{ctx}: word at {i} is {g.hex()}, the CPU engine's {c.hex()} (header words {words}): {first_difference(img, cpu)}"
        replaced += 1
    return replaced


async def run_stream(h, oracle, msgs, base, msg_idx, wire, label, limit_per_msg=200000, words=None):
    """Queues `msgs` on the stream after one go bit and checks every verdict: images at the
    cursor in host memory, rejections in ERR_KIND / ERR_OFFSET (then ack, BASE = CURSOR,
    go again). `words`: {message index: header word} the host wrote to S_TYPE (check_image).
    Returns (cycles from the go bit to the last completion, bytes in, verdicts, header words
    seen)."""
    # the expected run
    want, cursor = [], base
    for data in msgs:
        if len(data) > h.in_bytes:
            w = ("input_too_large", 0)
        else:
            w = oracle.decode(data, cursor)
        want.append((w, cursor))
        if w[0] == "ok":
            cursor += len(w[1])
    end = cursor
    h.ram.write(base - 64, bytes([FILL]) * (end - base + 128))
    await h.go(base, msg_idx, wire)
    t0 = h.cycle
    for data in msgs:
        await h.src.send(frame_of(data, len(h.dut.s_axis_tkeep)))
    # REQUESTS counts the messages the core ran: images and rejections, not device errors
    n_ran = sum(w[0] not in DEVICE_ERRORS.values() for w, _ in want)
    verdicts = {}
    ran = 0
    for i, ((w, at), data) in enumerate(zip(want, msgs)):
        verdicts[w[0]] = verdicts.get(w[0], 0) + 1
        ctx = f"{label} message {i} ({len(data)} bytes {data[:32].hex()}{'...' if len(data) > 32 else ''}, base {at:#x})"
        ran += w[0] not in DEVICE_ERRORS.values()
        if w[0] == "ok":
            for _ in range(1000):
                if await h.reg64(R["N_REQUESTS"]) - h.requests0 >= ran:
                    break
                st = await h.wait_irq(limit_per_msg // 1000)
                assert not st & 4, f"{ctx}: error {await h.reg(R['C_ERR_KIND'])} at {await h.reg64(R['C_ERR_OFFSET'])}, CPU engine accepts"
                await h.set(R["C_CTRL"], 4)
            else:
                raise AssertionError(f"{ctx}: not done after {limit_per_msg} cycles")
            continue
        for _ in range(1000):
            st = await h.wait_irq(limit_per_msg // 1000)
            if st & 4:
                break
            await h.set(R["C_CTRL"], 4)  # an earlier image's done
        else:
            raise AssertionError(f"{ctx}: no error after {limit_per_msg} cycles, CPU engine says {w}")
        assert await h.reg64(R["N_REQUESTS"]) - h.requests0 == ran, f"{ctx}: requests counter"
        code, off = await h.reg(R["C_ERR_KIND"]), await h.reg64(R["C_ERR_OFFSET"])
        got = (KINDS.get(code) or DEVICE_ERRORS.get(code) or f"code {code}", off)
        assert got == w, f"{ctx}: ERR_KIND/ERR_OFFSET {got}, CPU engine {w}"
        cur = await h.reg64(R["C_CURSOR"])
        assert cur == at, f"{ctx}: CURSOR {cur:#x}, expected {at:#x}"
        await h.set(R["C_CTRL"], 4)
        await h.go(cur, msg_idx, wire)
    t1 = h.cycle
    assert await h.reg64(R["N_REQUESTS"]) - h.requests0 == n_ran
    await h.set(R["C_CTRL"], 2 | 4)  # stop (at this message boundary) and acknowledge: the next go re-arms
    for _ in range(100):
        if not await h.reg(R["C_STATUS"]) & 1:
            break
    else:
        raise AssertionError(f"{label}: still busy after stop")
    got = h.ram.read(base - 64, end - base + 128)
    assert got[:64] == bytes([FILL]) * 64, f"{label}: bytes before the first image written"
    assert got[-64:] == bytes([FILL]) * 64, f"{label}: bytes after the last image written: {got[-64:].hex()}"
    headers = 0
    for i, ((w, at), data) in enumerate(zip(want, msgs)):
        if w[0] == "ok":
            img = got[64 + at - base:64 + at - base + len(w[1])]
            headers += check_image(img, w[1], words, h.ptr, f"{label} message {i} at {at:#x}")
    assert await h.reg(R["C_CURSOR"]) == end & 0xFFFFFFFF
    h.requests0 += n_ran
    h.bytes_in += sum(len(d) for (w, _), d in zip(want, msgs) if w[0] not in DEVICE_ERRORS.values())
    h.bytes_out += sum(len(w[1]) for w, _ in want if w[0] == "ok")
    return t1 - t0, sum(len(m) for m in msgs), verdicts, headers


# --------------------------------------------------------------------------- corpus


def pb_corpus(rng, n, maxlen):
    """(type name, messages): generated scalars3 messages of one reader type (the
    differential suite's generator) and mutations of them (mostly rejected)."""
    sys.path.insert(0, str(DIFF))
    from hwdiff import gen as hwgen, mutate as hwmut, schemas as hwschemas
    t = "hw.p3.Scalars"
    g = hwgen.Gen(rng.getrandbits(32), huge_prob=0.0)
    msgs = []
    while len(msgs) < n:
        b = g.message(t).SerializePartialToString()
        if len(b) > maxlen:
            continue
        if rng.random() < 0.3:
            mut = hwmut.Mutator(rng, [fd.number for fd in hwschemas.descriptor(t).fields])
            b = mut.mutate(b, g.message(t).SerializePartialToString())[1][:maxlen]
        msgs.append(b)
    return t, msgs


def og_corpus(rng, n):
    """(class name, messages): random expression trees (the objgraph model's serializer),
    some truncated or with trailing bytes."""
    sys.path.insert(0, str(RTL_DIR / "tb" / "hw_og_core"))
    import og_model
    m = og_model.OgModel(hwsc.read(os.environ["HW_AXI_HWSC"]))
    msgs = []
    for _ in range(n):
        w = og_model.serialize(m, og_model.expr_tree(m, rng, rng.randrange(0, 12)))
        r = rng.random()
        if r < 0.15:
            w = w[:rng.randrange(len(w))]
        elif r < 0.25:
            w += b"\x00"
        msgs.append(w)
    return "expr.Node", msgs


class Setup:
    """What a configuration's tests need: the host, the oracle, the corpus maker."""

    def __init__(self, dut, name):
        self.wire = int(os.environ["HW_AXI_WIRE"])
        self.s = hwsc.read(os.environ["HW_AXI_HWSC"])
        self.rng = random.Random(seed_for(name))
        self.h = AxiHost(dut, self.rng)
        self.h.requests0 = self.h.bytes_in = self.h.bytes_out = 0  # what the counters should hold
        self.h.in_bytes = int(os.environ["HW_AXI_IN_BYTES"])
        self.h.ptr = self.s.ptr

    def corpus(self, n):
        if self.wire == 0:
            t, msgs = pb_corpus(self.rng, n, int(os.environ["HW_AXI_MAXLEN"]))
        else:
            t, msgs = og_corpus(self.rng, n)
        cli = ["--schema", os.environ["HW_AXI_PROTO"], "--type", t, *os.environ.get("HW_AXI_OPTS", "").split()]
        return self.s.message_index(t), Oracle(cli), msgs

    def base(self):
        return 0x1000 + 8 * self.rng.randrange(0, 4096)


# --------------------------------------------------------------------------- tests


@cocotb.test()
async def test_header_block(dut):
    """The header block, slot 0's block and the bus's refusals (SLVERR)."""
    x = Setup(dut, "header")
    h = x.h
    await h.reset()
    assert await h.reg(R["H_MAGIC"]) == int.from_bytes(b"HWDV", "little")
    assert await h.reg(R["H_VERSION"]) == 1
    caps = await h.reg(R["H_CAPS"])
    assert caps & (1 << x.wire) and caps & 0x10 and not caps & 0b1100, f"CAPS {caps:#x}"
    assert await h.reg(R["H_SLOTS"]) == 1
    assert await h.reg(R["H_IN_BYTES"]) == h.in_bytes
    assert await h.reg(R["H_OUT_BYTES"]) == int(os.environ["HW_AXI_OUT_BYTES"])
    assert await h.reg(R["H_PTR_WIDTHS"]) == 1 << x.s.ptr
    assert await h.reg(R["H_ENGINE"]) == 3
    assert await h.reg(R["H_TYPE_REGS"]) == len(x.s.messages)
    assert await h.reg(R["SLOT_STRIDE"] + R["S_STATE"]) == 2
    assert await h.reg(R["SLOT_STRIDE"] + R["S_NUM_TYPES"]) == len(x.s.messages)
    name = b"".join([(await h.reg(R["SLOT_STRIDE"] + R["S_NAME"] + i)).to_bytes(4, "little") for i in range(16)])
    assert name.rstrip(b"\0").decode() == Path(os.environ["HW_AXI_PROTO"]).stem, name
    assert await h.reg(R["C_MAX_DEPTH"]) == int(os.environ["HW_AXI_MAX_DEPTH"])
    for addr in (0x00B, 0x03F, 0x054, 0x08E, 0x0FFF, R["SLOT_STRIDE"] + 0x004):
        assert (await h.read(addr))[1] == 2, f"read of {addr:#x} (no register): not SLVERR"
    for addr in (R["H_MAGIC"], R["C_STATUS"], R["C_ERR_KIND"], R["N_REQUESTS"], 0x0FFF):
        assert await h.write(addr, 1) == 2, f"write to {addr:#x}: not SLVERR"
    await h.set64(R["C_BASE"], 0x123456789ABCDEF0)
    assert await h.reg64(R["C_BASE"]) == 0x123456789ABCDEF0
    # go with a bad slot / message / wire: the device's errors, nothing read from the stream
    for reg, value, code in [("C_SLOT", 1, 66), ("C_MSG", len(x.s.messages), 68), ("C_WIRE", 1 - x.wire, 69)]:
        await h.set(R[reg], value)
        await h.set(R["C_CTRL"], 1)
        assert await h.reg(R["C_STATUS"]) & 4 and await h.reg(R["C_ERR_KIND"]) == code, reg
        assert int(dut.irq.value) == 1
        await h.set(R[reg], 0 if reg != "C_WIRE" else x.wire)
        await h.set(R["C_CTRL"], 4)
        assert int(dut.irq.value) == 0 and await h.reg(R["C_STATUS"]) == 4  # halted until the next go


@cocotb.test()
async def test_stream(dut):
    """Messages back to back without stalls, then with random stalls and response delays:
    every image the CPU engine's, at the cursor; every rejection the same."""
    x = Setup(dut, "stream")
    h = x.h
    await h.reset()
    total = {}
    for stalls in (False, True):
        h.stalls(stalls)
        mi, oracle, msgs = x.corpus(12 * SCALE)
        cycles, nbytes, verdicts, _ = await run_stream(h, oracle, msgs, x.base(), mi, x.wire, f"stalls={stalls}")
        for k, v in verdicts.items():
            total[k] = total.get(k, 0) + v
    dut._log.info("stream: %s", total)
    assert total.get("ok", 0) >= 8 * SCALE and len(total) >= 2, f"too few images or rejections: {total}"
    assert await h.reg64(R["N_REJECTIONS"]) == sum(v for k, v in total.items() if k != "ok")
    assert await h.reg64(R["N_REQUESTS"]) == sum(total.values())  # images and rejections
    assert await h.reg64(R["N_BYTES_IN"]) == h.bytes_in and await h.reg64(R["N_BYTES_OUT"]) == h.bytes_out


@cocotb.test()
async def test_framing(dut):
    """tkeep holes and a short beat before tlast are `protocol` at the beat's byte offset;
    a message longer than the input memory is `input too large`; the rest of a bad message
    is drained, and the next message after go decodes right; empty messages (one null beat)."""
    from cocotbext.axi import AxiStreamFrame
    x = Setup(dut, "framing")
    h = x.h
    await h.reset()
    mi, oracle, msgs = x.corpus(4)
    ib = len(dut.s_axis_tkeep)
    good = next((m for m in msgs if oracle.decode(m, 0x2000)[0] == "ok"), None)
    assert good is not None
    for label, frame, want in [
        ("hole in tkeep", AxiStreamFrame(bytes(3 * ib), tkeep=[1] * ib + [1, 0] + [1] * (2 * ib - 2)), (78, ib)),
        ("short beat before tlast", AxiStreamFrame(bytes(3 * ib), tkeep=[1] * ib + [0] * ib + [1] * ib), (78, ib)),
        ("too long", AxiStreamFrame(bytes(h.in_bytes + 1)), (70, h.in_bytes - h.in_bytes % ib)),
    ]:
        await h.go(0x2000, mi, x.wire)
        await h.src.send(frame)
        st = await h.wait_irq(20000 + h.in_bytes)
        got = (await h.reg(R["C_ERR_KIND"]), await h.reg64(R["C_ERR_OFFSET"]))
        assert st & 4 and got == want, f"{label}: STATUS {st:#x}, ERR_KIND/OFFSET {got}, expected {want}"
        await h.set(R["C_CTRL"], 4)
        _, _, v, _ = await run_stream(h, oracle, [good], 0x2000, mi, x.wire, f"after {label}")
        assert v == {"ok": 1}
    assert await h.reg64(R["N_PROTOCOL_ERRORS"]) == 2
    # empty messages (one null beat with tlast) between others
    _, _, v, _ = await run_stream(h, oracle, [b"", good, b""], 0x2000, mi, x.wire, "empty messages")
    assert sum(v.values()) == 3 and v.get("ok", 0) >= 1, v


@cocotb.test()
async def test_reset_mid_message(dut):
    """A reset while a message is half received (and once while an image is being written):
    every register back to its reset value, the next message decodes right."""
    x = Setup(dut, "reset")
    h = x.h
    await h.reset()
    mi, oracle, msgs = x.corpus(12)
    long = max(msgs, key=len)
    good = [m for m in msgs if oracle.decode(m, 0x3000)[0] == "ok"]
    from cocotbext.axi import AxiStreamFrame
    h.stalls(True)
    for when in ("receiving", "writing"):
        await h.go(0x3000, mi, x.wire)
        await h.src.send(AxiStreamFrame(long if when == "receiving" else good[0]))
        for _ in range(100000):
            await RisingEdge(dut.clk)
            if when == "receiving" and int(dut.s_axis_tvalid.value) and int(dut.s_axis_tready.value):
                break
            if when == "writing" and int(dut.m_axi_wvalid.value):
                break
        await h.reset(3)
        assert await h.reg64(R["N_REQUESTS"]) == 0 and await h.reg(R["C_STATUS"]) == 0
        h.requests0 = h.bytes_in = h.bytes_out = 0
        _, _, v, _ = await run_stream(h, oracle, good[:2], 0x3000, mi, x.wire, f"after a reset while {when}")
        assert v == {"ok": 2}, v


@cocotb.test()
async def test_type_registers(dut):
    """The per-type header-word registers (S_TYPE, by message index) written over AXI4-Lite,
    a random word per message type: every image carries the written word where the CPU
    engine's carries the type's default (its message index), and differs nowhere else;
    without header words (the protobuf core built without --header-word) nothing changes.
    On the objgraph core the wrapper maps each message to its class's register (a message
    that is no class: dropped). The defaults written back give the CPU engine's images."""
    x = Setup(dut, "types")
    h = x.h
    await h.reset()
    mi, oracle, msgs = x.corpus(8 * SCALE)
    good = [m for m in msgs if oracle.decode(m, 0x4000)[0] == "ok"]
    assert len(good) >= 3, f"only {len(good)} accepted messages"
    pw = x.s.ptr
    n = len(x.s.messages)
    words = {t: x.rng.getrandbits(8 * pw - 1) | 1 << (8 * pw - 1) for t in range(n)}  # never a message index
    for t, w in words.items():
        await h.set_type(t, w)
    _, _, v, headers = await run_stream(h, oracle, good, x.base(), mi, x.wire, "type registers", words=words)
    assert v == {"ok": len(good)}, v
    dut._log.info("type registers: %d images, %d header words written from S_TYPE", len(good), headers)
    if x.wire == 1 or x.s.header_words:
        assert headers >= len(good), f"{headers} header words from the registers in {len(good)} images"
    else:
        assert headers == 0
    for t in range(n):
        await h.set_type(t, t)
    _, _, v, headers = await run_stream(h, oracle, good, x.base(), mi, x.wire, "type registers restored", words={})
    assert v == {"ok": len(good)} and headers == 0, v


def table_words(path):
    """(address, data) of the words of a `<stem>_core_tables.gen.hex` file."""
    words = []
    for line in Path(path).read_text().splitlines():
        if line.strip() and not line.startswith("//"):
            v = int(line, 16)
            words.append((v >> 64, v & (1 << 64) - 1))
    assert words, f"{path}: no table words"
    return words


async def load_tables(h, words):
    """Loads table words through slot 0's S_TABLE_ registers (S_TABLE_ADDR only where
    the next address is not the one after the last); returns the cycles it took."""
    slot = R["SLOT_STRIDE"]
    t0 = h.cycle
    await h.set(slot + R["S_TABLE_CTRL"], 1)
    assert await h.reg(slot + R["S_STATE"]) == 1, "S_STATE while loading"
    nxt = None
    for a, d in words:
        if a != nxt:
            await h.set(slot + R["S_TABLE_ADDR"], a)
        await h.set64(slot + R["S_TABLE_DATA"], d)
        nxt = a + 1
    await h.set(slot + R["S_TABLE_CTRL"], 0)
    return h.cycle - t0


@cocotb.test(skip=not os.environ.get("HW_AXI_TABLES_B"))
async def test_tables_reload(dut):
    """The wrapped core with run-time-loaded tables: a start before any load is refused
    (`unsupported` at offset 0); a reset mid-load leaves the load open; schema A's table
    words loaded over AXI4-Lite, its messages' images and rejections the CPU engine's; a
    load refused (SLVERR, nothing changed) while a message is in flight; schema B (the
    same messages with 32-bit pointers and a header word per struct) loaded into the same
    core, its images the CPU engine's; A again."""
    from cocotbext.axi import AxiStreamFrame
    x = Setup(dut, "tables")
    h = x.h
    slot = R["SLOT_STRIDE"]
    await h.reset()
    caps = await h.reg(R["H_CAPS"])
    assert caps & 0x8, f"CAPS {caps:#x}: no reload bit"
    assert await h.reg(R["H_PTR_WIDTHS"]) == 0x110
    assert await h.reg(slot + R["S_STATE"]) == 0 and await h.reg(slot + R["S_NUM_TYPES"]) == 0
    assert await h.reg(slot + R["S_TABLE_CTRL"]) == 0
    a_words, b_words = table_words(os.environ["HW_AXI_TABLES_A"]), table_words(os.environ["HW_AXI_TABLES_B"])
    mi, oracle_a, msgs = x.corpus(10 * SCALE)
    t = "hw.p3.Scalars"
    oracle_b = Oracle(["--schema", os.environ["HW_AXI_PROTO"], "--type", t, *os.environ["HW_AXI_OPTS_B"].split()])
    good = [m for m in msgs if oracle_a.decode(m, 0x2000)[0] == "ok"]
    assert len(good) >= 3, f"only {len(good)} accepted messages"

    # no tables: the go bit is taken (MSG not checked), the core refuses the message
    unsupported = next(c for c, k in KINDS.items() if k == "unsupported")
    await h.go(0x2000, mi, 0)
    await h.src.send(frame_of(good[0], len(dut.s_axis_tkeep)))
    st = await h.wait_irq(20000)
    got = (await h.reg(R["C_ERR_KIND"]), await h.reg64(R["C_ERR_OFFSET"]))
    assert st & 4 and got == (unsupported, 0), f"a start before loading: STATUS {st:#x}, ERR_KIND/OFFSET {got}"
    h.requests0 += 1
    h.bytes_in += len(good[0])
    await h.set(R["C_CTRL"], 4)
    # a data word without a load in progress: refused
    assert await h.write(slot + R["S_TABLE_DATA"] + 1, 0) == 2
    # a reset in the middle of a load leaves it open (S_STATE 1): the words so far, the
    # configuration word among them, are not taken as tables; the host redoes the load
    await h.set(slot + R["S_TABLE_CTRL"], 1)
    for a, d in a_words[:8]:
        await h.set(slot + R["S_TABLE_ADDR"], a)
        await h.set64(slot + R["S_TABLE_DATA"], d)
    await h.reset(3)
    assert await h.reg(slot + R["S_STATE"]) == 1 and await h.reg(slot + R["S_TABLE_CTRL"]) == 1, "a reset ended the load"
    h.requests0 = h.bytes_in = h.bytes_out = 0

    loads = []
    for label, words, oracle, ptr in [("A", a_words, oracle_a, 8), ("B", b_words, oracle_b, 4), ("A again", a_words, oracle_a, 8)]:
        loads.append(await load_tables(h, words))
        assert await h.reg(slot + R["S_TABLE_CTRL"]) == 2 and await h.reg(slot + R["S_STATE"]) == 2, f"{label}: tables not ok"
        n_types = words[0][1] & 0xFFFF  # the configuration word's message count
        assert words[0][0] == 0 and await h.reg(slot + R["S_NUM_TYPES"]) == n_types, label
        # MSG is checked against the loaded schema's message count
        await h.set(R["C_MSG"], n_types)
        await h.set(R["C_CTRL"], 1)
        assert await h.reg(R["C_ERR_KIND"]) == 68, f"{label}: MSG past the loaded types"
        await h.set(R["C_CTRL"], 4)
        h.ptr = ptr
        _, _, v, _ = await run_stream(h, oracle, msgs, x.base(), mi, 0, f"tables {label}")
        dut._log.info("tables %s: %d words loaded in %d cycles; %s", label, len(words), loads[-1], v)
        assert v.get("ok", 0) >= 3 and len(v) >= 2, f"{label}: too few images or rejections: {v}"

        if label == "A":
            # while a message is in flight (the core running): every table-load register
            # write is refused and changes nothing; the message decodes right
            await h.go(0x2000, mi, 0)
            await h.src.send(AxiStreamFrame(max(good, key=len)))
            for _ in range(100000):
                await RisingEdge(dut.clk)
                if int(dut.wrap.st_reg.value) == 4:  # ST_RUN
                    break
            for reg, value in [("S_TABLE_CTRL", 1), ("S_TABLE_ADDR", 5), ("S_TABLE_DATA", 7)]:
                assert await h.write(slot + R[reg], value) == 2, f"{reg} written while busy"
            assert int(dut.wrap.st_reg.value) in (4, 5, 6), "the core finished before the refusals: use a longer message"
            assert await h.reg(slot + R["S_TABLE_CTRL"]) == 2 and int(dut.core_table_load.value) == 0
            st = await h.wait_irq(200000)
            assert st & 2 and not st & 4, f"the message after the refused load: STATUS {st:#x}"
            want = oracle.decode(max(good, key=len), 0x2000)
            got = h.ram.read(0x2000, len(want[1]))
            assert got == want[1], f"the message after the refused load: {first_difference(got, want[1])}"
            h.requests0 += 1
            h.bytes_in += len(max(good, key=len))
            h.bytes_out += len(want[1])
            await h.set(R["C_CTRL"], 2 | 4)
            for _ in range(100):
                if not await h.reg(R["C_STATUS"]) & 1:
                    break
    assert await h.reg64(R["N_REQUESTS"]) == h.requests0


@cocotb.test(skip=not os.environ.get("HW_AXI_BENCH"))
async def test_throughput(dut):
    """HW_AXI_BENCH=1: bytes/cycle from the go bit to the last image in host memory, for
    the same messages with and without stalls (the host's register polls included)."""
    x = Setup(dut, "bench")
    h = x.h
    await h.reset()
    mi, oracle, msgs = x.corpus(40)
    msgs = [m for m in msgs if oracle.decode(m, 0x1000)[0] == "ok"]
    names = {1: "receive", 3: "start", 4: "core", 5: "dma", 6: "dma"}  # hw_axi_wrap's ST_ values
    for stalls in (False, True):
        h.stalls(stalls)
        h.states = {}
        out0 = await h.reg64(R["N_BYTES_OUT"])
        cycles, nbytes, _, _ = await run_stream(h, oracle, msgs, 0x1000, mi, x.wire, "bench")
        split = {}
        for st, n in h.states.items():
            split[names.get(st, "idle")] = split.get(names.get(st, "idle"), 0) + n
        h.states = None
        out = await h.reg64(R["N_BYTES_OUT"]) - out0
        dut._log.warning("THROUGHPUT %s stalls=%s: %d messages, %d bytes in, %d image bytes out, %d cycles, "
                         "%.3f input bytes/cycle, %.3f image bytes/cycle; cycles by wrapper state %s",
                         os.environ["HW_AXI_CFG"], stalls, len(msgs), nbytes, out, cycles, nbytes / cycles, out / cycles,
                         split)


# --------------------------------------------------------------------------- pytest entry

def test_register_map_matches_regs():
    """hw_axi_wrap's R_ addresses are crates/device/src/regs.rs's constants of the same names."""
    dev, rtl = device_regs(), wrapper_regs()
    only_hw = {"C_CURSOR", "SLOT0"}  # the hardware variant's cursor register; slot 0's block = SLOT_STRIDE
    for name, addr in rtl.items():
        if name in only_hw:
            continue
        assert name in dev, f"R_{name} of rtl/hw_axi_wrap.v is not in crates/device/src/regs.rs"
        assert dev[name] == addr, f"R_{name} = {addr:#x}, regs.rs says {dev[name]:#x}"
    assert rtl["SLOT0"] == dev["SLOT_STRIDE"]
    assert rtl["C_CURSOR"] == dev["CONTROL_END"], "CURSOR follows the control block (docs/device.md)"
    for name in ("H_MAGIC", "H_TIME_UNIT", "C_CTRL", "C_NEEDED", "N_REQUESTS", "N_RELOAD_BYTES", "S_TYPE", "S_NAME"):
        assert name in rtl, f"rtl/hw_axi_wrap.v has no R_{name}"


def log2_ceil(v):
    return 0 if v <= 1 else (v - 1).bit_length()


CONFIGS = {
    # name: (schema, compile options, wire, IN_WIDTH, OUT_WIDTH)
    "pb": (DIFF / "schemas" / "scalars3.proto", ["-I", str(DIFF / "schemas")], 0, 64, 64),
    "og": (EXPR, [], 1, 64, 256),
    # the other stream and bus widths: 32-bit pointers, 128-bit stream / 256-bit AXI data
    # (images realigned inside 32-byte beats), 32-bit stream / 64-bit AXI data
    # with a header word per struct (the type registers' words in the images)
    "pb_p32": (DIFF / "schemas" / "scalars3.proto", ["-I", str(DIFF / "schemas"), "--pointer-width", "32", "--header-word"], 0, 128, 256),
    "og_p32": (EXPR, ["--pointer-width", "32"], 1, 32, 64),
    # heapwire_axi with TABLES=1, loaded with scalars3's tables, then with those of
    # scalars3 at 32-bit pointers with a header word per struct (TABLES_B), then the first
    "pb_tables": (DIFF / "schemas" / "scalars3.proto", ["-I", str(DIFF / "schemas")], 0, 64, 64),
}
TABLES_B = ["-I", str(DIFF / "schemas"), "--pointer-width", "32", "--header-word"]
PB_ENGINE = engine_files("hw_pb_core") + ["hw_axi_wrap.v"]
OG_ENGINE = engine_files("hw_og_core") + ["hw_axi_wrap.v"]
MAXLEN = 512  # longest protobuf message of the corpus (small memories: a quick Icarus build)


def _build_and_test(cfg, testcase=None):
    proto, opts, wire, in_w, out_w = CONFIGS[cfg]
    core = "_core" if wire == 0 else "_og_core"
    gen, sources = generated_core(TB_DIR, cfg, proto, opts, PB_ENGINE if wire == 0 else OG_ENGINE, core)
    s = hwsc.read(gen / f"{proto.stem}.hwsc")
    if wire == 0:
        sys.path.insert(0, str(RTL_DIR / "tb" / "hw_pb_core"))
        from test_hw_pb_core import sizes
        params = sizes(s, in_w, out_w, MAXLEN)
        top, depth = "heapwire_axi", params["MAX_DEPTH"]
    else:
        params = {"IN_WIDTH": in_w, "IN_ADDR_WIDTH": 10, "OUT_WIDTH": out_w, "OUT_ADDR_WIDTH": 10, "OBJ_BITS": 9}
        top, depth = "heapwire_og_axi", 0
    params["MAX_BURST"] = 8  # short bursts: several per image, so bursts, 4 KB edges and outstanding writes all occur
    env = {"HW_AXI_HWSC": str(gen / f"{proto.stem}.hwsc"), "HW_AXI_PROTO": str(proto), "HW_AXI_CFG": cfg,
           "HW_AXI_WIRE": str(wire), "HW_AXI_MAXLEN": str(MAXLEN), "HW_AXI_MAX_DEPTH": str(depth),
           "HW_AXI_OPTS": " ".join(opts + (["--wire", "objgraph"] if wire else [])),
           "HW_AXI_IN_BYTES": str((in_w // 8) << params["IN_ADDR_WIDTH"]),
           "HW_AXI_OUT_BYTES": str((out_w // 8) << params["OUT_ADDR_WIDTH"])}
    if cfg == "pb_tables":
        from tbutil import compile_schema
        params["TABLES"] = 1
        gen_b = compile_schema(proto, TB_DIR / "sim_build" / cfg / "gen_b", extra=TABLES_B)
        env.update({"HW_AXI_TABLES_A": str(gen / f"{proto.stem}_core_tables.gen.hex"),
                    "HW_AXI_TABLES_B": str(gen_b / f"{proto.stem}_core_tables.gen.hex"),
                    "HW_AXI_OPTS_B": " ".join(TABLES_B)})
        testcase = testcase or "test_tables_reload"
    run_cocotb(TB_DIR, top, sources, cfg, params, testcase=testcase, extra_env=env)


@pytest.mark.parametrize("cfg", list(CONFIGS))
def test_heapwire_axi(cfg):
    _build_and_test(cfg)


if __name__ == "__main__":
    # python3 test_heapwire_axi.py [CONFIG [TESTCASE]]
    a = sys.argv[1:]
    _build_and_test(a[0] if a else "pb", a[1] if len(a) > 1 else None)

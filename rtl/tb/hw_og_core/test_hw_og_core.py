"""cocotb testbench for the objgraph core (rtl/hw_og_core.v inside the generated wrapper
heapwire_og_core), cocotb 2.x on Icarus Verilog.

The pytest entry compiles a schema with the current CLI (`heapwire compile --rtl`, so
the engine files copied into the build folder are the working tree's rtl/*.v), then
runs the cocotb tests below on heapwire_og_core for:
  * examples/expression_tree/expr.proto, 64-bit layout (64-bit input, 256-bit output words)
    and 32-bit layout (32-bit input, 64-bit output words);
  * rtl/tb/hw_og_core/zoo.proto (every wire width and conversion, abstract classes,
    omitted base members, a sparse type id, an empty class), 64-bit layout with 128-bit
    input / 128-bit output words and 32-bit layout with 64-bit input / 256-bit output;
  * expr.proto 64-bit again with the object-pointer table built from ECP5 DP16KD cells as
    scripts/synth.sh synthesizes it (HEAPWIRE_ECP5_BRAM, simulated on the cell model
    rtl/tb/models/DP16KD.v, which reads x for a word written at the same edge).

The testbench is the host: Python models of the input memory (1-cycle read latency,
junk outside the input) and of the output memory (whole-word writes, filled with 0xA5
first so a byte the core fails to write shows up, and no write allowed past the image),
drives start/in_len/root_cls/base/max_image, writes the header registers through the
register port at random moments, waits a random number of idle cycles between decodes
and resets the core between some of them. Every result (image bytes and size, or error
code and err_offset) is compared with og_model.OgModel (the Python reference model of
docs/objgraph-wire.md), and every model verdict with default registers also with the
CPU engine (`heapwire decode --wire objgraph`, stderr `<kind> at byte <offset>`).

Vectors: the paper's 3+(5*4) (54 bytes), the scaled tree for several n and random
expression trees serialized by the model's serializer; random graphs of every schema
(shared objects, cycles, null references; serialized in prefix order, or raw object
lists); must-fail variants (truncation, trailing bytes, bad counts, unknown and wrong
root type ids, references out of range / to the wrong class / to object 0 at base 0,
bit flips), misaligned bases, a base near 4 GiB in the 32-bit layout, max_image limits,
and an object count beyond the object-pointer table (`capacity`).
Knobs: HW_TB_SEED, HW_TB_THOROUGH=1 (about 5x more random vectors).
"""

import os
import random
import sys
from collections import Counter
import struct
from pathlib import Path

import pytest

import cocotb
from cocotb.triggers import RisingEdge

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # rtl/tb (tbutil, hwsc) when run as a script
import hwsc
import og_model
from og_model import OgModel
from tbutil import (REPO, CoreHost, Rejected, ecp5_bram, engine_files, error_kinds, first_difference, generated_core, run_cocotb,
                    run_heapwire, save_failing, seed_for, thorough)

TB_DIR = Path(__file__).resolve().parent
ERROR_KINDS = error_kinds("hw_og_core")
EXPR = REPO / "examples" / "expression_tree" / "expr.proto"
ZOO = TB_DIR / "zoo.proto"
OBJ_BITS = 9

# --------------------------------------------------------------------------- host driver


class Host(CoreHost):
    def __init__(self, dut, model, rng):
        super().__init__(dut, rng)
        self.m = model
        self.regs = model.default_regs()
        self.cpu_checked = 0

    async def setup(self):
        await super().setup(["root_cls", "max_image", "hdr_wr_en", "hdr_wr_idx", "hdr_wr_data"])

    async def reset(self, cycles=3):
        await super().reset(cycles)
        self.regs = self.m.default_regs()  # the registers' reset values: message indices

    async def write_regs(self, values):
        d = self.dut
        for c, v in values.items():
            await RisingEdge(d.clk)
            d.hdr_wr_en.value = 1
            d.hdr_wr_idx.value = c
            d.hdr_wr_data.value = v
            self.regs[c] = v
        await RisingEdge(d.clk)
        d.hdr_wr_en.value = 0
        d.hdr_wr_idx.value = self.rng.getrandbits(len(d.hdr_wr_idx))
        d.hdr_wr_data.value = self.rng.getrandbits(64)

    async def run(self, wire, root_cls, base, max_image):
        """One decode; returns (kind, offset) or ("ok", image bytes)."""
        code, off, size, _, omem = await self.run_core(
            wire, dict(in_len=len(wire), root_cls=root_cls, base=base, max_image=max_image), 100000 + 64 * len(wire))
        if code:
            assert code in ERROR_KINDS, f"error code {code}"
            return ERROR_KINDS[code], off
        return "ok", self.image(omem, size)

    async def check(self, label, wire, root_cls, base=0, max_image=1 << 30, cpu=True):
        """Runs one vector on the core and compares it with the model (and the model, with
        default registers, with the CPU engine)."""
        want = self.m.decode(wire, root_cls, base, max_image, self.regs)
        ctx = f"{label}: {len(wire)} bytes {wire[:48].hex()}{'...' if len(wire) > 48 else ''} root {root_cls} base {base:#x} max_image {max_image}"

        def saved():
            return f" (input saved as {save_failing(os.environ.get('HW_OG_CFG', 'og') + '-' + label, wire)})"

        try:
            got = await self.run(wire, root_cls, base, max_image)
        except AssertionError as e:  # the host's checks (writes past the image, x bits, a hang)
            raise AssertionError(f"{ctx}{saved()}: {e}") from None
        if got[0] != want[0] or got[1] != want[1]:
            ctx += saved()
        if want[0] == "ok":
            assert got[0] == "ok", f"{ctx}: core rejected {got}, model accepts"
            assert got[1] == want[1], f"{ctx}: {first_difference(got[1], want[1])}"
        else:
            assert got == want, f"{ctx}: core {got}, model {want}"
        if cpu and max_image <= 0xFFFFFFFF:
            self.cpu_agrees(ctx, wire, root_cls, base, max_image)
        return want[0]

    def cpu_agrees(self, ctx, wire, root_cls, base, max_image):
        m = self.m
        want = m.decode(wire, root_cls, base, max_image)  # default registers
        args = ["decode", "--wire", "objgraph", "--schema", os.environ["HW_OG_PROTO"], "--pointer-width",
                str(8 * m.ptr), "--type", m.classes[root_cls].name, "--base", str(base), "--max-image-bytes", str(max_image)]
        try:
            got = ("ok", run_heapwire(args, wire))
        except Rejected as e:
            got = (e.kind, e.offset)
        assert got == want, f"{ctx}: CPU engine {got[0]} {got[1] if got[0] != 'ok' else ''}, model {want[0]} {want[1] if want[0] != 'ok' else ''}"
        self.cpu_checked += 1


def load_model():
    m = OgModel(hwsc.read(os.environ["HW_OG_HWSC"]))
    m.check_layout()
    return m


async def start(dut, name):
    rng = random.Random(seed_for(name))
    h = Host(dut, load_model(), rng)
    await h.setup()
    return h


def roots(m):
    """Classes a decode may ask for (those with a concrete class at or below them)."""
    return [c.index for c in m.classes if any(m.is_sub(x.index, c.index) and x.type_id != hwsc.NONE for x in m.classes)]


def random_base(rng, ptr):
    return rng.choice([0, 8, 0x1000, rng.randrange(0, 1 << 20) * 8, (rng.getrandbits(29 if ptr == 4 else 61)) * 8])


SCALE = 5 if thorough() else 1

# --------------------------------------------------------------------------- tests


@cocotb.test()
async def test_expression_trees(dut):
    """The paper's tree, the scaled tree for several n, random expression trees."""
    h = await start(dut, "expr")
    m, rng = h.m, h.rng
    if "expr.Node" not in m.by_name:
        return
    node = m.by_name["expr.Node"]
    paper = og_model.serialize(m, og_model.paper_tree(m))
    assert len(paper) == 54
    assert await h.check("paper", paper, node, base=0x10000) == "ok"
    most = ((1 << OBJ_BITS) - 1) // 2  # 2n+1 objects must fit the object-pointer table
    ns = [1, 2, 3, 7, 8, 31, 127, most] + ([rng.randrange(1, most + 1) for _ in range(4)] if thorough() else [])
    for n in ns:
        w = og_model.serialize(m, og_model.chain(m, n))
        assert len(w) == 21 * n + 12
        assert await h.check(f"chain {n}", w, node, base=random_base(rng, m.ptr)) == "ok"
        await h.idle(rng.randrange(4))
    for k in range(12 * SCALE):
        w = og_model.serialize(m, og_model.expr_tree(m, rng, rng.randrange(0, 40)))
        assert await h.check(f"tree {k}", w, node, base=random_base(rng, m.ptr)) == "ok"
        await h.idle(rng.randrange(3))
    dut._log.info("expression trees: %d vectors, %d checked against the CPU engine", len(ns) + 1 + 12 * SCALE, h.cpu_checked)


@cocotb.test()
async def test_random_graphs(dut):
    """Random graphs (prefix-order serialized and raw object lists) of every root class,
    with random bases, idle gaps, header-register writes and resets between decodes."""
    h = await start(dut, "graphs")
    m, rng = h.m, h.rng
    verdicts = Counter()
    for k in range(60 * SCALE):
        root = rng.choice(roots(m))
        if rng.random() < 0.5:
            w = og_model.serialize(m, og_model.random_graph(m, rng, root))
        else:
            w = og_model.raw_graph(m, rng, root)
        v = await h.check(f"graph {k}", w, root, base=random_base(rng, m.ptr))
        verdicts[v] += 1
        r = rng.random()
        if r < 0.15:
            await h.reset(rng.randrange(1, 4))
        elif r < 0.4:
            cls = rng.sample(range(len(m.classes)), rng.randrange(1, len(m.classes) + 1))
            await h.write_regs({c: rng.getrandbits(64) for c in cls})
        await h.idle(rng.choice([0, 0, 1, 2, 7]))
    dut._log.info("random graphs: %s; %d checked against the CPU engine", verdicts, h.cpu_checked)
    assert verdicts.get("ok", 0) >= 20 * SCALE, verdicts


@cocotb.test()
async def test_must_fail(dut):
    """Mutated graphs (truncated, trailing bytes, bad counts, type ids, references, flips)
    and hand-made error cases: same error code and err_offset as the model and the CPU."""
    h = await start(dut, "fail")
    m, rng = h.m, h.rng
    rs = roots(m)
    kinds = {}
    for k in range(20 * SCALE):
        root = rng.choice(rs)
        w = og_model.serialize(m, og_model.random_graph(m, rng, root, n_max=20))
        for label, mw in og_model.mutants(m, rng, w):
            v = await h.check(f"{label} of graph {k}", mw, root, base=random_base(rng, m.ptr))
            kinds[v] = kinds.get(v, 0) + 1
            await h.idle(rng.randrange(3))
    root = rs[0]
    w = og_model.serialize(m, og_model.random_graph(m, rng, root, n_max=10))
    size = len(m.decode(w, root, 8)[1])
    for label, wire, base, max_image in [
        ("empty", b"", 0, 1 << 30),
        ("3 bytes", b"\x00\x00\x00", 0, 1 << 30),
        ("zero objects", b"\x00\x00\x00\x00", 0, 1 << 30),
        ("zero objects + 1", b"\x00\x00\x00\x00\x00", 0, 1 << 30),
        ("count too large", b"\x02\x00\x00\x00" + bytes(4), 0, 1 << 30),
        ("misaligned base", w, 4, 1 << 30),
        ("misaligned base 2", w, 0x1001, 1 << 30),
        ("max_image = size", w, 8, size),
        ("max_image = size - 1", w, 8, size - 1),
        ("max_image = 0", w, 8, 0),
        ("base near 4 GiB", w, (1 << 32) - size, 1 << 30),
        ("base past 4 GiB - size", w, (1 << 32) - size + 8, 1 << 30),
        ("base 2^40", w, 1 << 40, 1 << 30),
    ]:
        v = await h.check(label, wire, root, base, max_image)
        kinds[v] = kinds.get(v, 0) + 1
    # every class as the root type of every other concrete class's object
    for c in m.classes:
        if c.type_id == hwsc.NONE:
            continue
        wire = og_model.serialize(m, og_model.Obj(c.index))  # one object, members zero / null
        for r in rs:
            v = await h.check(f"{c.name} as {m.classes[r].name}", wire, r, base=8)
            kinds[v] = kinds.get(v, 0) + 1
    dut._log.info("must-fail: %s; %d checked against the CPU engine", kinds, h.cpu_checked)
    for k in ("truncated", "trailing_bytes", "count_too_large", "unknown_type", "bad_reference", "root_type", "bad_base",
              "image_too_large"):
        assert kinds.get(k, 0) > 0, f"no {k} vector: {kinds}"
    if any(mm[5] is not None and any(not m.is_sub(x.index, mm[5]) and x.type_id != hwsc.NONE for x in m.classes)
           for c in m.classes for mm in c.wire_members if hwsc.is_message(mm[1])):
        assert kinds.get("reference_type", 0) > 0, f"no reference_type vector: {kinds}"


@cocotb.test()
async def test_capacity(dut):
    """More objects than the object-pointer table holds: `capacity` (the core's own error;
    the CPU engine accepts). The model says what the CPU says; the core must say capacity."""
    h = await start(dut, "capacity")
    m, rng = h.m, h.rng
    small = min((c for c in m.classes if c.type_id != hwsc.NONE), key=lambda c: c.wire_size)
    n = (1 << OBJ_BITS) + 1
    wire = struct.pack("<I", n) + struct.pack("<I", small.type_id) * n + bytes(small.wire_size * n)
    root = next(r for r in roots(m) if m.is_sub(small.index, r))
    got = await h.run(wire, root, 8, 1 << 30)
    assert got[0] == "capacity", f"{n} objects with a {1 << OBJ_BITS}-entry table: {got}"
    # the core is still usable afterwards
    w = og_model.serialize(m, og_model.Obj(small.index))
    assert await h.check("after capacity", w, root, base=8) == "ok"


# --------------------------------------------------------------------------- pytest entry

CONFIGS = {
    # name: (schema, pointer width, IN_WIDTH, OUT_WIDTH, ECP5 block RAM cells)
    "expr64": (EXPR, 64, 64, 256, False),
    "expr32": (EXPR, 32, 32, 64, False),
    "zoo64": (ZOO, 64, 128, 128, False),
    "zoo32": (ZOO, 32, 64, 256, False),
    # the object-pointer table as instantiated for ECP5 synthesis (hw_sdp_ram with
    # HEAPWIRE_ECP5_BRAM, on the DP16KD cell model: x on a read of a word being written)
    "expr64_ecp5": (EXPR, 64, 64, 256, True),
}
ENGINE = engine_files("hw_og_core")   # hand-written rtl/ files of the core


def _build_and_test(cfg, testcase=None):
    proto, pw, in_w, out_w, ecp5 = CONFIGS[cfg]
    gen, sources = generated_core(TB_DIR, cfg, proto, ["--pointer-width", str(pw)], ENGINE, "_og_core")
    cells, defines = ecp5_bram(ecp5)
    params = {"IN_WIDTH": in_w, "IN_ADDR_WIDTH": 12, "OUT_WIDTH": out_w, "OUT_ADDR_WIDTH": 12, "OBJ_BITS": OBJ_BITS}
    env = {"HW_OG_HWSC": str(gen / f"{proto.stem}.hwsc"), "HW_OG_PROTO": str(proto), "HW_OG_CFG": cfg}
    run_cocotb(TB_DIR, "heapwire_og_core", sources + cells, cfg, params, testcase=testcase, extra_env=env,
               defines=defines)


@pytest.mark.parametrize("cfg", list(CONFIGS))
def test_hw_og_core(cfg):
    _build_and_test(cfg)


if __name__ == "__main__":
    _build_and_test("expr64")

"""cocotb testbench for the protobuf core (rtl/hw_pb_core.v inside the generated wrapper
heapwire_core), cocotb 2.x on Icarus Verilog.

The pytest entry compiles a schema of the differential suite with the current CLI
(`heapwire compile --rtl`; the engine files are then refreshed from rtl/, so the working
tree's engine is what runs) and runs the cocotb tests below on heapwire_core with memory
sizes derived as the Rust driver derives them (crates/sim/src/protobuf.rs `params`: no
input up to MAX_LEN bytes can hit `capacity`):
  * scalars3.proto (proto3: every scalar kind, repeated packed/unpacked, maps, oneofs,
    recursion), 64-bit pointers, 64-bit input and output words;
  * proto2.proto (groups, closed enums, required, defaults, maps of closed enums) with
    header words, 32-bit input / 128-bit output words, the second output write port
    unused (OUT2_WR 0);
  * scalars3.proto with 32-bit pointers, 128-bit input / 256-bit output words;
  * proto2.proto with the core's ONE_PASS parameter 0 (always the two passes), 64/256;
  * scalars3.proto on the build with run-time-loaded tables (TABLES=1), 64/256: the host
    loads `<stem>_core_tables.gen.hex` through tbl_wr_* first; test_loaded_tables checks the
    refusal before a load and one running core serving proto2.proto and scalars3.proto in
    turn. In CI this config runs a third of the messages (HW_TB_THOROUGH=1: all, 5x);
  * scalars3.proto with the synthesized build's instance and slot memories (INST_BITS 4,
    CNT_BITS 5, ST_BITS 5), 64/64: test_small_memories alone (where `capacity` begins).

The testbench is the host (tbutil.CoreHost): input memory with one cycle of read latency
and junk after the input, output memory filled with 0xA5 with byte-enabled writes and a
read-first read port (and a second write port on its side), random idle gaps, resets between some decodes, type-register
writes. Messages come from the official `protobuf` package (the differential suite's
seeded generator, tests/differential/hwdiff/gen.py) and mutations of them
(hwdiff/mutate.py: truncation, bad lengths and wire types, over-long varints, field 0,
bad UTF-8, group mismatches, deep nesting...). The oracle is the CPU engine
(`heapwire decode`): the same image bytes, or the same error kind (tbutil.error_kinds)
and err_offset as its `<kind> at byte <offset>`. For generated messages the CPU engine's
`--json` is also compared with the official library's MessageToJson.
Knobs: HW_TB_SEED, HW_TB_THOROUGH=1 (about 5x more messages), HW_TB_QUICK=1 (half the
messages: scripts/test.sh, CI).
"""

import os
import random
import sys
from collections import Counter
from pathlib import Path

import pytest

import cocotb

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # rtl/tb (tbutil, hwsc) when run as a script
import hwsc
from tbutil import (REPO, CoreHost, Rejected, compile_schema, engine_files, error_kinds, first_difference, generated_core, run_cocotb,
                    quick, run_heapwire, save_failing, seed_for, thorough)

TB_DIR = Path(__file__).resolve().parent
DIFF = REPO / "tests" / "differential"
sys.path.insert(0, str(DIFF))
from hwdiff import gen as hwgen, mutate as hwmut, schemas as hwschemas  # noqa: E402
from hwdiff.runner import varint  # noqa: E402

ERROR_KINDS = error_kinds("hw_pb_core")
MAX_LEN = 2048  # longest input a build is sized for (less when the memories would get big, see max_len)
MAX_DEPTH = 100
SCALE = 5 if thorough() else 1
# the RAM build (TABLES=1) in CI: a third of the messages (its CI time stays under ~40 s)
LIGHT = bool(os.environ.get("HW_PB_TABLES")) and not thorough()


def count(n):
    """How many of a test's n cases (x SCALE) this build runs (HW_TB_QUICK: half)."""
    if LIGHT:
        return max(3, n // 3)
    return max(3, n // 2) if quick() else n * SCALE


def log2_ceil(v):
    return 0 if v <= 1 else (v - 1).bit_length()


def max_len(s: hwsc.Schema):
    """The longest input (at most MAX_LEN) whose count and state memories stay at 2^14
    entries: Icarus Verilog's compile time grows much faster than those memories (15 s
    at 2^15 entries, 90 s at 2^16)."""
    n = MAX_LEN
    while n > 256 and max(sizes(s, 64, 64, n)[k] for k in ("CNT_BITS", "ST_BITS")) > 14:
        n -= 64
    return n


def sizes(s: hwsc.Schema, in_w, out_w, n):
    """Core parameters that never overflow for an n-byte input (crates/sim/src/protobuf.rs
    sizes_for, with the largest message as the root)."""
    k = max([((m.size + 7) & ~7) // 2 + 8 for m in s.messages] + [16])
    img = max((m.size + 7) & ~7 for m in s.messages) + n * k + 64
    inst = n // 2 + 2
    max_nc = max([sum(f.repeated for f in m.fields) + 1 for m in s.messages] + [1])
    max_ns = max([sum(hwsc.is_message(f.kind) and not f.repeated for f in m.fields) + len(m.oneofs) for m in s.messages] + [1])
    ib = max(log2_ceil(inst), 12)
    return {"IN_WIDTH": in_w, "IN_ADDR_WIDTH": max(log2_ceil(-(-n // (in_w // 8)) + 1), 10),
            "OUT_WIDTH": out_w, "OUT_ADDR_WIDTH": max(log2_ceil(-(-img // (out_w // 8))), 10),
            "MAX_DEPTH": MAX_DEPTH, "INST_BITS": ib, "CNT_BITS": max(log2_ceil(inst * max_nc), 13),
            "ST_BITS": max(log2_ceil(inst * max_ns), 13), "DROP_BITS": ib}


# --------------------------------------------------------------------------- host driver


class Host(CoreHost):
    # every request checks that the memory ports do not depend on start / the controls in
    # the same cycle (tbutil.CoreHost.start_view)
    start_view = "check"

    def __init__(self, dut, rng):
        super().__init__(dut, rng)
        self.s = hwsc.read(os.environ["HW_PB_HWSC"])
        self.cli = ["--schema", os.environ["HW_PB_PROTO"], "-I", str(hwschemas.SCHEMA_DIR),
                    *os.environ.get("HW_PB_OPTS", "").split()]
        self.stats = Counter()

    async def setup(self):
        await super().setup(["root_msg", "type_wr_en", "type_wr_idx", "type_wr_data",
                             "table_load", "tbl_wr_en", "tbl_wr_addr", "tbl_wr_data"])
        if os.environ.get("HW_PB_TABLES"):
            await self.load_tables(os.environ["HW_PB_TABLES"])

    async def load_tables(self, path):
        """Writes a table image (`compile --rtl`'s <stem>_core_tables.gen.hex: {address,
        data} words) through tbl_wr_* while table_load is high; returns the cycles taken."""
        from cocotb.triggers import RisingEdge

        words = [int(line, 16) for line in Path(path).read_text().splitlines() if line and not line.startswith("//")]
        d = self.dut
        await RisingEdge(d.clk)
        d.table_load.value = 1
        cycles = 1
        for w in words:
            await RisingEdge(d.clk)
            d.tbl_wr_en.value, d.tbl_wr_addr.value, d.tbl_wr_data.value = 1, w >> 64, w & (1 << 64) - 1
            cycles += 1
        await RisingEdge(d.clk)
        d.tbl_wr_en.value, d.table_load.value = 0, 0
        d.tbl_wr_addr.value, d.tbl_wr_data.value = self.rng.getrandbits(24), self.rng.getrandbits(64)
        await RisingEdge(d.clk)
        await RisingEdge(d.clk)
        assert int(d.tables_ok.value) == 1, f"tables_ok low after loading {path}"
        return cycles + 2

    async def write_reg(self, idx, value):
        from cocotb.triggers import RisingEdge

        d = self.dut
        await RisingEdge(d.clk)
        d.type_wr_en.value, d.type_wr_idx.value, d.type_wr_data.value = 1, idx, value
        await RisingEdge(d.clk)
        d.type_wr_en.value = 0
        d.type_wr_idx.value, d.type_wr_data.value = self.rng.getrandbits(16), self.rng.getrandbits(64)

    async def run(self, data, msg_idx, base):
        code, off, size, _, omem = await self.run_core(
            data, dict(in_len=len(data), root_msg=msg_idx, base=base), 100000 + 400 * len(data))
        if code:
            assert code in ERROR_KINDS, f"error code {code}"
            return ERROR_KINDS[code], off
        return "ok", self.image(omem, size)

    def cpu(self, data, type_name, base):
        try:
            return "ok", run_heapwire(["decode", *self.cli, "--type", type_name, "--base", str(base)], data)
        except Rejected as e:
            return e.kind, e.offset

    async def check(self, label, data, type_name, base):
        mi = self.s.message_index(type_name)
        want = self.cpu(data, type_name, base)

        def ctx():
            path = save_failing(f"{os.environ.get('HW_PB_CFG', 'pb')}-{label}", data)
            return f"{label}: {type_name}, {len(data)} bytes {data[:40].hex()}{'...' if len(data) > 40 else ''}, base {base:#x} (input saved as {path})"

        try:
            got = await self.run(data, mi, base)
        except AssertionError as e:  # the host's checks (writes past the image, x bits, a hang)
            raise AssertionError(f"{ctx()}: {e}") from None
        if got != want:
            ctx = ctx()
            if want[0] == "ok" and got[0] == "ok":
                raise AssertionError(f"{ctx}: {first_difference(got[1], want[1])}")
            raise AssertionError(f"{ctx}: core {got[0]} {got[1] if got[0] != 'ok' else ''}, CPU engine {want[0]} {want[1] if want[0] != 'ok' else ''}")
        self.stats[want[0]] += 1
        return want


def readers(s: hwsc.Schema):
    proto = Path(os.environ["HW_PB_PROTO"]).name
    names = {m.full_name for m in s.messages}
    return [c.reader for c in hwschemas.CASES if c.schema == proto and c.reader == c.writer and c.reader in names]


def random_base(rng, s):
    hi = 28 if s.ptr == 4 else 40
    return rng.choice([0, 8, 0x1000, rng.getrandbits(hi) * 8])


def message(g, type_name):
    """A generated message of at most the build's input length: (official message, bytes),
    or (None, None) when 30 tries were all longer."""
    limit = int(os.environ["HW_PB_MAXLEN"])
    for _ in range(30):
        m = g.message(type_name)
        b = m.SerializePartialToString()  # required fields may be missing (not enforced)
        if len(b) <= limit:
            return m, b
    return None, None


async def start(dut, name):
    h = Host(dut, random.Random(seed_for(name)))
    await h.setup()
    return h


# --------------------------------------------------------------------------- tests


@cocotb.test()
async def test_generated_messages(dut):
    """Random valid messages of every reader type; images identical to the CPU engine's;
    the CPU engine's JSON equal to the official library's."""
    h = await start(dut, "valid")
    rng = h.rng
    g = hwgen.Gen(seed_for("valid-gen"), huge_prob=0.0)
    from hwdiff import harness, oracle
    types = readers(h.s)
    assert types, "no reader types for this schema"
    n = count(25)
    for k in range(n):
        t = types[k % len(types)]
        msg, data = message(g, t)
        if msg is None:
            continue
        want = await h.check(f"msg{k}", data, t, random_base(rng, h.s))
        assert want[0] == "ok", f"msg{k}: a generated {t} was rejected by the CPU engine: {want}"
        text = run_heapwire(["decode", *h.cli, "--type", t, "--json"], data).decode()
        diff = harness.compare_json(oracle.official_json(msg), text)
        assert diff is None, f"msg{k} {t}: heapwire --json vs MessageToJson: {diff}"
        if rng.random() < 0.1:
            await h.reset(rng.randrange(1, 4))
        await h.idle(rng.choice([0, 0, 1, 3]))
    dut._log.info("generated messages: %s", dict(h.stats))
    assert h.stats["ok"] >= n * 4 // 5, f"only {h.stats['ok']} of {n} generated messages fit the build and were checked"


@cocotb.test()
async def test_mutated_messages(dut):
    """Mutations of generated messages (most must fail): the same verdict, error kind and
    err_offset as the CPU engine, or the same image."""
    h = await start(dut, "mutants")
    rng = h.rng
    g = hwgen.Gen(seed_for("mutants-gen"), huge_prob=0.0)
    types = readers(h.s)
    ops = Counter()
    n = count(40)
    for k in range(n):
        t = types[k % len(types)]
        _, data = message(g, t)
        _, other = message(g, t)
        if data is None or other is None:
            continue
        mut = hwmut.Mutator(rng, [fd.number for fd in hwschemas.descriptor(t).fields])
        op, bad = mut.mutate(data, other)
        if len(bad) > int(os.environ["HW_PB_MAXLEN"]):
            continue
        ops[op.split("@")[0]] += 1
        await h.check(f"mut{k}-{op}", bad, t, random_base(rng, h.s))
        if rng.random() < 0.1:
            await h.reset(rng.randrange(1, 4))
        await h.idle(rng.choice([0, 0, 1, 2]))
    dut._log.info("mutants: verdicts %s, operators %s", dict(h.stats), dict(ops))
    assert sum(h.stats.values()) >= n * 3 // 4, f"only {sum(h.stats.values())} of {n} mutants checked"
    assert sum(v for k, v in h.stats.items() if k != "ok") >= n // 8, f"too few rejections: {dict(h.stats)}"


@cocotb.test()
async def test_corner_cases(dut):
    """Empty input, misaligned bases, field 0, bad wire types, over-long varints and tags,
    truncated lengths, nesting just below and above MAX_DEPTH."""
    h = await start(dut, "corners")
    rng = h.rng
    types = readers(h.s)
    t = types[0]
    g = hwgen.Gen(seed_for("corners-gen"), huge_prob=0.0)
    _, data = message(g, t)
    data = data or b""
    cases = [
        ("empty", b"", 0), ("empty at 8", b"", 8), ("misaligned base", data, 4), ("misaligned base 2", data, 0x1003),
        ("field 0", b"\x00\x00", 0), ("field 0 varint", b"\x02\x00", 0), ("wire type 6", b"\x0e", 0),
        ("wire type 7", b"\x0f\x00", 0), ("lone end group", b"\x0c", 0), ("tag 6 bytes", b"\x80\x80\x80\x80\x80\x01", 0),
        ("tag above 2^32", b"\x80\x80\x80\x80\x10\x00", 0), ("varint 11 bytes", b"\x08" + b"\xff" * 10 + b"\x01", 0),
        ("varint 10 bytes", b"\x08" + b"\xff" * 9 + b"\x01", 0), ("truncated varint", b"\x08\xff", 0),
        ("length past end", b"\x7a\x05ab", 0), ("unknown length past end", b"\xfa\x07\x05ab", 0),
        ("unknown fixed64 cut", b"\xf9\x07\x01\x02", 0), ("group never closed", b"\xfb\x07\x08\x01", 0),
        ("big base", data, (1 << 32) - 8), ("huge base", data, (1 << 63)),
    ]
    for label, d, base in cases:
        await h.check(label, d, t, base)
        await h.idle(rng.randrange(3))
    # two unknown groups with 5-byte tags nested in a repeated sub-message (hung the core
    # with IN_WIDTH=32 at 3a19ea4)
    if "hw.p2.Node" in types:
        await h.check("nested 5-byte-tag groups", b"\x1a\x14" + bytes.fromhex("fbffffff0f") * 2 + bytes.fromhex("fcffffff0f") * 2,
                      "hw.p2.Node", 0)
    # map entries holding an unknown field go whole to the unknown fields: the one pass
    # sized the map with them and wrote past the image before falling back (CI, d194444)
    if "hw.p3.Maps" in types:
        entry = b"\x0a\x01a" + bytes.fromhex("d084ea90048080808008") + b"\x12\x01b"
        for label, d in [("map entry with an unknown varint", b"\x72" + bytes([len(entry)]) + entry),
                         ("map entries around one with an unknown", b"\x72\x06\x0a\x01x\x12\x01y\x72" + bytes([len(entry)])
                          + entry + b"\x72\x06\x0a\x01z\x12\x01w"),
                         ("map entry opening with an unknown", bytes.fromhex("82010e4201000805110000000000000000"))]:
            await h.check(label, d, "hw.p3.Maps", 0x1000)
        # the one pass enters every map entry it scans and gives up on one the two passes
        # drop, before it sizes the map; an entry that ends the instance where the scan
        # began is written from its first field (S_MERET) without going back to its tag
        ok = b"\x72\x06\x0a\x01x\x12\x01y"
        for label, d in [("map entry, value of the wrong wire type", b"\x72\x05\x0a\x01a\x10\x05"),
                         ("map entries, the last one's value of the wrong wire type", ok + b"\x72\x05\x0a\x01a\x10\x05"),
                         ("map entry, an unknown after its value", b"\x72\x08\x0a\x01a\x12\x01b\x18\x01"),
                         ("map entry, its key running past it", b"\x72\x04\x0a\x05abcd\x72\x00"),
                         ("map entry, its value running past it", b"\x72\x05\x0a\x01a\x12\x02b" + ok),
                         ("map entry, empty", b"\x72\x00"), ("map entries, the last one empty", ok + b"\x72\x00"),
                         ("map entry, its value only", b"\x72\x03\x12\x01b"),
                         ("map entry, its key twice", b"\x72\x09\x0a\x01a\x0a\x01c\x12\x01b"),
                         ("map entry, its message value holding an unknown", b"\x62\x08\x0a\x01a\x12\x03\xa0\x06\x01"),
                         ("map entry ending the instance, a field before it", b"\x08\x01" + ok)]:
            await h.check(label, d, "hw.p3.Maps", 0x1000)
    if "hw.p3.Inner" in types:
        # a string ending the message: its UTF-8 verdict comes after the end of the pass;
        # the core goes to S_DONE with it on its way and holds done low when it is bad
        # (the short ones: Inner's small struct is zeroed by then; the long ones: a copy)
        long = b"a" * 40
        for label, d in [("last string invalid", b"\x08\x01\x12\x02\xc3\x28"), ("last string cut mid-character", b"\x08\x01\x12\x01\xc3"),
                         ("last string valid", b"\x08\x01\x12\x02\xc3\xa9"), ("invalid string, then the last one valid", b"\x12\x01\xff\x12\x01a"),
                         ("a string alone, invalid", b"\x12\x01\xff"), ("long last string, invalid at its end", b"\x08\x01\x12\x29" + long + b"\xff"),
                         ("long last string, valid", b"\x12\x28" + long)]:
            await h.check(label, d, "hw.p3.Inner", 0x1000)
    # the one pass's scan begun at a repeated string or message returns to that field's
    # payload (S_SCRET, the field's row kept through the scan) instead of its tag: after
    # other fields, packed runs (counted from the row shown where the run is entered), a
    # map entry, or a string that is the instance's last field
    scret = {"hw.p3.Repeated": [("scan from a string, a packed run, the same string last", b"\x72\x01a\x1a\x03\x01\x02\x03\x72\x01b"),
                                ("scan from a message, a packed run last", b"\x8a\x01\x02\x08\x05\x1a\x02\x07\x08"),
                                ("scan from a string, one packed field twice", b"\x72\x01a\x1a\x01\x01\x1a\x02\x02\x03\x72\x00\x28\x09"),
                                ("scan from a message, packed runs of two fields", b"\x8a\x01\x00\x22\x02\x05\x06\x1a\x01\x04\x8a\x01\x02\x08\x03"),
                                ("scan from a string, a message element invalid", b"\x72\x01a\x8a\x01\x03\x12\x01\xff\x18\x01")],
             "hw.p3.Tree": [("scan from a message holding scans", b"\x1a\x04\x1a\x02\x08\x01\x1a\x00\x12\x01x\x08\x07")],
             "hw.p3.Everything": [("scan from a message, a map entry last", b"\x42\x02\x08\x01\x4a\x05\x0a\x01k\x12\x00")]}
    seen = Counter()
    watcher = cocotb.start_soon(watch_states(dut, seen, {S_SCRET: "scret", S_BAIL: "bail"}))
    for t2, vecs in scret.items():
        if t2 in types:
            for label, d in vecs:
                before = dict(seen)
                if (await h.check(label, d, t2, 0x1000))[0] == "ok":
                    # (a wrong step there makes the one pass give up, the two passes then
                    # getting the image right)
                    assert seen["bail"] == before.get("bail", 0) and seen["scret"] > before.get("scret", 0), \
                        f"{label}: the one pass gave up, or its scan did not return through S_SCRET: {dict(seen)}"
    watcher.cancel()
    if "hw.p3.Maps" in types:
        for label, d in [("map entry ending the message, invalid value", b"\x72\x06\x0a\x01k\x12\x01\xff"),
                         ("map entry ending the message, invalid key", b"\x72\x06\x0a\x01\xe0\x12\x01v")]:
            await h.check(label, d, "hw.p3.Maps", 0x1000)
    if "hw.p2.Basic" in types:
        # closed enums: an unknown value drops the entry (the one pass gives up on any)
        for label, d in [("closed-enum map entry, unknown value", b"\xa2\x03\x05\x0a\x01k\x10\x63"),
                         ("closed-enum map entry, known value", b"\xa2\x03\x05\x0a\x01k\x10\x01"),
                         ("closed-enum map entry, value of the wrong wire type", b"\xa2\x03\x08\x0a\x01k\x15\x01\x00\x00\x00")]:
            await h.check(label, d, "hw.p2.Basic", 0x1000)
    # nesting around MAX_DEPTH: unknown groups nested n deep; a recursive message field n deep
    # (with 200 bytes innermost, a string or an unknown field, every length prefix takes two
    # bytes; with 5-byte (padded) tags and prefixes many are not whole in the window: the
    # sub-message steps with and without the length in the window)
    for n in (MAX_DEPTH - 1, MAX_DEPTH, MAX_DEPTH + 1, MAX_DEPTH + 2):
        await h.check(f"groups {n} deep", hwmut.nested_groups(15, n), t, 0)
    nested = 0
    for rec, num, pad in [("hw.p3.Tree", 4, b"\x12\xc8\x01" + b"x" * 200), ("hw.p2.Node", 2, b"\x7a\xc8\x01" + b"y" * 200)]:
        if rec in types:
            for n in (MAX_DEPTH - 1, MAX_DEPTH, MAX_DEPTH + 1):
                for inner, lw in ((b"", 0), (pad, 0), (pad, 5)):
                    await h.check(f"{rec} {n} deep, {len(inner)} bytes innermost, tag and length width {lw}",
                                  hwmut.nested_messages(num, n, inner, lw), rec, 0)
                    nested += 1
    assert nested > 0, "no recursive message type to nest"
    # hw.p2.Node -> group Chain (5) -> Node (Chain.node, 2) -> ...: alternating known groups
    # and sub-messages, the first level a group or a sub-message (Node.next, also 2), so
    # the level past MAX_DEPTH is a group in one of the two chains (S_MSG2's depth check)
    if "hw.p2.Node" in types:
        group_depth = 0
        for first_group in (True, False):
            for n in (MAX_DEPTH - 1, MAX_DEPTH, MAX_DEPTH + 1, MAX_DEPTH + 2):
                d = b"\x08\x07"
                for level in range(n, 0, -1):
                    d = hwmut.group(5, d) if (level % 2 == 1) == first_group else hwmut.tag(2, 2) + hwmut.varint(len(d)) + d
                kind, off = await h.check(f"hw.p2.Node groups and sub-messages {n} deep, group first {first_group}",
                                          d, "hw.p2.Node", 0)
                group_depth += kind != "ok" and d[off] == hwmut.tag(5, 3)[0]
        assert group_depth > 0, "the depth limit was not met at a group"
    dut._log.info("corner cases: %s", dict(h.stats))
    assert sum(h.stats.values()) >= len(cases) + 4 + nested, f"only {sum(h.stats.values())} corner cases checked"


def packed_bytes(rng, n, cut=False):
    """n bytes of a packed varint run: varints of 1 to 9 bytes (mostly short); cut: its last
    byte has bit 7 set (the run ends inside a varint)."""
    out = bytearray()
    while len(out) < n - cut:
        k = min(rng.choice([1, 1, 1, 2, 2, 3, 5, 9]), n - cut - len(out))
        out += bytes(0x80 | rng.randrange(128) for _ in range(k - 1)) + bytes([rng.randrange(1, 128)])
    return bytes(out) + (bytes([0x80 | rng.randrange(128)]) if cut else b"")


# hw_pb_core's states and the S_SCANPK cases test_packed_runs must reach
S_SCRET, S_SCAN, S_SCANPK, S_BAIL = 32, 58, 59, 62
PACKED_CASES = ("several windows", "ends at the window's last byte", "ends at a full window's last byte",
                "ends inside a varint", "next field waits for the count")


async def watch_states(dut, seen, states):
    """Counts the cycles the core spends in the states of `states` (state -> name)."""
    from cocotb.triggers import ReadOnly, RisingEdge

    while True:
        await RisingEdge(dut.clk)
        await ReadOnly()
        try:
            st = int(dut.core.state_reg.value)
        except ValueError:  # x/z before the first reset
            continue
        if st in states:
            seen[states[st]] += 1


async def watch_packed(dut, seen):
    """Counts the one-pass packed-run scan's cases (PACKED_CASES) from the core's registers,
    and the cycles the one pass is given up ("bail")."""
    from cocotb.triggers import ReadOnly, RisingEdge

    c = dut.core
    while True:
        await RisingEdge(dut.clk)
        await ReadOnly()
        try:
            st = int(c.state_reg.value)
            if st == S_SCANPK:
                wav, lsat, last = int(c.win_avail.value), int(c.spk_lsat_reg.value), int(c.spk_last.value)
                if not (wav and lsat):
                    continue
                if int(c.spk_pend_reg.value):
                    seen["several windows"] += 1
                if last and int(c.win.value) >> (8 * lsat - 1) & 1:
                    seen["ends inside a varint"] += 1
                elif last and lsat == wav:
                    seen["ends at the window's last byte"] += 1
                    seen["ends at a full window's last byte"] += wav == 16
            elif st == S_SCAN and int(c.spk_pend_reg.value) and int(c.sc_step.value):
                seen["next field waits for the count"] += 1
            elif st == S_BAIL:
                seen["bail"] += 1
        except ValueError:  # x/z before the first reset
            pass


@cocotb.test()
async def test_packed_runs(dut):
    """Packed varint runs, which the one pass counts a window at a time (S_SCANPK): runs of
    1 to 48 bytes in one message (so runs span several windows and end at a window's last
    byte), each followed by another field, the same field's unpacked element or the next
    run, the last by the message's end; runs that end inside a varint (the scan gives up;
    the CPU engine rejects them). Images / rejections as the CPU engine's; with
    the one pass, every case of PACKED_CASES seen, and no valid vector given up to the two
    passes (a count the scan left short makes the write pass give up, S_NE0, and the two
    passes would still get the image right)."""
    h = await start(dut, "packed")
    rng = h.rng
    varints = {"int32", "int64", "uint32", "uint64", "sint32", "sint64"}
    found = [(t, f.number) for t in readers(h.s) for f in hwschemas.descriptor(t).fields
             if f.is_repeated and f.type in [getattr(f, "TYPE_" + k.upper()) for k in varints]]
    assert found, "no reader type with a repeated varint field"
    t, num = found[0]
    other = next(f.number for f in hwschemas.descriptor(t).fields if f.number != num and f.is_repeated
                 and f.type in [getattr(f, "TYPE_" + k.upper()) for k in varints])
    seen = Counter()
    watcher = cocotb.start_soon(watch_packed(dut, seen))
    run = lambda n, cut=False: varint(num << 3 | 2) + varint(n) + packed_bytes(rng, n, cut)  # noqa: E731
    unknown = lambda n: varint(1999 << 3 | 2) + varint(n) + bytes(rng.randrange(256) for _ in range(n))  # noqa: E731
    # after a run: another field, the same field's unpacked element, or the next run
    sep = lambda k: [varint(other << 3) + varint(rng.getrandbits(20)), varint(num << 3) + b"\x05", b""][k % 3]  # noqa: E731
    lengths = [1, 2, 3, 5, 8, 12, 15, 16, 17, 20, 24, 31, 32, 33, 40, 48]
    vectors = [
        ("runs of 1 to 48 bytes", b"".join(run(n) + sep(k) for k, n in enumerate(lengths))),
        ("a run of 16 bytes", run(16) + sep(0)),
        ("an unknown field, then runs", unknown(5) + b"".join(run(n) + sep(k) for k, n in enumerate([33, 17, 16, 9, 2]))),
        # runs of bytes 0b, each of which reads as a whole field (field 1, a group's start
        # tag): when a run's last cycle takes one byte, the input stage's guess at the field
        # after it is right, and that field is ready in the cycle that writes the run's count
        ("runs of 0b bytes", b"".join(varint(num << 3 | 2) + varint(n) + b"\x0b" * n + varint(other << 3) + b"\x07"
                                      for n in range(2, 26))),
        ("an empty run", run(0) + run(5)),
    ] + [(f"a run of {n} bytes cut in a varint", unknown(3 * k) * (k % 2) + run(n, cut=True) + [b"", varint(other << 3) + b"\x01"][k % 2])
         for k, n in enumerate([1, 9, 17, 33])]
    _, _, in_w, _, params = CONFIGS[os.environ["HW_PB_CFG"]]
    one_pass = params.get("ONE_PASS", 1)
    for label, data in vectors:
        assert len(data) <= int(os.environ["HW_PB_MAXLEN"]), f"{label}: {len(data)} bytes, over the build's input length"
        bails = seen["bail"]
        want = await h.check(label, data, t, random_base(rng, h.s))
        assert not (one_pass and want[0] == "ok" and seen["bail"] > bails), f"{label}: the one pass was given up ({data.hex()})"
        await h.idle(rng.randrange(2))
    watcher.cancel()
    dut._log.info("packed runs: %s; scan cases %s", dict(h.stats), dict(seen))
    assert sum(h.stats.values()) == len(vectors), f"only {sum(h.stats.values())} of {len(vectors)} packed-run vectors checked"
    if one_pass:
        # (a 32-bit input refills the window 4 bytes a cycle: a run never finds it full)
        missing = [c for c in PACKED_CASES if not seen[c] and not (c == "ends at a full window's last byte" and in_w == 32)]
        assert not missing, f"packed-run scan cases never reached: {missing} (seen {dict(seen)})"


# the builds test_back_to_back runs on (38 requests each, none over 256 bytes but mutants)
BACK_TO_BACK = ("scalars3_p32", "proto2_hdr")


@cocotb.test(skip=os.environ.get("HW_PB_CFG") not in BACK_TO_BACK)
async def test_back_to_back(dut):
    """Requests one after another on one running core, as crates/sim's Verilated device makes
    them: the next start 3 cycles after done, no reset between, and the memory ports served
    as that device samples them, before it evaluates its new start and controls
    (start_view "before"). Per reader type: a long message, then its first bytes and an
    empty input (bytes left from the request before would show), a request after a
    rejected one (S_ERR, also one rejected at its last byte) and after one the one pass gives
    up (S_BAIL: a sub-message field twice, a merge), shorter messages after longer ones; every
    image or rejection the CPU engine's."""
    h = await start(dut, "b2b")
    h.start_view = "before"
    rng = h.rng
    g = hwgen.Gen(seed_for("b2b-gen"), huge_prob=0.0)
    one_pass = CONFIGS[os.environ["HW_PB_CFG"]][4].get("ONE_PASS", 1)
    seen = Counter()
    watcher = cocotb.start_soon(watch_packed(dut, seen))
    after = Counter()
    prev = None
    for t in readers(h.s)[:2]:
        msgs = sorted((m for m in (message(g, t)[1] for _ in range(8)) if m), key=len)
        assert msgs, f"no generated {t} fits the build"
        # (long: the longest up to 256 bytes, several input words in few cycles)
        long, short = ([m for m in msgs if len(m) <= 256] or msgs[:1])[-1], msgs[0]
        _, other = message(g, t)
        mut = hwmut.Mutator(rng, [fd.number for fd in hwschemas.descriptor(t).fields])
        subs = [f.number for f in hwschemas.descriptor(t).fields
                if f.type == f.TYPE_MESSAGE and not f.is_repeated and f.containing_oneof is None]
        merge = b"".join(varint(subs[0] << 3 | 2) + b"\x00" for _ in range(2)) if subs else b""
        # two valid inputs of one length whose images differ (a core given the bytes of the
        # request before decodes the second as the first; stale bytes that do not decode
        # are no test: the one pass gives up and the two passes restart the reader)
        ints = [f.number for f in hwschemas.descriptor(t).fields if not f.is_repeated
                and f.type in (f.TYPE_INT32, f.TYPE_INT64, f.TYPE_UINT32, f.TYPE_UINT64)]
        one, two = [(varint(ints[0] << 3) + bytes([v]) if ints else b"") for v in (1, 2)]
        seq = [("long", long), ("its first 2 bytes", long[:2]), ("its first byte", long[:1]), ("empty", b""),
               ("its first 3 bytes", long[:3]), ("field 0", b"\x00\x00"), ("its first 2 bytes", long[:2]),
               ("a varint field", one), ("it with another value", two), ("long", long),
               ("long, its last byte cut", long[:-1]), ("short", short), ("a sub-message twice", merge),
               ("its first byte", long[:1]), ("a mutant", mut.mutate(long, other or short)[1]), ("short", short),
               ("a varint field", two), ("it with another value", one), ("empty", b"")]
        for k, (label, data) in enumerate(seq):
            if len(data) > int(os.environ["HW_PB_MAXLEN"]):
                continue
            bails = seen["bail"]
            want = await h.check(f"b2b-{t}-{k} {label}", data, t, random_base(rng, h.s))
            if prev is not None:
                after[prev] += 1
                after["shorter after longer"] += len(data) < prev_len
                after["the same length, another image"] += bool(data) and label == "it with another value"
            # (with the one pass, a rejection is given up to the two passes too)
            prev, prev_len = ("rejection" if want[0] != "ok" else "bail" if seen["bail"] > bails else "image"), len(data)
            await h.idle(3)
    watcher.cancel()
    dut._log.info("back to back: %s; requests after %s", dict(h.stats), dict(after))
    assert after["rejection"] >= 6 and after["image"] + after["bail"] >= 6 and after["shorter after longer"] >= 10 \
        and after["the same length, another image"] >= 2, dict(after)
    if one_pass:
        assert after["bail"] >= 1, f"no request after a one pass given up: {dict(after)}"


@cocotb.test()
async def test_type_registers(dut):
    """Header words come from the type registers: after writing a register, exactly the
    header words of that type change (none without header words: the image stays the CPU
    engine's); writing the reset value (the message index) back gives the CPU engine's
    image again."""
    h = await start(dut, "regs")
    rng = h.rng
    g = hwgen.Gen(seed_for("regs-gen"), huge_prob=0.0)
    pw = h.s.ptr
    checked = 0
    n = count(6)
    for k in range(n):
        t = rng.choice(readers(h.s))
        mi = h.s.message_index(t)
        _, data = message(g, t)
        if data is None:
            continue
        base = random_base(rng, h.s)
        value = rng.getrandbits(8 * pw) | 1 << (8 * pw - 1)  # never a message index
        await h.write_reg(mi, value)
        want = h.cpu(data, t, base)
        got = await h.run(data, mi, base)
        assert got[0] == want[0] == "ok", f"{t}: {got[0]} / CPU {want[0]}"
        g_img, w_img = got[1], want[1]
        assert len(g_img) == len(w_img), first_difference(g_img, w_img)
        if not h.s.header_words:
            assert g_img == w_img, f"{t}: a type register changed an image without header words: {first_difference(g_img, w_img)}"
            checked += 1
            continue
        assert g_img[:pw] == value.to_bytes(pw, "little"), f"{t}: root header word {g_img[:pw].hex()}, register {value:#x}"
        for i in range(0, len(w_img), 1):
            if g_img[i] != w_img[i]:
                j = i - i % pw
                assert int.from_bytes(w_img[j:j + pw], "little") == mi and g_img[j:j + pw] == value.to_bytes(pw, "little"), \
                    f"{t}: byte {i} differs and is not a header word of the type: {first_difference(g_img, w_img)}"
        await h.write_reg(mi, mi)  # back to the reset value (rst does not reset the registers)
        await h.check(f"register restored {k}", data, t, base)
        checked += 1
    dut._log.info("type registers: %d decodes checked", checked)
    assert checked >= n * 2 // 3, f"only {checked} of {n} type-register decodes checked"


@cocotb.test(skip=not os.environ.get("HW_PB_TABLES"))
async def test_loaded_tables(dut):
    """The RAM build (TABLES=1): after a load without a configuration word (the earlier
    tests loaded tables; rst keeps them) tables_ok is low and a start ends at once with
    `unsupported` at offset 0; then ONE running core serves another schema (proto2.proto: closed enums,
    groups; its tables loaded) and this one again (tables reloaded), each decode identical
    to the CPU engine's for that schema."""
    from cocotb.triggers import RisingEdge

    h = Host(dut, random.Random(seed_for("tables")))
    await CoreHost.setup(h, ["root_msg", "type_wr_en", "type_wr_idx", "type_wr_data",
                             "table_load", "tbl_wr_en", "tbl_wr_addr", "tbl_wr_data"])
    # a load of nothing: no configuration word
    await RisingEdge(dut.clk)
    dut.table_load.value = 1
    await RisingEdge(dut.clk)
    dut.table_load.value = 0
    await RisingEdge(dut.clk)
    await RisingEdge(dut.clk)
    assert int(dut.tables_ok.value) == 0, "tables_ok after a load without a configuration word"
    got = await h.run(b"\x08\x01", 0, 0)
    assert got == ("unsupported", 0), f"a start without loaded tables: {got}"
    # the other schema, then this one, on the same core
    this = (h.s, h.cli, os.environ["HW_PB_TABLES"])
    other = (hwsc.read(os.environ["HW_PB_HWSC2"]), ["--schema", os.environ["HW_PB_PROTO2"], "-I", str(hwschemas.SCHEMA_DIR)],
             os.environ["HW_PB_TABLES2"])
    checked = Counter()
    for round_, (s, cli, tables) in enumerate([other, this]):
        cycles = await h.load_tables(tables)
        dut._log.info("tables %s loaded in %d cycles", Path(tables).name, cycles)
        h.s, h.cli = s, cli
        os.environ["HW_PB_PROTO"] = cli[1]
        g = hwgen.Gen(seed_for(f"tables-gen{round_}"), huge_prob=0.0)
        types = readers(s)
        assert types, f"no reader types in {cli[1]}"
        for k in range(count(12)):
            t = types[k % len(types)]
            _, data = message(g, t)
            if data is None:
                continue
            if k % 3 == 2:
                _, other_msg = message(g, t)
                if other_msg is not None:
                    _, data = hwmut.Mutator(h.rng, [fd.number for fd in hwschemas.descriptor(t).fields]).mutate(data, other_msg)
                if len(data) > int(os.environ["HW_PB_MAXLEN"]):
                    continue
            verdict = await h.check(f"tables{round_}-{k}", data, t, random_base(h.rng, s))
            checked[(Path(cli[1]).name, verdict[0])] += 1
    dut._log.info("loaded tables: %s", dict(checked))
    for name in (Path(other[1][1]).name, Path(this[1][1]).name):
        assert sum(v for (n, _), v in checked.items() if n == name) >= count(12) * 2 // 3, f"too few decodes of {name}: {dict(checked)}"


@cocotb.test(skip=os.environ.get("HW_PB_CFG") != "scalars3_small")
async def test_small_memories(dut):
    """The instance, count and state memories of the synthesized build (INST_BITS 4,
    CNT_BITS 5, ST_BITS 5; this configuration runs this test only): a Tree with n empty
    children, n = 0..40. While its instances and slots fit, the CPU engine's image; from
    the first n that does not, `capacity` (the one divergence allowed) for every larger n."""
    h = await start(dut, "small")
    tree = "hw.p3.Tree"
    first_full, fitted = None, 0
    for n in range(41):
        data = b"\x1a\x00" * n             # children (field 3), each an empty Tree
        want = h.cpu(data, tree, 0)
        assert want[0] == "ok", f"{n} children: CPU engine {want}"
        got = await h.run(data, h.s.message_index(tree), 0)
        if got[0] == "capacity":
            first_full = n if first_full is None else first_full
            assert 0 <= got[1] < len(data) and got[1] % 2 == 0, f"{n} children: capacity at byte {got[1]}, not a tag"
        else:
            assert first_full is None, f"{n} children: {got[0]} after capacity at {first_full}"
            assert got == want, f"{n} children: {first_difference(got[1], want[1]) if got[0] == 'ok' else got}"
            fitted += 1
    # (16 instances: the root and at most 15 children, fewer when the slots run out first)
    assert first_full is not None and 2 <= first_full <= 15, f"capacity first at {first_full} children"
    dut._log.info("small memories: %d inputs fitted, capacity from %d children", fitted, first_full)


@cocotb.test(skip=not os.environ.get("HW_PB_REPLAY"))
async def test_replay(dut):
    """HW_PB_REPLAY=FILE:TYPE:BASE (e.g. a saved failing input): that one decode only."""
    path, type_name, base = os.environ["HW_PB_REPLAY"].rsplit(":", 2)
    h = await start(dut, "replay")
    await h.check("replay", Path(path).read_bytes(), type_name, int(base, 0))


# --------------------------------------------------------------------------- pytest entry

CONFIGS = {
    # name: (schema, compile options, IN_WIDTH, OUT_WIDTH, other core parameters)
    "scalars3": ("scalars3.proto", [], 64, 64, {}),
    "proto2_hdr": ("proto2.proto", ["--header-word"], 32, 128, {"OUT2_WR": 0}),
    "scalars3_p32": ("scalars3.proto", ["--pointer-width", "32"], 128, 256, {}),
    "proto2_twopass": ("proto2.proto", [], 64, 256, {"ONE_PASS": 0}),  # the two passes only
    "scalars3_ram": ("scalars3.proto", [], 64, 256, {"TABLES": 1}),  # run-time-loaded tables
    # the synthesized build's instance and slot memories: test_small_memories only
    "scalars3_small": ("scalars3.proto", [], 64, 64, {"INST_BITS": 4, "CNT_BITS": 5, "ST_BITS": 5, "DROP_BITS": 2}),
}


ENGINE = engine_files("hw_pb_core")   # hand-written rtl/ files


def _build_and_test(cfg, testcase=None, width=None):
    schema, opts, in_w, out_w, extra_params = CONFIGS[cfg]
    in_w, out_w = width or (in_w, out_w)
    proto = DIFF / "schemas" / schema
    gen, sources = generated_core(TB_DIR, cfg, proto, ["-I", str(DIFF / "schemas"), *opts], ENGINE)
    s = hwsc.read(gen / f"{proto.stem}.hwsc")
    n = max_len(s)
    env = {"HW_PB_HWSC": str(gen / f"{proto.stem}.hwsc"), "HW_PB_PROTO": str(proto), "HW_PB_OPTS": " ".join(opts),
           "HW_PB_CFG": cfg, "HW_PB_MAXLEN": str(n)}
    if extra_params.get("TABLES"):
        # the tables of this schema, and of proto2.proto for test_loaded_tables
        other = DIFF / "schemas" / "proto2.proto"
        gen2 = compile_schema(other, TB_DIR / "sim_build" / cfg / "gen2", extra=["-I", str(DIFF / "schemas")])
        env.update({"HW_PB_TABLES": str(gen / f"{proto.stem}_core_tables.gen.hex"), "HW_PB_PROTO2": str(other),
                    "HW_PB_HWSC2": str(gen2 / "proto2.hwsc"), "HW_PB_TABLES2": str(gen2 / "proto2_core_tables.gen.hex")})
        s2 = hwsc.read(gen2 / "proto2.hwsc")
        n = min(n, max_len(s2))
        env["HW_PB_MAXLEN"] = str(n)
        # memories for the larger of the two schemas
        params = {k: max(v, sizes(s2, in_w, out_w, n)[k]) for k, v in sizes(s, in_w, out_w, n).items()}
    else:
        params = sizes(s, in_w, out_w, n)
    run_cocotb(TB_DIR, "heapwire_core", sources, cfg, {**params, **extra_params}, testcase=testcase, extra_env=env)


@pytest.mark.parametrize("cfg", list(CONFIGS))
def test_hw_pb_core(cfg):
    _build_and_test(cfg, testcase="test_small_memories" if cfg == "scalars3_small" else None)


if __name__ == "__main__":
    # python3 test_hw_pb_core.py [CONFIG [IN_WIDTH OUT_WIDTH]]; with HW_PB_REPLAY set, only that input
    a = sys.argv[1:]
    _build_and_test(a[0] if a else "scalars3", "test_replay" if os.environ.get("HW_PB_REPLAY") else None,
                    (int(a[1]), int(a[2])) if len(a) > 2 else None)

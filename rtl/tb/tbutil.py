"""Helpers shared by the cocotb testbenches in rtl/tb/<module>/test_<module>.py.

* run_cocotb(): the cocotb runner block every suite needs (build with Icarus Verilog into
  tb/<module>/sim_build/<name>, run the cocotb tests of the module, fail the pytest test
  when any cocotb test failed);
* expect_param_error(): elaboration with a bad parameter must stop with its $error;
* seed_for() / thorough(): the HW_TB_SEED and HW_TB_THOROUGH knobs;
* heapwire_bin() / compile_schema() / generated_core(): the heapwire CLI the core
  testbenches use to generate the cores (`heapwire compile --rtl`) and as the CPU-engine
  oracle;
* error_kinds(): the kinds of a core's error-register codes, from the core's source.
"""

import os
import re
import subprocess
import sys
import zlib
from pathlib import Path

TB_ROOT = Path(__file__).resolve().parent
RTL_DIR = TB_ROOT.parent
REPO = RTL_DIR.parent


def seed_for(name: str) -> int:
    """Seed of a randomized test: HW_TB_SEED (default 12345) mixed with the test's name."""
    base = int(os.environ.get("HW_TB_SEED", "12345"))
    return base * 1000003 + sum(name.encode())


def thorough() -> bool:
    """HW_TB_THOROUGH=1: the randomized suites run several times more vectors."""
    return os.environ.get("HW_TB_THOROUGH", "") not in ("", "0")


def quick() -> bool:
    """HW_TB_QUICK=1 (scripts/test.sh sets it, for CI's time budget): the core testbenches'
    random-message tests run half their messages; HW_TB_THOROUGH wins over it."""
    return os.environ.get("HW_TB_QUICK", "") not in ("", "0") and not thorough()


def run_cocotb(tb_dir, toplevel, sources, build_name, parameters=None, testcase=None,
               extra_env=None, includes=(), defines=None):
    """Builds `toplevel` from `sources` (with the `defines` macros) with Icarus Verilog into
    tb_dir/sim_build/build_name and runs the cocotb tests of tb_dir/test_<tb_dir name>.py
    against it. Fails (assert) when any cocotb test failed."""
    from cocotb_tools.check_results import get_results
    from cocotb_tools.runner import get_runner

    tb_dir = Path(tb_dir)
    build_dir = tb_dir / "sim_build" / build_name
    runner = get_runner("icarus")
    runner.build(sources=[Path(s) for s in sources], hdl_toplevel=toplevel, includes=list(includes),
                 parameters=dict(parameters or {}), defines=dict(defines or {}), build_dir=build_dir, always=True,
                 timescale=("1ns", "1ps"))
    results = runner.test(hdl_toplevel=toplevel, test_module=f"test_{tb_dir.name}", test_dir=tb_dir,
                          build_dir=build_dir, testcase=testcase, extra_env=dict(extra_env or {}),
                          results_xml=str(build_dir / "results.xml"))  # inside the ignored sim_build
    total, failed = get_results(results)
    assert failed == 0, f"{failed} of {total} cocotb tests failed ({toplevel}, {build_name})"


def expect_param_error(tmp_path, toplevel, source, param, message):
    """Elaborating `toplevel` with `param` (e.g. "WIDTH=16") must print `message` ($error)."""
    out = Path(tmp_path) / "bad.vvp"
    subprocess.run(["iverilog", "-g2012", f"-P{toplevel}.{param}", "-o", str(out), str(source)],
                   check=True, capture_output=True)
    r = subprocess.run(["vvp", "-n", str(out)], capture_output=True, text=True)
    assert message in r.stdout + r.stderr


_built = False
if os.environ.get("HEAPWIRE_BIN"):  # absolute, so the simulator processes (another cwd) find it too
    os.environ["HEAPWIRE_BIN"] = str(Path(os.environ["HEAPWIRE_BIN"]).resolve())


def heapwire_bin() -> str:
    """The heapwire CLI: $HEAPWIRE_BIN, else target/release/heapwire, brought up to date
    with `cargo build --release -p heapwire-cli` once (scripts/test_rtl.sh builds it first;
    if the build fails here but a binary exists, that one is used with a warning -- the
    engine files are refreshed from rtl/ anyway, see refresh_engine_copies). The choice is
    left in $HEAPWIRE_BIN, so the simulator processes the cocotb runner starts (which
    inherit the environment) use the same binary without building again."""
    global _built
    env = os.environ.get("HEAPWIRE_BIN")
    if env:
        return env
    exe = REPO / "target" / "release" / "heapwire"
    if not _built:
        r = subprocess.run(["cargo", "build", "--release", "-q", "-p", "heapwire-cli"], cwd=REPO,
                           capture_output=True, text=True)
        if r.returncode != 0:
            assert exe.is_file(), f"cargo build -p heapwire-cli failed and there is no {exe}:\n{r.stderr}"
            print(f"tbutil: cargo build -p heapwire-cli failed; using the existing {exe}", file=sys.stderr)
        _built = True
    os.environ["HEAPWIRE_BIN"] = str(exe)
    return str(exe)


def compile_schema(proto, out_dir, rtl=True, extra=()):
    """`heapwire compile PROTO -o OUT_DIR [--rtl] EXTRA...`; returns OUT_DIR as a Path."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    argv = [heapwire_bin(), "compile", str(proto), "-o", str(out_dir), *extra]
    if rtl:
        argv.append("--rtl")
    r = subprocess.run(argv, capture_output=True, text=True)
    assert r.returncode == 0, f"{' '.join(argv)}: {r.stderr}"
    return out_dir


def engine_files(core):
    """The hand-written files of a core, from its list rtl/<core>.f ("hw_pb_core", "hw_og_core"):
    names in rtl/, `//` lines are comments."""
    lines = (RTL_DIR / f"{core}.f").read_text().splitlines()
    return [l.strip() for l in lines if l.strip() and not l.strip().startswith("//")]


def generated_core(tb_dir, cfg, proto, compile_args=(), engine=(), core="_core"):
    """The sources of a generated core for a cocotb build: `heapwire compile PROTO --rtl
    COMPILE_ARGS...` into tb_dir/sim_build/cfg/gen, the copies of the hand-written `engine`
    files refreshed from rtl/ (refresh_engine_copies). Returns (gen dir, sources: the engine
    files, then `<stem><core>.gen.v`: `_core` the protobuf core, `_og_core` the objgraph core)."""
    gen = compile_schema(proto, Path(tb_dir) / "sim_build" / cfg / "gen", extra=compile_args)
    refresh_engine_copies(gen, engine)
    return gen, [gen / name for name in engine] + [gen / f"{Path(proto).stem}{core}.gen.v"]


def error_kinds(core):
    """{code: kind} of the error register of rtl/<core>.v, from its `E_<KIND> = 8'd<code>`
    localparams: the kinds are heapwire_engine::RejectKind's, named as `heapwire decode`
    prints them (the tests of crates/sim keep the localparams' names and codes so)."""
    text = (RTL_DIR / f"{core}.v").read_text()
    kinds = {int(code): name.lower() for name, code in re.findall(r"\bE_([A-Z0-9_]+)\s*=\s*8'd(\d+)", text)}
    assert kinds, f"no error codes in rtl/{core}.v"
    return kinds


DP16KD_MODEL = TB_ROOT / "models" / "DP16KD.v"


def ecp5_bram(on):
    """(extra sources, defines) that build rtl/hw_sdp_ram.v from ECP5 DP16KD cells, as
    scripts/synth.sh og-ecp5 synthesizes it, simulated on the cell model; nothing if not on."""
    return ([DP16KD_MODEL], {"HEAPWIRE_ECP5_BRAM": 1}) if on else ([], None)


def refresh_engine_copies(out_dir, names):
    """Overwrites the engine files `compile --rtl` copied into out_dir with the working
    tree's rtl/*.v, so the test always simulates the current engine even when the heapwire
    binary (which embeds them) is older; says so on stderr when they differed."""
    for n in names:
        want = (RTL_DIR / n).read_bytes()
        p = Path(out_dir) / n
        if p.read_bytes() != want:
            print(f"tbutil: {p} was older than rtl/{n} (heapwire binary not rebuilt?); using rtl/{n}", file=sys.stderr)
            p.write_bytes(want)


class Rejected(Exception):
    """heapwire exited 1: the input was rejected."""

    def __init__(self, kind, offset, line):
        super().__init__(line)
        self.kind = kind
        self.offset = offset


def run_heapwire(args, data: bytes) -> bytes:
    """Runs `heapwire ARGS... -` on `data`; returns stdout, or raises Rejected(kind, offset)
    from the `<kind> at byte <offset>` line of a rejection (exit 1)."""
    import re

    argv = [heapwire_bin(), *args, "-"]
    r = subprocess.run(argv, input=data, capture_output=True, timeout=60)
    if r.returncode == 1:
        line = r.stderr.decode("utf-8", "replace").strip()
        m = re.search(r"(\w+) at byte (\d+)", line)
        assert m, f"unexpected rejection line: {line}"
        raise Rejected(m.group(1), int(m.group(2)), line)
    assert r.returncode == 0, f"{' '.join(argv)}: exit {r.returncode}: {r.stderr.decode('utf-8', 'replace')}"
    return r.stdout


class CoreHost:
    """The host side of a generated core in a cocotb test: the input memory (read ports
    `in_` and, when the core has it, `in2_`, each with one cycle of latency; junk after
    the input and for words not requested), the
    output memory (whole-word writes, or byte-enabled when the core has out_wr_be; an
    optional read port with one cycle of latency that returns the word before a write in
    the same cycle, like a read-first block RAM; an optional second write port `out2_`,
    on the read port's side, so never beside a read nor on the word the first port
    writes; unwritten bytes read as 0xA5), and the
    start/done handshake. Port names are those of heapwire_core / heapwire_og_core."""

    FILL = 0xA5
    # The host's view of the memory ports in a start cycle and the cycle after it:
    #   None      as settled with that cycle's inputs (the ports after start changed);
    #   "check"   also as settled before start and the controls changed (in_len, ...), and
    #             the two must agree: the memory ports may not depend combinationally on the
    #             host's controls (a host that samples its ports without evaluating its new
    #             inputs first, as crates/sim's Verilated device does, would otherwise see
    #             other reads and writes than the core makes);
    #   "before"  served from the view before the change, as that Verilated device serves them
    #             (and, as there, the input memory's read data holds the word last read until
    #             the next read, across requests too).
    start_view = None

    def __init__(self, dut, rng):
        self.dut, self.rng = dut, rng
        self.iw = len(dut.in_rd_data) // 8
        self.ow = len(dut.out_wr_data) // 8
        self.byte_enables = hasattr(dut, "out_wr_be")
        self.read_port = hasattr(dut, "out_rd_en")
        self.in_ports = ["in_"] + (["in2_"] if hasattr(dut, "in2_rd_en") else [])
        self.out_ports = ["out_"] + (["out2_"] if hasattr(dut, "out2_wr_en") else [])
        # the memory ports: each port's enable and the signals that matter when it is set
        groups = [(p + "rd_en", [p + "addr"]) for p in self.in_ports]
        groups += [("out_rd_en", ["out_rd_addr"])] if self.read_port else []
        groups += [(p + "wr_en", [p + n for n in ("wr_addr", "wr_data") + (("wr_be",) if self.byte_enables else ())])
                   for p in self.out_ports]
        self._groups = groups
        self._handles = {n: getattr(dut, n) for en, rest in groups for n in [en, *rest]}

    async def setup(self, inputs):
        """Starts the clock, sets the control inputs (names) and memory data to 0, resets."""
        from cocotb.clock import Clock

        Clock(self.dut.clk, 10, unit="ns").start()
        names = ["start", "in_len", "base"] + [p + "rd_data" for p in self.in_ports] + (["out_rd_data"] if self.read_port else []) + list(inputs)
        for n in names:
            getattr(self.dut, n).value = 0
        await self.reset()

    async def reset(self, cycles=3):
        from cocotb.triggers import RisingEdge

        self.dut.rst.value = 1
        for _ in range(cycles):
            await RisingEdge(self.dut.clk)
        self.dut.rst.value = 0

    async def idle(self, n):
        from cocotb.triggers import RisingEdge

        for _ in range(n):
            await RisingEdge(self.dut.clk)

    def _word(self, omem, a):
        return omem.get(a, int.from_bytes(bytes([self.FILL]) * self.ow, "little"))

    def _ports(self):
        """The memory ports' outputs now: {port name: value}."""
        return {n: h.value for n, h in self._handles.items()}

    def _enabled_ports(self):
        """As _ports(), but the address and data of a port only when it is enabled: each
        signal read costs the simulation time (most cycles use few ports)."""
        now = {}
        for en, rest in self._groups:
            v = now[en] = self._handles[en].value
            if str(v) == "1":
                for n in rest:
                    now[n] = self._handles[n].value
        return now

    def _requests(self, ports):
        """The requests in a _ports() view: each port's enable, and its address and data when
        enabled (as strings: x bits compare too)."""
        return {en: [str(ports[n]) for n in rest] if str(ports[en]) == "1" else str(ports[en]) for en, rest in self._groups}

    async def run_core(self, wire: bytes, controls: dict, max_cycles: int):
        """Pulses start with `controls` (port name -> value) set, serves the memories until
        done. Returns (err_code, err_offset, image_size, cycles, output memory words)."""
        from cocotb.triggers import ReadOnly, RisingEdge, Timer

        d, rng, iw = self.dut, self.rng, self.iw
        padded = wire + bytes(rng.randrange(256) for _ in range(-len(wire) % iw))  # junk after the end
        omem = {}
        pending = {p: None for p in self.in_ports}
        rd_pending = None
        cyc = -1
        while True:
            await RisingEdge(d.clk)
            cyc += 1
            if cyc >= max_cycles:
                path = save_failing(f"hang-{len(wire)}-{zlib.crc32(wire):08x}", wire)
                raise AssertionError(f"core did not finish within {max_cycles} cycles "
                                     f"({len(wire)}-byte input {wire[:40].hex()}, saved as {path}; controls {controls})")
            for p, a in pending.items():
                data = getattr(d, p + "rd_data")
                if a is not None and a * iw < len(padded):
                    data.value = int.from_bytes(padded[a * iw:(a + 1) * iw], "little")
                elif a is not None or self.start_view != "before":
                    data.value = rng.getrandbits(8 * iw)
                # (start_view "before": the word last read stays, as on that Verilated device)
            if self.read_port:
                d.out_rd_data.value = rd_pending if rd_pending is not None else rng.getrandbits(8 * self.ow)
            before = None
            if self.start_view and cyc < 2:
                # the ports before this cycle's start / controls are applied (start_view)
                await ReadOnly()
                before = self._ports()
                await Timer(1, unit="ns")
            d.start.value = int(cyc == 0)
            if cyc == 0:
                for k, v in controls.items():
                    getattr(d, k).value = v
            await ReadOnly()
            now = self._ports() if before is not None else self._enabled_ports()
            if before is not None and self.start_view == "check":
                assert self._requests(before) == self._requests(now), (
                    f"cycle {cyc} of a request: the memory ports depend on start / the controls in the same cycle: "
                    f"before {self._requests(before)}, after {self._requests(now)}")
            if before is not None and self.start_view == "before":
                now = before
            for p in pending:
                pending[p] = int(now[p + "addr"]) if int(now[p + "rd_en"]) else None
            if self.read_port:
                rd_pending = self._word(omem, int(now["out_rd_addr"])) if int(now["out_rd_en"]) else None
            written = []
            for p in self.out_ports:
                if not int(now[p + "wr_en"]):
                    continue
                a = int(now[p + "wr_addr"])
                v = now[p + "wr_data"]
                assert v.is_resolvable, f"cycle {cyc}: {p}wr of x/z bits to word {a}: {v}"
                assert p == "out_" or not (self.read_port and int(now["out_rd_en"])), \
                    f"cycle {cyc}: {p}wr beside a read on the same port"
                assert a not in written, f"cycle {cyc}: two writes to word {a}"
                written.append(a)
                v = int(v)
                if self.byte_enables:
                    be = int(now[p + "wr_be"])
                    old = self._word(omem, a)
                    mask = sum(0xFF << (8 * b) for b in range(self.ow) if be >> b & 1)
                    v = (old & ~mask) | (v & mask)
                omem[a] = v
            if cyc > 0 and int(d.done.value):
                break
        assert int(d.busy.value) == 0, "busy with done"
        res = (int(d.err_code.value), int(d.err_offset.value), int(d.image_size.value), int(d.cycles.value), omem)
        await RisingEdge(d.clk)  # out of the read-only phase
        assert res[3] <= cyc + 2, f"cycle counter {res[3]} after {cyc} cycles"
        return res

    def image(self, omem, size) -> bytes:
        """The image's bytes; no word past the image may have been written."""
        nwords = -(-size // self.ow)
        extra = sorted(a for a in omem if a >= nwords)
        assert not extra, f"writes past the image ({size} bytes): words {extra[:8]}"
        return b"".join(self._word(omem, a).to_bytes(self.ow, "little") for a in range(nwords))[:size]


def first_difference(got: bytes, want: bytes) -> str:
    """Where two images differ, for an assertion message."""
    if len(got) != len(want):
        return f"image size {len(got)}, expected {len(want)}"
    i = next(k for k in range(len(want)) if got[k] != want[k])
    return f"images differ first at byte {i}: got {got[i:i + 16].hex()} expected {want[i:i + 16].hex()}"


def save_failing(label: str, data: bytes) -> str:
    """Writes a failing input under $HW_TB_FAIL_DIR (default: the simulator's cwd, the
    testbench folder) for a `heapwire decode` / `heapwire sim` reproduction; returns the path."""
    import re

    d = Path(os.environ.get("HW_TB_FAIL_DIR", "sim_build"))
    d.mkdir(parents=True, exist_ok=True)
    p = d / ("fail-" + re.sub(r"[^A-Za-z0-9_.-]+", "_", label) + ".bin")
    p.write_bytes(data)
    return str(p.resolve())

"""scripts/timing_paths.py on small netlists yosys synthesizes here: the deep register ranks first."""
import importlib.util
import pathlib
import shutil
import subprocess

import pytest

HERE = pathlib.Path(__file__).resolve().parent
spec = importlib.util.spec_from_file_location("timing_paths", HERE.parent / "timing_paths.py")
tp = importlib.util.module_from_spec(spec)
spec.loader.exec_module(tp)

DESIGN = """
module two_paths (input wire clk, input wire [31:0] a, input wire [31:0] b, input wire s,
                  output reg [31:0] deep, output reg shallow, output wire [31:0] comb);
reg [31:0] ra, rb;
always @(posedge clk) begin
    ra <= a; rb <= b;
    // a 32-bit multiply-free chain: add, then compare, then add again
    deep <= ((ra + rb) > (rb ^ ra)) ? (ra + rb + rb) : (ra - rb);
    shallow <= s ^ ra[0];
end
assign comb = ra & rb;
endmodule
"""


@pytest.fixture(scope="module")
def netlist(tmp_path_factory):
    if shutil.which("yosys") is None:
        pytest.fail("yosys not on PATH (scripts/setup.sh installs it)")
    d = tmp_path_factory.mktemp("tp")
    (d / "two_paths.v").write_text(DESIGN)
    subprocess.run(["yosys", "-q", "-p", f"read_verilog {d}/two_paths.v; "
                    f"synth_ecp5 -top two_paths -json {d}/two_paths.json"],
                   check=True, cwd=d, timeout=120)
    return d / "two_paths.json"


def test_ranks_the_deep_register_first(netlist):
    net = tp.Netlist(str(netlist))
    assert net.module == "two_paths"
    g = tp.groups(net.endpoints())
    names = list(g)
    assert names[0] == "deep.DI", names[:5]
    deep, shallow = g["deep.DI"][0], g["shallow.DI"][0]
    # deep crosses two carry chains and a mux; shallow is one LUT
    assert deep > 3 * shallow, (deep, shallow)
    assert shallow < 3.0
    assert g["deep.DI"][2] == 32 and g["shallow.DI"][2] == 1
    # the output port is an endpoint of its own, fed from registers through one LUT level
    assert 0 < g["port:comb.OUT"][0] < 3.0


def test_trace_runs_from_a_register_to_the_end(netlist):
    net = tp.Netlist(str(netlist))
    a, bit, _ = tp.groups(net.endpoints())["deep.DI"]
    path = net.trace(bit)
    assert path[0][1] == "TRELLIS_FF" and path[0][0] == tp.FF_CQ
    assert any(t == "CCU2C" for _, t, _ in path)
    arrivals = [x[0] for x in path]
    assert arrivals == sorted(arrivals)
    assert abs(arrivals[-1] + tp.ROUTE + tp.SETUP - a) < 1e-9
    # source lines name the design file
    assert any("two_paths:" in w for _, _, w in path)


def test_cli(netlist, capsys, tmp_path):
    assert tp.main(["timing_paths", str(netlist), "3", "1"]) == 0
    out = capsys.readouterr().out
    assert "two_paths:" in out and "deep.DI (32)" in out and "--- deep.DI" in out
    bad = tmp_path / "bad.json"
    bad.write_text("{ not json")
    assert tp.main(["timing_paths", str(bad)]) == 1
    assert "cannot read" in capsys.readouterr().err
    assert tp.main(["timing_paths"]) == 2


KEPT = """
(* keep_hierarchy *)
module kept_reg (input wire clk, input wire [4:0] d, output reg [4:0] q);
always @(posedge clk) q <= d;
endmodule
module with_kept (input wire clk, input wire [4:0] a, input wire [4:0] b, input wire [63:0] w,
                  output reg [63:0] y);
wire [4:0] s;
kept_reg k (.clk(clk), .d(a + b), .q(s));
always @(posedge clk) y <= w >> s;
endmodule
"""


def test_kept_instances_are_inlined(tmp_path):
    """A kept module instance's flip-flops are start and end points like the top's: the path
    through its register is split there, its inputs are endpoints."""
    (tmp_path / "k.v").write_text(KEPT)
    subprocess.run(["yosys", "-q", "-p", f"read_verilog {tmp_path}/k.v; "
                    f"synth_ecp5 -top with_kept -json {tmp_path}/k.json"], check=True, cwd=tmp_path, timeout=120)
    net = tp.Netlist(str(tmp_path / "k.json"))
    assert net.module == "with_kept"
    g = tp.groups(net.endpoints())
    kept = [k for k in g if k.endswith(".DI") and g[k][2] == 5]
    assert kept == ["s.DI"], list(g)     # the kept register (its output, s) and its five inputs
    assert g[kept[0]][0] > tp.ROUTE + tp.SETUP + tp.LUT
    # y's path starts at the kept register (clock to out), not at 0 or at a, b
    path = net.trace(g["y.DI"][1])
    assert path[0][1] == "TRELLIS_FF" and path[0][0] == tp.FF_CQ, path

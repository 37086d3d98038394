"""A check on rtl/*.v that no simulator's event scheduling can hide: an `always @*` block is
sensitive only to the signals it reads itself and to the arguments of the tasks and
functions it calls (IEEE 1364-2005 9.7.5), not to the module signals a task or function
body reads. If such a signal (typically a wire) settles after the block ran in a time
step, the block keeps a stale result and simulation no longer matches synthesis
(`always_comb` does not help for tasks in Icarus Verilog 11). The rule enforced here:
every module signal a task or function reads, directly or through the tasks and functions
it calls, is also read by each `always @*` block that calls it (or passed as an argument).

Run by `python3 -m pytest rtl/tb` (scripts/test_rtl.sh); `python3 rtl/tb/test_sensitivity.py`
prints the findings.
"""

import re
import sys
from pathlib import Path

RTL = Path(__file__).resolve().parents[1]
IDENT = re.compile(r"\b[A-Za-z_][A-Za-z0-9_$]*\b")
KEYWORDS = set("""always assign begin case casez casex default else end endcase endfunction endtask for function
if input integer localparam output parameter reg signed task wire while posedge negedge or and not
automatic genvar generate endgenerate module endmodule inout initial repeat forever""".split())


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n") or " ", text, flags=re.S)  # keep line numbers
    text = re.sub(r"//[^\n]*", "", text)
    # based literals (8'hFF, 4'd3) and strings would otherwise read as identifiers
    text = re.sub(r"\"[^\"\n]*\"", " ", text)
    return re.sub(r"'[sS]?[bBoOdDhH][0-9a-fA-FxXzZ_?]+", " ", text)


def routines(text):
    """name -> (body text, its own names: inputs, locals and the function's result)."""
    out = {}
    for m in re.finditer(r"\b(task|function)\b(.*?)\bend(task|function)\b", text, flags=re.S):
        body = m.group(2)
        head = re.match(r"\s*(?:automatic\s+)?(?:signed\s+)?(?:\[[^\]]*\]\s*)?(?:integer\s+)?([A-Za-z_]\w*)", body)
        name = head.group(1)
        own = {name}
        for d in re.finditer(r"\b(?:input|output|inout|reg|integer)\b(?:\s+signed)?(?:\s*\[[^\]]*\])?([^;]*);", body):
            own |= {re.sub(r"\[.*", "", n).strip() for n in d.group(1).split(",")}
        out[name] = (body, own)
    return out


def module_signals(text, routine_spans):
    """Signals declared at module level (wires, regs, ports, genvars excluded later)."""
    outside = text
    for a, b in sorted(routine_spans, reverse=True):
        outside = outside[:a] + outside[b:]
    sig = set()
    for d in re.finditer(r"\b(?:wire|reg|input|output|logic)\b(?:\s+(?:wire|reg|signed))*(?:\s*\[[^\]]*\])*([^;()]*?)(?:;|\)|=)", outside):
        for n in d.group(1).split(","):
            n = re.sub(r"\[.*", "", n).strip()
            if re.fullmatch(r"[A-Za-z_]\w*", n):
                sig.add(n)
    return sig


def always_star_blocks(text):
    """The bodies of `always @*` / `always @(*)` blocks (begin ... end matched by depth)."""
    for m in re.finditer(r"\balways\s*@\s*(?:\*|\(\s*\*\s*\))", text):
        i = m.end()
        tokens = re.finditer(r"\b(begin|end|case|casez|casex|endcase)\b|;", text[i:])
        depth, end = 0, None
        for t in tokens:
            w = t.group(0)
            if w in ("begin", "case", "casez", "casex"):
                depth += 1
            elif w in ("end", "endcase"):
                depth -= 1
                if depth == 0:
                    end = i + t.end()
                    break
            elif w == ";" and depth == 0:
                end = i + t.end()  # a single statement
                break
        yield text.count("\n", 0, m.start()) + 1, text[i:end]


def continuous_assignments(text):
    """`assign x = e;` and `wire x = e;` (outside tasks and functions): the right-hand side
    is re-evaluated only when one of its own operands changes, like an always @* block."""
    for m in re.finditer(r"\bassign\b[^;=]*=([^;]*);|\bwire\b[^;=()]*=([^;]*);", text):
        yield text.count("\n", 0, m.start()) + 1, m.group(1) or m.group(2)


def findings(path):
    text = strip_comments(Path(path).read_text())
    spans = [(m.start(), m.end()) for m in re.finditer(r"\b(task|function)\b.*?\bend(task|function)\b", text, flags=re.S)]
    rs = routines(text)
    sigs = module_signals(text, spans)

    reads_memo = {}

    def reads(name, stack=()):
        """Module signals read by routine `name` and the routines it calls."""
        if name in reads_memo:
            return reads_memo[name]
        body, own = rs[name]
        ids = set(IDENT.findall(body)) - KEYWORDS - own
        got = {i for i in ids if i in sigs}
        for callee in ids & rs.keys():
            if callee not in stack and callee != name:
                got |= reads(callee, stack + (name,))
        reads_memo[name] = got
        return got

    outside = text
    for a, b in sorted(spans, reverse=True):
        outside = outside[:a] + "\n" * text.count("\n", a, b) + outside[b:]
    blocks = [("always @* block", line, body) for line, body in always_star_blocks(outside)]
    blocks += [("continuous assignment", line, rhs) for line, rhs in continuous_assignments(outside)]
    out = []
    for what, line, block in blocks:
        ids = set(IDENT.findall(block))
        for callee in sorted(ids & rs.keys()):
            missing = sorted(reads(callee) - ids)
            if missing:
                out.append(f"{Path(path).name}: the {what} at line {line} calls {callee}, which reads "
                           f"{', '.join(missing)}; it is not sensitive to {'it' if len(missing) == 1 else 'them'} "
                           f"(read {'it' if len(missing) == 1 else 'them'} in the block or pass as arguments)")
    return out


def test_always_star_blocks_see_what_their_tasks_read():
    problems = [f for p in sorted(RTL.glob("*.v")) for f in findings(p)]
    assert not problems, "\n".join(problems)


def test_the_check_finds_a_hidden_read(tmp_path):
    """The check itself: a function reading a module wire the block does not read."""
    v = tmp_path / "x.v"
    v.write_text("module x(input a, input b, output reg y);\nwire c = a ^ b;\n"
                 "function f; input q; begin f = q & c; end endfunction\n"
                 "always @* begin y = f(a); end\nendmodule\n")
    got = findings(v)
    assert len(got) == 1 and "calls f, which reads c" in got[0], got
    v.write_text(v.read_text().replace("y = f(a);", "y = f(a) | c;"))
    assert findings(v) == []
    v.write_text("module x(input a, input b, output y);\nwire c = a ^ b;\n"
                 "function f; input q; begin f = q & c; end endfunction\n"
                 "assign y = f(a);\nendmodule\n")
    got = findings(v)
    assert len(got) == 1 and "continuous assignment at line 4 calls f, which reads c" in got[0], got


if __name__ == "__main__":
    fs = [f for p in sorted(RTL.glob("*.v")) for f in findings(p)]
    print("\n".join(fs) or "no findings")
    sys.exit(1 if fs else 0)

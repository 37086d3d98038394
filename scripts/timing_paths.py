#!/usr/bin/env python3
"""Rough static timing over a yosys synth_ecp5 netlist (JSON): where the long paths end.

nextpnr names one critical path; this lists every register group by how late its inputs
settle, so a cut can be planned (and checked) without place and route, and a module can be
measured alone in seconds. The delay model is ECP5-like and crude: a LUT4 0.4 ns, a
PFUMX / L6MUX21 0.25 ns, a carry cell 0.4 ns in and 0.07 ns per CCU2C along the chain,
0.75 ns of routing per general net, distributed-RAM reads 1.5 ns, block-RAM outputs 2.5 ns
after the clock. Its figures run at about 0.8x nextpnr's (main's protobuf core: 43 ns
estimated, 53 ns routed); compare before with after, not with a target.

Start points: flip-flop and block-RAM outputs, the module's inputs. End points: flip-flop
DI / CE / LSR, RAM inputs, the module's outputs. Instances of kept modules (keep_hierarchy)
are inlined: their cells count as the top module's, named by instance path.

Usage: scripts/timing_paths.py NETLIST.json [GROUPS [TRACES]]
  prints the endpoint histogram (4 ns bins), the GROUPS (default 40) latest register groups
  (bits of one register, one pin kind) and the traced paths of the TRACES (default 0) latest,
  each step with its arrival and the source line (yosys `src`) or net name.
"""
import collections
import itertools
import json
import re
import sys

ROUTE = 0.75
LUT = 0.40
FF_CQ = 0.5
BRAM_CQ = 2.5
SETUP = 0.4
SEQ = ('TRELLIS_FF', 'DP16KD')


def _arcs(cell, port):
    """(input port, delay) pairs into a combinational cell's output port."""
    t = cell['type']
    if t == 'LUT4':
        return [(q, LUT) for q in 'ABCD']
    if t == 'PFUMX':
        return [('ALUT', 0.25), ('BLUT', 0.25), ('C0', 0.4)]
    if t == 'L6MUX21':
        return [('D0', 0.25), ('D1', 0.25), ('SD', 0.4)]
    if t == 'CCU2C':
        if port == 'COUT':
            return [(q + i, 0.4) for q in 'ABCD' for i in '01'] + [('CIN', 0.07)]
        if port == 'S0':
            return [(q + '0', 0.4) for q in 'ABCD'] + [('CIN', 0.44)]
        return [(q + i, 0.45) for q in 'ABCD' for i in '01'] + [('CIN', 0.44)]
    if t == 'TRELLIS_DPR16X4':
        return [('RAD', 1.5)]
    if t == 'MULT18X18D':
        return [(q, 3.5) for q in cell['connections'] if q[0] in 'ABC' and q[1:].isdigit()]
    return []


def _local(cell, port):
    """Inputs fed without general routing: carry-in, and the wide muxes' LUT inputs."""
    return port == 'CIN' or (cell['type'] in ('PFUMX', 'L6MUX21')
                             and port in ('ALUT', 'BLUT', 'D0', 'D1'))


def _flatten(mods, m):
    """A module's cells with the cells of its kept sub-module instances (keep_hierarchy)
    inlined, their internal nets renumbered past the netlist's; and those nets' names
    ({net: (instance path.name, hidden)})."""
    first = 1 + max([b for mm in mods.values() for w in mm['netnames'].values()
                     for b in w['bits'] if isinstance(b, int)] or [0])
    fresh = itertools.count(first)
    names = {}

    def inline(cells, prefix):
        out = {}
        for cn, c in cells.items():
            sub = mods.get(c['type'])
            attrs = (sub or {}).get('attributes', {})
            if sub is None or not sub.get('cells') or any(
                    str(attrs.get(k, '0')).strip('0') for k in ('blackbox', 'whitebox')):
                out[prefix + cn] = c
                continue
            bits = {}                            # the sub-module's net -> the instance's
            for pn, pd in sub.get('ports', {}).items():
                for sb, ib in zip(pd['bits'], c['connections'].get(pn, [])):
                    if isinstance(sb, int):
                        bits[sb] = ib
            for sc in sub['cells'].values():
                for conn in sc['connections'].values():
                    for sb in conn:
                        if isinstance(sb, int) and sb not in bits:
                            bits[sb] = next(fresh)
            for n, w in sub['netnames'].items():
                for i, sb in enumerate(w['bits']):
                    if isinstance(sb, int) and isinstance(bits.get(sb), int) and bits[sb] >= first:
                        names[bits[sb]] = (prefix + cn + '.' + (f"{n}[{i}]" if len(w['bits']) > 1 else n),
                                           w.get('hide_name', 0))
            renamed = {scn: dict(sc, connections={p: [bits.get(x, x) for x in v]
                                                  for p, v in sc['connections'].items()})
                       for scn, sc in sub['cells'].items()}
            out.update(inline(renamed, prefix + cn + '.'))
        return out

    return inline(m['cells'], ''), names


class Netlist:
    def __init__(self, path):
        d = json.load(open(path))
        mods = d['modules']
        top = [k for k, v in mods.items() if str(v.get('attributes', {}).get('top', '0')).strip('0')]
        self.module = top[0] if top else max(mods, key=lambda k: len(mods[k]['cells']))
        m = mods[self.module]
        self.cells, inner = _flatten(mods, m)
        self.m = m
        self.netname = dict(inner)
        for n, w in m['netnames'].items():
            hide = w.get('hide_name', 0)
            for i, b in enumerate(w['bits']):
                if not isinstance(b, int):
                    continue
                name = f"{n}[{i}]" if len(w['bits']) > 1 else n
                old = self.netname.get(b)
                if old is None or (old[1] and not hide) or (old[1] == hide and len(name) < len(old[0])):
                    self.netname[b] = (name, hide)
        self.driver = {}
        for cn, c in self.cells.items():
            for p, bits in c['connections'].items():
                if c['port_directions'][p] == 'output':
                    for b in bits:
                        if isinstance(b, int):
                            self.driver[b] = (cn, p)
        self.memo = {}

    def arrival(self, bit):
        """Latest arrival at a net (ns after the clock) and the net it comes from."""
        if not isinstance(bit, int) or bit not in self.driver:
            return (0.0, None)
        if bit in self.memo:
            return self.memo[bit]
        # iterative depth-first walk (netlists are deeper than Python's recursion limit)
        stack = [bit]
        while stack:
            b = stack[-1]
            if b in self.memo:
                stack.pop()
                continue
            cn, p = self.driver[b]
            c = self.cells[cn]
            if c['type'] in SEQ:
                self.memo[b] = (FF_CQ if c['type'] == 'TRELLIS_FF' else BRAM_CQ, None)
                stack.pop()
                continue
            pending = [ib for q, _ in _arcs(c, p) for ib in c['connections'].get(q, [])
                       if isinstance(ib, int) and ib in self.driver and ib not in self.memo
                       and ib not in stack]
            if pending:
                stack.extend(pending)
                continue
            best = (0.0, None)
            for q, dl in _arcs(c, p):
                for ib in c['connections'].get(q, []):
                    if not isinstance(ib, int):
                        continue
                    a = self.memo.get(ib, (0.0, None))[0] if ib in self.driver else 0.0
                    v = a + (0.0 if _local(c, q) else ROUTE) + dl
                    if v > best[0]:
                        best = (v, ib)
            self.memo[b] = best
            stack.pop()
        return self.memo[bit]

    def endpoints(self):
        """(arrival incl. routing and setup, register or port name, pin, net) latest first."""
        ends = []
        for cn, c in self.cells.items():
            t = c['type']
            if t == 'TRELLIS_FF':
                pins = ['DI', 'CE', 'LSR']
            elif t == 'DP16KD':
                pins = [p for p in c['connections']
                        if c['port_directions'][p] == 'input' and not p.startswith('CLK')]
            elif t == 'TRELLIS_DPR16X4':
                pins = ['DI', 'WAD', 'WRE']
            else:
                continue
            q = c['connections'].get('Q') or []
            name = self.netname[q[0]][0] if q and isinstance(q[0], int) and q[0] in self.netname else cn
            for p in pins:
                for b in c['connections'].get(p, []):
                    if isinstance(b, int):
                        ends.append((self.arrival(b)[0] + ROUTE + SETUP, name, p, b))
        for pn, pd in self.m.get('ports', {}).items():
            if pd['direction'] == 'output':
                for b in pd['bits']:
                    if isinstance(b, int):
                        ends.append((self.arrival(b)[0], 'port:' + pn, 'OUT', b))
        ends.sort(key=lambda e: -e[0])
        return ends

    def trace(self, bit):
        """The path into a net, earliest first: (arrival, cell type, source line or net)."""
        out = []
        while bit is not None:
            a, prev = self.memo.get(bit, (0.0, None))
            cn, _ = self.driver.get(bit, (None, None))
            c = self.cells.get(cn, {})
            src = c.get('attributes', {}).get('src', '')
            src = '|'.join(dict.fromkeys(
                re.sub(r'^(.*/)?([^/:]*)\.v:(\d+).*$', r'\2:\3', x)
                for x in src.split('|') if x and 'share/yosys' not in x))
            out.append((a, c.get('type', 'input'), src or group(self.netname.get(bit, (str(bit), 1))[0])))
            bit = prev
        return out[::-1]


def group(name):
    """A register's name without bit index and yosys's cell suffixes."""
    name = re.sub(r'_TRELLIS_FF_Q(_\d+)?$', '', name)
    name = re.sub(r'\$.*', '', name)
    return re.sub(r'\[\d+\]', '', name)


def groups(ends):
    """Endpoint groups, latest first: name.pin -> (arrival, net, bits)."""
    g = collections.OrderedDict()
    for a, name, pin, b in ends:
        k = group(name) + '.' + pin
        if k not in g:
            g[k] = [a, b, 0]
        g[k][2] += 1
    return g


def main(argv):
    if len(argv) < 2 or argv[1] in ('-h', '--help'):
        print(__doc__.strip())
        return 0 if len(argv) >= 2 else 2
    try:
        net = Netlist(argv[1])
    except (OSError, ValueError, KeyError) as e:
        print(f"timing_paths: cannot read {argv[1]} as a yosys JSON netlist: {e}", file=sys.stderr)
        return 1
    ngroups = int(argv[2]) if len(argv) > 2 else 40
    ntraces = int(argv[3]) if len(argv) > 3 else 0
    ends = net.endpoints()
    if not ends:
        print(f"timing_paths: {net.module}: no endpoints")
        return 0
    print(f"{net.module}: {len(ends)} endpoints, latest {ends[0][0]:.1f} ns (estimate)")
    hist = collections.Counter(int(e[0] // 4) * 4 for e in ends)
    for k in sorted(hist, reverse=True):
        print(f"  [{k:3d},{k + 4:3d}) ns: {hist[k]}")
    g = groups(ends)
    print("latest register groups (arrival ns, register.pin, bits):")
    for k, (a, _, n) in list(g.items())[:ngroups]:
        print(f"  {a:5.1f} {k} ({n})")
    for k, (a, b, _) in list(g.items())[:ntraces]:
        print(f"--- {k} {a:.1f} ns")
        last = None
        for aa, t, where in net.trace(b):
            if where != last:
                print(f"   {aa:5.1f} {t:8s} {where[:110]}")
            last = where
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))

"""Random operations against a Python model, for the cocotb testbenches of modules made of
memories with synchronous write ports and read ports both asynchronous and registered
(rtl/tb/hw_pb_counts, rtl/tb/hw_pb_insts).

A module is described by its memories and ports (signal names of the dut):
  mems    {memory: (entries, width in bits)}
  writes  [(we, wa, {memory: wd})]: one write port writes its memories together (the same
          address), at the clock edge;
  reads   [(ra, [(memory, q)], delta, registered)]: q shows entry (ra + delta) mod entries
          of the memory --
            asynchronous (registered False): in the cycle ra is given, as held before that
            cycle's edge (a write to the entry in the same cycle is not seen yet);
            registered (True): in the cycle after ra was given, as held after the edge in
            between (a write to the entry in the cycle of ra is seen: forwarded).
Each cycle every write port writes (or not) a random entry, often one written before, and
every read port reads one: mostly an entry written before, sometimes the entry a write port
writes in this cycle (read during write), sometimes any entry (checked when written before;
the memories are not reset). `run` returns the checks made per output and the
read-during-write checks, for the testbench's minimum counts. A testbench checks outputs of
its own with `drive_more(values, model)` (adds signals to drive in a cycle, after the
ports' choices; values: {signal: value}, model: {memory: {entry: value}} before the edge)
and `check_more(t, values, model)` (after the outputs settled, before the edge).
"""

from cocotb.triggers import ReadOnly, RisingEdge


def _entries(mems, names):
    sizes = {mems[m][0] for m in names}
    assert len(sizes) == 1, f"memories {names} of one port differ in size"
    return sizes.pop()


def _check(dut, t, q, m, e, want):
    got = getattr(dut, q).value
    assert got.is_resolvable, f"cycle {t}: {q} = {got} (entry {e} of {m} holds {want:#x})"
    assert int(got) == want, f"cycle {t}: {q} = {int(got):#x}, entry {e} of {m} holds {want:#x}"


async def run(dut, mems, writes, reads, rng, n, drive_more=None, check_more=None):
    model = {m: {} for m in mems}
    checked = {q: 0 for _, ports, _, _ in reads for _, q in ports}
    rdw = 0                                              # read-during-write checks
    due = []                                             # registered reads shown this cycle
    for we, wa, wds in writes:
        getattr(dut, we).value = 0
    for t in range(n):
        values, writing = {}, []
        for we, wa, wds in writes:
            size = _entries(mems, list(wds))
            on = rng.random() < 0.6
            written = sorted(model[next(iter(wds))])
            a = rng.choice(written) if written and rng.random() < 0.3 else rng.randrange(size)
            values[we], values[wa] = int(on), a
            for m, wd in wds.items():
                values[wd] = rng.getrandbits(mems[m][1])
            if on:
                writing.append((a, wds))
        for ra, ports, delta, _ in reads:
            m0 = rng.choice(ports)[0]                    # (ports on several memories: each in turn)
            size = _entries(mems, [m for m, _ in ports])
            written = sorted(model[m0])
            same = [a for a, wds in writing if m0 in wds]
            r = rng.random()
            if same and r < 0.25:
                e = rng.choice(same)                     # read during write
            elif written and r < 0.8:
                e = rng.choice(written)
            else:
                e = rng.randrange(size)
            values[ra] = (e - delta) % size
        if drive_more is not None:
            drive_more(values, model)
        for name, v in values.items():
            getattr(dut, name).value = v
        await ReadOnly()
        for q, m, e, want, fwd in due:
            _check(dut, t, q, m, e, want)
            checked[q] += 1
            rdw += fwd
        for ra, ports, delta, registered in reads:
            if registered:
                continue
            for m, q in ports:
                e = (values[ra] + delta) % mems[m][0]
                if e in model[m]:
                    _check(dut, t, q, m, e, model[m][e])
                    checked[q] += 1
                    rdw += any(a == e and m in wds for a, wds in writing)
        if check_more is not None:
            check_more(t, values, model)
        await RisingEdge(dut.clk)
        for a, wds in writing:
            for m, wd in wds.items():
                model[m][a] = values[wd]
        due = []
        for ra, ports, delta, registered in reads:
            if not registered:
                continue
            for m, q in ports:
                e = (values[ra] + delta) % mems[m][0]
                if e in model[m]:
                    due.append((q, m, e, model[m][e], any(a == e and m in wds for a, wds in writing)))
    return checked, rdw

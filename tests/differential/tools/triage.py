#!/usr/bin/env python3
"""Run the whole differential corpus and group disagreements by signature across cases.

    python3 tests/differential/tools/triage.py [--cases N] [--save]

Prints, per signature, the count and one minimized reproducer (smallest input).
With --save, reproducers are written to tests/differential/repro/new/.
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def explained(case, f):
    from hwdiff import harness, known, oracle, runner, schemas
    if f.klass == "rejected-valid" and "missing_required" in f.actual.stderr_text:
        return True
    if f.klass != "json-mismatch" or f.expected.kind != oracle.ACCEPT:
        return False
    data = known.strip_map_entries(schemas.descriptor(case.reader), f.data)
    r = runner.decode_json(case, data)
    if r.rc != 0:
        return False
    return harness.compare_json(f.expected.json, known.normalize_output(r.out.decode("utf-8", "replace").strip())) is None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", type=int)
    ap.add_argument("--save", action="store_true")
    ap.add_argument("-k", default="", help="only cases whose id contains this")
    ap.add_argument("--explain", action="store_true",
                    help="drop disagreements explained by known causes (hwdiff/known.py)")
    a = ap.parse_args()
    if a.cases:
        os.environ["HEAPWIRE_DIFF_CASES"] = str(a.cases)
    from hwdiff import harness, oracle
    from hwdiff.schemas import CASES

    groups = {}
    total = 0
    for case in CASES:
        if a.k not in case.id:
            continue
        items = [(f"valid#{i}", b, oracle.verdict(case.reader, b)) for i, b in enumerate(harness.corpus(case))]
        ms = [(op, b, oracle.verdict(case.reader, b)) for op, b in harness.mutants(case)]
        acc = [m for m in ms if m[2].kind == oracle.ACCEPT]
        other = [m for m in ms if m[2].kind != oracle.ACCEPT]
        fails = harness.check_batch(case, items) + harness.check_batch(case, acc)
        fails += [f for f in harness.parallel(lambda it: harness.check_single(case, it[1], it[0], it[2]), other) if f]
        total += len(items) + len(ms)
        if a.explain:
            fails = [f for f in fails if not explained(case, f)]
        for f in fails:
            groups.setdefault(harness.signature(f), []).append(f)
        print(f"{case.id}: {len(items)} valid, {len(ms)} mutants ({len(acc)} accepted), {len(fails)} disagreements",
              file=sys.stderr)
    print(f"\n{total} inputs, {sum(map(len, groups.values()))} disagreements, {len(groups)} signatures\n")
    for sig, fs in sorted(groups.items(), key=lambda kv: -len(kv[1])):
        fs.sort(key=harness.Failure.sort_key)
        f = harness.minimize(fs[0]) if len(fs[0].data) < 4096 and fs[0].klass != "usage-error" else fs[0]
        path = harness.save_repro(f, "triage") if a.save else "-"
        cases = sorted({x.case.id for x in fs})
        print(f"## {sig}  x{len(fs)} in {len(cases)} case(s): {', '.join(cases)[:200]}")
        print(f"   {f.case.schema} {f.case.reader}  hex={f.data.hex()[:200]}  ({f.op})")
        print(f"   official: {f.expected.kind} {(f.expected.json or f.expected.detail)[:300]}")
        print(f"   heapwire: {f.actual.describe()} {f.actual.out.decode('utf-8', 'replace').strip()[:300]} "
              f"{f.actual.stderr_text[:200]}")
        print(f"   {f.note[:300]}  repro={path}\n")


if __name__ == "__main__":
    main()

"""Corpus and mutant construction, differential checks, minimization, reports."""
from __future__ import annotations

import functools
import hashlib
import json
import os
import random
import re
import zlib
from concurrent.futures import ThreadPoolExecutor

from google.protobuf.descriptor import FieldDescriptor as FD

from . import gen, mutate, oracle, runner, schemas
from .runner import varint

# ------------------------------------------------------------------ knobs
BASE_SEED = int(os.environ.get("HEAPWIRE_DIFF_SEED", "20240917"), 0)
THOROUGH = os.environ.get("HEAPWIRE_DIFF_THOROUGH", "") not in ("", "0")
N_VALID = int(os.environ.get("HEAPWIRE_DIFF_CASES", "600" if THOROUGH else "60"))
MUTANTS_PER_VALID = int(os.environ.get("HEAPWIRE_DIFF_MUTANTS_PER_MESSAGE", "10"))
SHORT = 48  # messages up to this many bytes are truncated at every position
JOBS = int(os.environ.get("HEAPWIRE_DIFF_JOBS", str(max(2, (os.cpu_count() or 2)))))
REPRO_DIR = os.environ.get("HEAPWIRE_DIFF_REPRO_DIR", os.path.join(schemas.HERE, "repro", "new"))
MAX_REPORTED = 6


def case_seed(case: schemas.Case, salt: str) -> int:
    return BASE_SEED ^ zlib.crc32(f"{case.id}/{salt}".encode())


def seed_note(case, salt):
    return (f"seed {case_seed(case, salt)} (HEAPWIRE_DIFF_SEED={BASE_SEED}, HEAPWIRE_DIFF_CASES={N_VALID}, "
            f"HEAPWIRE_DIFF_MUTANTS_PER_MESSAGE={MUTANTS_PER_VALID})")


# ------------------------------------------------------------------ corpus
@functools.lru_cache(maxsize=None)
def corpus(case: schemas.Case):
    """Valid messages (bytes) written with case.writer; deterministic."""
    g = gen.Gen(case_seed(case, "corpus"), huge_prob=0.02)
    out = [b""]
    recursive = gen.max_depth(case.writer) == float("inf")
    for i in range(N_VALID):
        target = None
        if recursive and i % 7 == 3:
            target = g.rng.choice([5, 10, 20, 40, 60, 80, 90, 95])
        m = g.message(case.writer, target_depth=target, huge=1 if i % 5 == 0 else 0)
        # deterministic=True: upb's map order otherwise depends on a per-process hash seed
        b = m.SerializePartialToString(deterministic=True)
        if i % 3 == 1:  # fields out of number order (valid; repeated elements keep their wire order)
            toks = mutate.fields(b) or []
            chunks = [b[t.start : t.end] for t in toks]
            g.rng.shuffle(chunks)
            b = b"".join(chunks)
        out.append(b)
    return out


def written_messages(case: schemas.Case):
    """The same corpus as message objects of the writer type (for coverage)."""
    cls = schemas.message_class(case.writer)
    res = []
    for b in corpus(case):
        m = cls()
        m.ParseFromString(b)
        res.append(m)
    return res


def covered_fields(msgs):
    seen = set()
    stack = list(msgs)
    while stack:
        m = stack.pop()
        for fd, val in m.ListFields():
            seen.add((m.DESCRIPTOR.full_name, fd.name))
            if fd.type in (FD.TYPE_MESSAGE, FD.TYPE_GROUP):
                if fd.message_type.GetOptions().map_entry:
                    vf = fd.message_type.fields_by_name["value"]
                    seen.add((fd.message_type.full_name, "key"))
                    seen.add((fd.message_type.full_name, "value"))
                    if vf.type == FD.TYPE_MESSAGE:
                        stack.extend(val[k] for k in val)
                elif gen.is_repeated(fd):
                    stack.extend(val)
                else:
                    stack.append(val)
    return seen


def deep_specials(case: schemas.Case):
    """Messages nested right at and past the official depth limit (100)."""
    if gen.max_depth(case.writer) != float("inf"):
        return []
    g = gen.Gen(case_seed(case, "deep"), huge_prob=0)
    out = []
    for d in (99, 100, 101, 102, 120):
        for _ in range(2):
            out.append(("deep%d" % d, g.message(case.writer, target_depth=d, huge=0).SerializePartialToString(deterministic=True)))
    return out


@functools.lru_cache(maxsize=None)
def mutants(case: schemas.Case):
    """(op, bytes) mutants of the corpus, deduplicated, deterministic."""
    rng = random.Random(case_seed(case, "mutants"))
    known = sorted({f.number for f in schemas.descriptor(case.reader).fields})
    mu = mutate.Mutator(rng, known)
    base = [b for b in corpus(case) if len(b) <= 200_000]
    out, seen = [], set(base)

    def add(op, b):
        if b not in seen:
            seen.add(b)
            out.append((op, b))

    shorts = sorted((b for b in base if 0 < len(b) <= SHORT), key=len)[:4]
    for b in shorts:
        for i in range(len(b)):
            add("truncate-every", b[:i])
    # small messages mutate faster and shrink reproducers: prefer them
    small = sorted(base, key=len)[: max(4, len(base) * 3 // 4)]
    for k in range(len(base) * MUTANTS_PER_VALID):
        d = small[k % len(small)] if k % 3 else rng.choice(base)
        other = rng.choice(base)
        op, b = mu.mutate(d, other)
        if rng.random() < 0.15:  # second-order mutants
            op2, b = mu.mutate(b, rng.choice(base))
            op = f"{op}+{op2}"
        add(op, b)
    for op, b in deep_specials(case):
        add(op, b)
        add(op + "+groups", b + mutate.nested_groups(5000, rng.choice([90, 99, 100, 101])))
    return out


# ------------------------------------------------------------------ checks
class Failure:
    def __init__(self, klass, case, data, op, expected, actual, note=""):
        self.klass, self.case, self.data, self.op = klass, case, data, op
        self.expected, self.actual, self.note = expected, actual, note
        self.repro_path = None

    def sort_key(self):
        return (len(self.data), self.klass)


def _lines(out: bytes):
    try:
        text = out.decode("utf-8")
    except UnicodeDecodeError as e:
        return None, f"stdout is not UTF-8: {e}"
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines, ""


def _first(text: str) -> str:
    lines = text.strip().splitlines()
    return (lines[-1] if lines else "")[:300]


_EXT_KEY = re.compile(r"\[[A-Za-z_][A-Za-z0-9_.]*\]")


def _drop_empty_extension_lists(v):
    """Known difference (README "Extensions"): upb keeps a repeated extension that was
    seen on the wire with no elements (an empty packed run) and prints it as `[]`;
    heapwire's image has no presence for repeated fields, so it prints nothing, as for a
    repeated field."""
    if isinstance(v, dict):
        return {k: _drop_empty_extension_lists(x) for k, x in v.items()
                if not (_EXT_KEY.fullmatch(k) and isinstance(x, list) and not x)}
    if isinstance(v, list):
        return [_drop_empty_extension_lists(x) for x in v]
    return v


def compare_json(expected_text: str, actual_text: str):
    """None when equal, else a one-line explanation."""
    exp = _drop_empty_extension_lists(oracle.loads(expected_text))
    try:
        act = oracle.loads(actual_text)
    except oracle.JsonSyntaxError as e:
        return f"heapwire printed invalid JSON: {e}"
    d = oracle.first_difference(exp, act)
    if d is None:
        return None
    path, e, a = d
    return f"first difference at {path}: official {json.dumps(e, ensure_ascii=False)[:200]} vs heapwire {json.dumps(a, ensure_ascii=False)[:200]}{oracle.float32_hint(e, a)}"


def check_single(case, data, op, v=None):
    """Run heapwire on one message; a Failure or None."""
    v = v or oracle.verdict(case.reader, data)
    r = runner.decode_json(case, data)
    if r.crashed:
        return Failure("crash", case, data, op, v, r, r.describe())
    if r.rc == 2:
        return Failure("usage-error", case, data, op, v, r, f"exit 2 (usage/schema error): {_first(r.stderr_text)}")
    if v.kind in (oracle.REJECT, oracle.UNPRINTABLE):
        if r.rc != 1:
            what = "rejects" if v.kind == oracle.REJECT else "refuses to print"
            return Failure("accepted-invalid" if v.kind == oracle.REJECT else "printed-unprintable", case, data, op, v,
                           r, f"official {what} ({v.detail}); heapwire {r.describe()}")
        lines = [l for l in r.stderr_text.splitlines() if l.strip()]
        if len(lines) != 1 or not re.search(r"\d", lines[0]):
            return Failure("error-line", case, data, op, v, r,
                           "rejection must print exactly one stderr line naming the kind and byte offset")
        return None
    if r.rc != 0:
        return Failure("rejected-valid", case, data, op, v, r, f"official accepts; heapwire {r.describe()}: {_first(r.stderr_text)}")
    lines, why = _lines(r.out)
    if lines is None or len(lines) != 1:
        return Failure("json-mismatch", case, data, op, v, r, why or f"expected one JSON line, got {len(lines)}")
    diff = compare_json(v.json, lines[0])
    return Failure("json-mismatch", case, data, op, v, r, diff) if diff else None


def check_batch(case, items):
    """items: [(op, bytes, verdict ACCEPT)]; one heapwire process; per-item fallback on trouble."""
    if not items:
        return []
    r = runner.decode_json(case, runner.delimit([b for _, b, _ in items]), delimited=True)
    if r.rc == 2:  # usage or schema error: one failure, not one per message
        op, b, v = items[0]
        return [Failure("usage-error", case, b, op, v, r, f"exit 2 (usage/schema error): {_first(r.stderr_text)}")]
    lines, why = _lines(r.out) if r.rc == 0 else (None, "")
    if r.rc == 0 and lines is not None and len(lines) == len(items):
        fails, redo = [], []
        for (op, b, v), line in zip(items, lines):
            if compare_json(v.json, line):
                redo.append((op, b, v))
        items = redo  # confirm each mismatch on its own (also yields the single-message command)
        if not items:
            return fails
    return [f for f in parallel(lambda it: check_single(case, it[1], it[0], it[2]), items) if f]


def parallel(fn, items):
    if len(items) <= 1:
        return [fn(i) for i in items]
    with ThreadPoolExecutor(JOBS) as ex:
        return list(ex.map(fn, items))


# ------------------------------------------------------------------ minimization & reports
def minimize(f: Failure, budget: int = 300) -> Failure:
    """Shrink a failing input keeping its failure class: drop whole fields
    (recursing into sub-messages, lengths recomputed), then byte chunks."""
    best, runs = f, 0

    def still(data):
        nonlocal runs
        runs += 1
        g = check_single(f.case, data, f.op)
        return g if g and g.klass == f.klass else None

    def shrink_fields(data, rebuild):
        """rebuild(payload) -> whole message bytes; returns the smallest payload found."""
        nonlocal best
        changed = True
        while changed and runs < budget:
            changed = False
            toks = mutate.fields(data)
            if not toks:
                return data
            for t in reversed(toks):
                if runs >= budget:
                    break
                cand = data[: t.start] + data[t.end :]
                g = still(rebuild(cand))
                if g:
                    best, data, changed = g, cand, True
                    break
            if changed:
                continue
            for t in toks:
                if runs >= budget or t.wt != 2 or not mutate.fields(data[t.hdr_end : t.end]):
                    continue
                _, te = mutate.read_varint(data, t.start, len(data))
                pre, post = data[:te], data[t.end :]

                def sub_rebuild(p, pre=pre, post=post):
                    return rebuild(pre + varint(len(p)) + p + post)

                old = data[t.hdr_end : t.end]
                new = shrink_fields(old, sub_rebuild)
                if new != old:
                    data = pre + varint(len(new)) + new + post
        return data

    shrink_fields(best.data, lambda p: p)
    n = max(1, len(best.data) // 2)
    while n >= 1 and runs < budget:
        i, progressed = 0, False
        while i < len(best.data) and runs < budget:
            cand = best.data[:i] + best.data[i + n :]
            g = still(cand)
            if g:
                best, progressed = g, True
            else:
                i += n
        if not progressed:
            n //= 2
    best.op = f.op + ("" if best is f else " (minimized)")
    return best


def _field_path(reader: str, path: str) -> str:
    """'$.fInner.next.color' -> 'hw.p3.Inner.color'; map keys and indices collapse to {} and []."""
    desc = schemas.descriptor(reader)
    parts = re.findall(r"\.((?:[^.\[]|\[(?!\d+\]))+)|\[(\d+)\]", path[1:])
    last, in_map = desc.full_name, None
    for name, idx in parts:
        if idx or desc is None:
            continue
        if in_map is not None:  # this component is a map key
            vf = in_map.fields_by_name["value"]
            desc, in_map = (vf.message_type if vf.type == FD.TYPE_MESSAGE else None), None
            last += "{}"
            continue
        fd = next((f for f in desc.fields if f.json_name == name), None)
        if fd is None:
            return f"{last}.{name}"
        last = fd.full_name
        if fd.type in (FD.TYPE_MESSAGE, FD.TYPE_GROUP):
            if fd.message_type.GetOptions().map_entry:
                in_map, desc = fd.message_type, fd.message_type
            else:
                desc = fd.message_type
        else:
            desc = None
    return last


def signature(f: Failure) -> str:
    """Failures with one signature most likely share a root cause."""
    if f.klass == "json-mismatch" and f.note.startswith("first difference at "):
        path = f.note[len("first difference at "):].split(": official", 1)[0]
        return f"{f.klass} at {_field_path(f.case.reader, path)}"
    if f.klass in ("rejected-valid", "error-line", "usage-error"):
        kind = re.sub(r"\d+", "N", _first(f.actual.stderr_text))[:80]
        return f"{f.klass} ({kind})"
    return f"{f.klass} {f.op.split('@')[0].split('+')[0].split(' ')[0]}"


def save_repro(f: Failure, seed_text: str) -> str:
    os.makedirs(REPRO_DIR, exist_ok=True)
    h = hashlib.sha1(f.case.id.encode() + f.data).hexdigest()[:10]
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", f.case.id)
    base = os.path.join(REPRO_DIR, f"{f.klass}-{safe}-{h}")
    r = f.actual
    doc = {
        "class": f.klass,
        "case": f.case.id,
        "schema": os.path.relpath(f.case.schema_path, runner.REPO),
        "include": os.path.relpath(schemas.SCHEMA_DIR, runner.REPO),
        "type": f.case.reader,
        "written_as": f.case.writer,
        "mutation": f.op,
        "hex": f.data.hex(),
        "official": {"verdict": f.expected.kind, "json": f.expected.json, "detail": f.expected.detail},
        "heapwire": {"exit": r.rc, "stdout": r.out.decode("utf-8", "replace")[:20000], "stderr": r.stderr_text[:2000]},
        "note": f.note,
        "command": runner.shell_cmd(f.case, os.path.relpath(base + ".bin", runner.REPO)),
        "seed": seed_text,
    }
    with open(base + ".json", "w") as fh:
        json.dump(doc, fh, indent=1, ensure_ascii=False)
    with open(base + ".bin", "wb") as fh:
        fh.write(f.data)
    f.repro_path = os.path.relpath(base + ".json", runner.REPO)
    return f.repro_path


def _hex(b: bytes, limit=160):
    return b.hex() if len(b) <= limit else f"{b[:limit].hex()}... ({len(b)} bytes; full hex in the repro file)"


def _short(s, limit=600):
    if s is None:
        return "-"
    return s if len(s) <= limit else s[:limit] + f"... ({len(s)} chars)"


def report(case, fails, total, seed_text, what):
    """Minimize a few failures, save reproducers, build a readable message."""
    by_class = {}
    for f in fails:
        by_class.setdefault(f.klass, []).append(f)
    out = [f"{case.id}: {len(fails)} of {total} {what} disagree with the official library; {seed_text}",
           "  by class: " + ", ".join(f"{k}={len(v)}" for k, v in sorted(by_class.items()))]
    groups = {}
    for f in sorted(fails, key=Failure.sort_key):
        groups.setdefault(signature(f), []).append(f)
    out.append(f"  {len(groups)} distinct signatures: " + "; ".join(f"{k} x{len(v)}" for k, v in groups.items()))
    shown = [v[0] for v in groups.values()][:MAX_REPORTED]
    for f in shown:
        m = minimize(f) if len(f.data) < 4096 and f.klass != "usage-error" else f
        save_repro(m, seed_text)
        r = m.actual
        out += [f"--- [{m.klass}] schema={m.case.schema} type={m.case.reader}"
                f"{'' if m.case.writer == m.case.reader else ' (written as ' + m.case.writer + ')'} mutation={m.op}",
                f"    hex:      {_hex(m.data)}",
                f"    official: {m.expected.kind}{': ' + m.expected.detail if m.expected.detail else ''}",
                f"              {_short(m.expected.json)}",
                f"    heapwire: {r.describe()}; stderr: {_short(r.stderr_text, 300) or '-'}",
                f"              {_short(r.out.decode('utf-8', 'replace').strip())}",
                f"    why:      {m.note}",
                f"    repro:    {m.repro_path}"]
    return "\n".join(out)

"""Python reference model of the objgraph decoder, written from docs/objgraph-wire.md, and
the vectors of the objgraph core's testbench.

Independence: the model takes the *class definitions* from the compiled table file
(`<stem>.hwsc`, read by rtl/tb/hwsc.py: which message each class is, its base, its
members in order with their kinds and wire widths, the type ids, the message index that
is a header register's reset value) and **computes the layout itself** as the document
specifies (header word, base members at the base's offsets, own members from the base's
data size each at the next multiple of its size, size rounded to the alignment); the
table file's own offsets and sizes are only compared with it (check_layout). Decoding
(allocation, error kinds and offsets, widening, relocation) follows the document's two
phases; the testbench also compares every verdict with the CPU engine
(`heapwire decode --wire objgraph`).
"""

import struct

import hwsc
from hwsc import NONE

NULL = 0xFFFFFFFF

def align_up(v, a):
    return (v + a - 1) // a * a


class MClass:
    """One class as the model sees it."""

    def __init__(self, index, name, msg, type_id, base):
        self.index, self.name, self.msg, self.type_id, self.base = index, name, msg, type_id, base
        self.members = []  # (name, kind, size, wire, offset, target class or None) in memory order
        self.size = self.align = 0

    @property
    def wire_members(self):
        return [m for m in self.members if m[3] > 0]

    @property
    def wire_size(self):
        return sum(m[3] for m in self.members)


class OgModel:
    def __init__(self, schema: hwsc.Schema):
        self.s = schema
        self.ptr = schema.ptr
        self.classes = []
        for ci, c in enumerate(schema.classes):
            self.classes.append(self._layout(ci, c))
        self.by_type = {c.type_id: c.index for c in self.classes if c.type_id != NONE}
        self.by_name = {c.name: c.index for c in self.classes}

    def _mem_size(self, kind):
        return self.ptr if hwsc.is_message(kind) else hwsc.scalar_size(kind)

    def _layout(self, ci, c):
        s = self.s
        mc = MClass(ci, s.messages[c.message].full_name, c.message, c.type_id, c.base)
        off, align = self.ptr, self.ptr  # the header word
        own = [m for m in c.members if m.decl == c.message]
        if c.base != NONE:
            b = self.classes[c.base]
            inherited = c.members[:len(b.members)]
            # base members at the base's offsets; this class decides whether they are on the wire
            for bm, m in zip(b.members, inherited):
                mc.members.append(bm[:3] + (m.wire_width,) + bm[4:])
            align = max(align, b.align)
            off = max([bm[4] + bm[2] for bm in b.members], default=self.ptr)  # the base's data size
        for m in own:
            f = s.member_field(m)
            size = self._mem_size(f.kind)
            off = align_up(off, size)
            align = max(align, size)
            tgt = s.class_of(f.sub) if hwsc.is_message(f.kind) else None
            mc.members.append((f.name, f.kind, size, m.wire_width, off, tgt))
            off += size
        mc.size, mc.align = align_up(off, align), align
        return mc

    def check_layout(self):
        """The table file's layout must be the one the model computed."""
        for mc, c in zip(self.classes, self.s.classes):
            assert (mc.size, mc.align) == (c.size, c.align), f"{mc.name}: size/align {c.size}/{c.align}, model {mc.size}/{mc.align}"
            got = [(m.offset, m.size, m.wire_width) for m in c.members]
            want = [(m[4], m[2], m[3]) for m in mc.members]
            assert got == want, f"{mc.name}: members {got}, model {want}"

    def is_sub(self, c, t):
        while c != NONE and c is not None:
            if c == t:
                return True
            c = self.classes[c].base
        return False

    def default_regs(self):
        return {c.index: c.msg for c in self.classes}

    # ------------------------------------------------------------------ decoding

    def decode(self, wire: bytes, root_cls: int, base=0, max_image=1 << 30, regs=None):
        """Returns ("ok", image) or (error kind, byte offset), per docs/objgraph-wire.md."""
        regs = regs if regs is not None else self.default_regs()
        if base % 8:
            return "bad_base", 0
        if len(wire) < 4:
            return "truncated", 0
        n = struct.unpack_from("<I", wire, 0)[0]
        if n > (len(wire) - 4) // 4:
            return "count_too_large", 0
        limit = min(max_image, 0xFFFFFFFF)
        cls, offs = [], []
        top, wire_total = 0, 4 + 4 * n
        for i in range(n):
            at = 4 + 4 * i
            c = self.by_type.get(struct.unpack_from("<I", wire, at)[0])
            if c is None:
                return "unknown_type", at
            if i == 0 and not self.is_sub(c, root_cls):
                return "root_type", at
            mc = self.classes[c]
            top = align_up(top, mc.align)
            cls.append(c)
            offs.append(top)
            top += mc.size
            wire_total += mc.wire_size
            if top > limit:
                return "image_too_large", at
        if wire_total > len(wire):
            pos = 4 + 4 * n
            for c in cls:
                for m in self.classes[c].wire_members:
                    if pos + m[3] > len(wire):
                        return "truncated", pos
                    pos += m[3]
            raise AssertionError("unreachable")
        if wire_total < len(wire):
            return "trailing_bytes", wire_total
        if self.ptr == 4 and base + top > 1 << 32:
            return "bad_base", 0
        # references, in wire order
        pos = 4 + 4 * n
        for c in cls:
            for m in self.classes[c].wire_members:
                if hwsc.is_message(m[1]):
                    r = struct.unpack_from("<I", wire, pos)[0]
                    if r != NULL:
                        if r >= n:
                            return "bad_reference", pos
                        if m[5] is None or not self.is_sub(cls[r], m[5]):
                            return "reference_type", pos
                        if r == 0 and base == 0:
                            return "bad_base", pos
                pos += m[3]
        # write
        img = bytearray(top)
        pos = 4 + 4 * n
        for i, c in enumerate(cls):
            mc = self.classes[c]
            o = offs[i]
            img[o:o + self.ptr] = (regs[c] & ((1 << (8 * self.ptr)) - 1)).to_bytes(self.ptr, "little")
            for (_, kind, size, w, moff, _) in mc.wire_members:
                raw = int.from_bytes(wire[pos:pos + w], "little")
                if hwsc.is_message(kind):
                    v = 0 if raw == NULL else base + offs[raw]
                elif kind == hwsc.BOOL:
                    v = int(raw != 0)
                elif hwsc.is_signed(kind) and raw >> (8 * w - 1):
                    v = raw - (1 << (8 * w))  # sign extension from the wire width
                else:
                    v = raw
                img[o + moff:o + moff + size] = (v & ((1 << (8 * size)) - 1)).to_bytes(size, "little")
                pos += w
        return "ok", bytes(img)


# ---------------------------------------------------------------------- serializer


class Obj:
    """A live object for the serializer: its class index and member values by member
    name (references are Obj or None)."""

    def __init__(self, cls, **vals):
        self.cls, self.vals = cls, vals


def serialize(model: OgModel, root: Obj) -> bytes:
    """Objgraph wire bytes of the graph reachable from `root`, objects numbered in prefix
    order (depth-first from the root, each object once, children in member order; an
    explicit stack, so deep graphs do not recurse)."""
    ids, order = {}, []
    stack = [root]
    while stack:
        o = stack.pop()
        if id(o) in ids:
            continue
        ids[id(o)] = len(order)
        order.append(o)
        kids = [o.vals.get(m[0]) for m in model.classes[o.cls].wire_members if hwsc.is_message(m[1])]
        stack.extend(k for k in reversed(kids) if k is not None and id(k) not in ids)
    out = bytearray(struct.pack("<I", len(order)))
    for o in order:
        out += struct.pack("<I", model.classes[o.cls].type_id)
    for o in order:
        for (name, kind, _, w, _, _) in model.classes[o.cls].wire_members:
            v = o.vals.get(name)
            if hwsc.is_message(kind):
                out += struct.pack("<I", NULL if v is None else ids[id(v)])
            else:
                out += ((v or 0) & ((1 << (8 * w)) - 1)).to_bytes(w, "little")
    return bytes(out)


# ---------------------------------------------------------------------- vectors


def expr_tree(model, rng, n_ops):
    """A random expression tree with n_ops Operations (and n_ops + 1 Literals)."""
    lit, op = model.by_name["expr.Literal"], model.by_name["expr.Operation"]
    leaves = [Obj(lit, value=rng.randrange(-2**31, 2**31)) for _ in range(n_ops + 1)]
    while len(leaves) > 1:
        i = rng.randrange(len(leaves) - 1)
        leaves[i:i + 2] = [Obj(op, left=leaves[i], right=leaves[i + 1], type=rng.randrange(4))]
    return leaves[0]


def paper_tree(model):
    """The paper's 3+(5*4): 54 wire bytes (docs/objgraph-wire.md)."""
    lit, op = model.by_name["expr.Literal"], model.by_name["expr.Operation"]
    mult = Obj(op, left=Obj(lit, value=5), right=Obj(lit, value=4), type=2)
    return Obj(op, left=Obj(lit, value=3), right=mult, type=0)


def chain(model, n):
    """The paper's scaled tree (Fig. 18): n Operations, each with a Literal left child."""
    lit, op = model.by_name["expr.Literal"], model.by_name["expr.Operation"]
    node = Obj(lit, value=7)
    for k in reversed(range(n)):
        node = Obj(op, left=Obj(lit, value=(k % 10) - 3), right=node, type=k % 4)
    return node


def _value(rng, kind, w):
    if kind == hwsc.BOOL:
        return rng.choice([0, 1, rng.randrange(256)])  # any non-zero byte is true
    return rng.choice([0, 1, (1 << (8 * w)) - 1, 1 << (8 * w - 1), rng.getrandbits(8 * w), rng.randrange(300)])


def random_graph(model, rng, root_cls, n_max=60):
    """Live objects with shared references and cycles; returns the root."""
    concrete = [c.index for c in model.classes if c.type_id != NONE]
    roots = [c for c in concrete if model.is_sub(c, root_cls)]
    n = rng.choice([1, 2, rng.randrange(1, 8), rng.randrange(1, n_max + 1)])
    objs = [Obj(rng.choice(roots))] + [Obj(rng.choice(concrete)) for _ in range(n - 1)]
    for o in objs:
        for (name, kind, _, w, _, tgt) in model.classes[o.cls].wire_members:
            if hwsc.is_message(kind):
                ok = [x for x in objs if tgt is not None and model.is_sub(x.cls, tgt)]
                o.vals[name] = rng.choice(ok) if ok and rng.random() < 0.8 else None
            else:
                o.vals[name] = _value(rng, kind, w)
    return objs[0]


def raw_graph(model, rng, root_cls, n_max=60):
    """Wire bytes of a random object list whose references may point anywhere valid
    (not necessarily prefix order; unreachable objects allowed)."""
    concrete = [c.index for c in model.classes if c.type_id != NONE]
    roots = [c for c in concrete if model.is_sub(c, root_cls)]
    n = rng.randrange(1, n_max + 1)
    cls = [rng.choice(roots)] + [rng.choice(concrete) for _ in range(n - 1)]
    out = bytearray(struct.pack("<I", n))
    for c in cls:
        out += struct.pack("<I", model.classes[c].type_id)
    for c in cls:
        for (_, kind, _, w, _, tgt) in model.classes[c].wire_members:
            if hwsc.is_message(kind):
                ok = [j for j in range(n) if tgt is not None and model.is_sub(cls[j], tgt)]
                r = rng.choice(ok) if ok and rng.random() < 0.8 else NULL
                out += struct.pack("<I", r)
            else:
                out += (_value(rng, kind, w) & ((1 << (8 * w)) - 1)).to_bytes(w, "little")
    return bytes(out)


def mutants(model, rng, wire):
    """Must-fail (mostly) variants of a valid input: (label, bytes)."""
    n = struct.unpack_from("<I", wire, 0)[0]
    members_at = 4 + 4 * n
    out = []
    if len(wire) > 0:
        out.append(("truncate", wire[:rng.randrange(len(wire))]))
    out.append(("trailing", wire + bytes(rng.randrange(256) for _ in range(rng.randrange(1, 9)))))
    w = bytearray(wire)
    w[0:4] = struct.pack("<I", rng.choice([n + 1, n + 2, (len(wire) - 4) // 4 + 1, 0xFFFFFFFF, rng.getrandbits(32)]))
    out.append(("count", bytes(w)))
    if n:
        w = bytearray(wire)
        bad = [t for t in (2, 5, 6, 99, 4095, 4096, 8999, 65536, NULL) if t not in model.by_type]
        at = 4 + 4 * rng.randrange(n)
        w[at:at + 4] = struct.pack("<I", rng.choice(bad + list(model.by_type)))
        out.append(("type_id", bytes(w)))
    # a reference out of range, to the wrong class, or to object 0
    refs = []
    pos = members_at
    for i in range(n):
        c = model.by_type.get(struct.unpack_from("<I", wire, 4 + 4 * i)[0])
        if c is None:
            break
        for m in model.classes[c].wire_members:
            if hwsc.is_message(m[1]):
                refs.append(pos)
            pos += m[3]
    if refs:
        for v in (n, n + rng.randrange(1, 1000), rng.randrange(n), 0):
            w = bytearray(wire)
            at = rng.choice(refs)
            w[at:at + 4] = struct.pack("<I", v)
            out.append(("ref", bytes(w)))
    w = bytearray(wire)
    if len(w) > 4:
        w[rng.randrange(4, len(w))] ^= 1 << rng.randrange(8)
        out.append(("flip", bytes(w)))
    return out

"""Descriptor-driven random message generator (seeded).

Fills official-library message objects (upb backend) field by field from
the descriptor, favouring edge values. Depth is counted in *wire levels*
(every nested message and every map entry is one level), which is what the
official parser's recursion limit (100) counts.
"""
from __future__ import annotations

import math
import random
import struct

from google.protobuf.descriptor import FieldDescriptor as FD

from . import schemas

# ---------------------------------------------------------------- edge values
I32 = [0, 1, -1, 2, 127, 128, -128, -129, 255, 256, 16383, 16384, 65535, -65536,
       2**31 - 1, -2**31, 2**31 - 2, -2**31 + 1, 1 << 24, -(1 << 24)]
I64 = I32 + [2**63 - 1, -2**63, 2**53 - 1, 2**53, 2**53 + 1, -(2**53) - 1, 2**32, 2**32 - 1,
             -(2**32), 2**31, -(2**31) - 1, 2**62, 10**18, -(10**18)]
U32 = [0, 1, 2, 127, 128, 255, 16383, 16384, 2**31 - 1, 2**31, 2**32 - 1, 2**32 - 2, 1 << 28]
U64 = U32 + [2**64 - 1, 2**64 - 2, 2**63, 2**63 - 1, 2**53 - 1, 2**53, 2**53 + 1, 2**32, 10**19]

DBL = [0.0, -0.0, 1.0, -1.0, 0.5, 0.1, -0.1, 1.5, 100.0, 1e21, 1e22, 1e-7, 1e-6, 123456789.125,
       float("nan"), float("inf"), float("-inf"),
       5e-324, -5e-324,                          # smallest denormal
       2.2250738585072014e-308,                  # smallest normal
       2.225073858507201e-308,                   # largest denormal
       1.7976931348623157e308, -1.7976931348623157e308,
       float(2**53 - 1), float(2**53), float(2**53 + 2), 9007199254740993.0,
       float(2**63), float(2**64), 0.30000000000000004, 1 / 3, math.pi, -math.e, 4.35, 2.5e-5]
_F32_BITS = [0x00000000, 0x80000000, 0x3F800000, 0xBF800000, 0x00000001, 0x80000001,  # ±0, ±1, ±min denormal
             0x007FFFFF, 0x00800000, 0x7F7FFFFF, 0xFF7FFFFF,                           # max denormal, min normal, ±max
             0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000, 0x7F800001,                # ±inf, NaNs
             0x3DCCCCCD, 0x4B800001, 0x4B800000, 0x33D6BF95, 0x3EAAAAAB, 0x40490FDB,
             0x501502F9, 0x2EDBE6FF, 0x47C35000, 0x4CBEBC20]


def f32(bits: int) -> float:
    return struct.unpack("<f", struct.pack("<I", bits & 0xFFFFFFFF))[0]


FLT = [f32(b) for b in _F32_BITS]

STRINGS = ["", "a", "hello world", "é", "héllo wörld", "中文字符", "日本語テキスト", "😀", "👩‍👩‍👧‍👦",
           "\U0001F600\U0001F4A9", "\U00010000", "\U0010FFFF", "\u0000", "a\u0000b", "\x01\x1f\x7f",
           "\"quoted\" \\back\\slash/ /", "\u2028\u2029", "\ufeff", "</script>", "\t\n\r\b\f",
           "\u00ad\u200b\u200d", "Ω≈ç√∫", "\ud7ff\ue000\uffff\ufffd", " ", "null", "true", "0", "-1",
           "\U0001D11E music", "ĀāĂăĄą" * 20]
BYTES = [b"", b"\x00", b"\xff", b"\x00\xff", b"abc", b"\xfb\xff", b"\xfb\xef\xbe", b"\x80" * 7,
         bytes(range(256)), b"\xff\xfe\xfd\xfc"]


class Gen:
    """A seeded generator of official-library messages."""

    def __init__(self, seed: int, huge_prob: float = 0.01):
        self.rng = random.Random(seed)
        self.huge_prob = huge_prob
        self.huge_budget = 0

    # ------------------------------------------------------------ scalars
    def int_of(self, pool, lo, hi):
        r = self.rng.random()
        if r < 0.55:
            return self.rng.choice(pool)
        bits = self.rng.randint(1, max(1, (hi - lo).bit_length()))
        v = self.rng.getrandbits(bits)
        if lo < 0 and self.rng.random() < 0.5:
            v = -v
        return max(lo, min(hi, v))

    def double(self):
        r = self.rng.random()
        if r < 0.5:
            return self.rng.choice(DBL)
        if r < 0.75:
            return struct.unpack("<d", self.rng.getrandbits(64).to_bytes(8, "little"))[0]
        if r < 0.9:
            return self.rng.uniform(-1e6, 1e6)
        return float(self.rng.randint(-(2**53), 2**53))

    def float32(self):
        r = self.rng.random()
        if r < 0.5:
            return self.rng.choice(FLT)
        if r < 0.8:
            return f32(self.rng.getrandbits(32))
        return f32(struct.unpack("<I", struct.pack("<f", self.rng.uniform(-1e4, 1e4)))[0])

    def string(self):
        r = self.rng.random()
        if r < self.huge_prob and self.huge_budget > 0:
            n = self.rng.randint(20_000, 100_000)
            self.huge_budget -= 1
            return self._unicode(n)
        if r < 0.6:
            return self.rng.choice(STRINGS)
        return self._unicode(self.rng.randint(0, 40))

    def _unicode(self, n):
        out = []
        for _ in range(n):
            k = self.rng.random()
            if k < 0.6:
                out.append(chr(self.rng.randint(0x20, 0x7E)))
            elif k < 0.75:
                out.append(chr(self.rng.randint(0x80, 0x7FF)))
            elif k < 0.9:
                c = self.rng.randint(0x800, 0xFFFD)
                out.append(chr(c) if not 0xD800 <= c <= 0xDFFF else "\ue000")
            elif k < 0.97:
                out.append(chr(self.rng.randint(0x10000, 0x10FFFF)))
            else:
                out.append(chr(self.rng.randint(0, 0x1F)))
        return "".join(out)

    def bytes_(self):
        r = self.rng.random()
        if r < self.huge_prob and self.huge_budget > 0:
            self.huge_budget -= 1
            return self.rng.randbytes(self.rng.randint(20_000, 100_000))
        if r < 0.5:
            return self.rng.choice(BYTES)
        return self.rng.randbytes(self.rng.randint(0, 40))

    def enum(self, ed, closed):
        nums = [v.number for v in ed.values]
        if closed or self.rng.random() < 0.8:
            return self.rng.choice(nums)
        return self.rng.choice([-2**31, 2**31 - 1, -1, 5, 77, 1000, 123456, -42, self.rng.randint(-2**31, 2**31 - 1)])

    def scalar(self, fd):
        t = fd.type
        if t in (FD.TYPE_INT32, FD.TYPE_SINT32, FD.TYPE_SFIXED32):
            return self.int_of(I32, -2**31, 2**31 - 1)
        if t in (FD.TYPE_INT64, FD.TYPE_SINT64, FD.TYPE_SFIXED64):
            return self.int_of(I64, -2**63, 2**63 - 1)
        if t in (FD.TYPE_UINT32, FD.TYPE_FIXED32):
            return self.int_of(U32, 0, 2**32 - 1)
        if t in (FD.TYPE_UINT64, FD.TYPE_FIXED64):
            return self.int_of(U64, 0, 2**64 - 1)
        if t == FD.TYPE_DOUBLE:
            return self.double()
        if t == FD.TYPE_FLOAT:
            return self.float32()
        if t == FD.TYPE_BOOL:
            return self.rng.random() < 0.5
        if t == FD.TYPE_STRING:
            return self.string()
        if t == FD.TYPE_BYTES:
            return self.bytes_()
        if t == FD.TYPE_ENUM:
            return self.enum(fd.enum_type, is_closed_enum(fd))
        raise AssertionError(f"not a scalar: {fd.full_name}")

    # ------------------------------------------------------------ messages
    def message(self, full_name: str, target_depth: int | None = None, huge: int = 1):
        """A random message of `full_name`; with target_depth, the wire depth is driven to that many levels."""
        self.huge_budget = huge
        cls = schemas.message_class(full_name)
        m = cls()
        self._fill(m, m.DESCRIPTOR, 1, target_depth)
        return m

    def _fill(self, m, desc, depth, target):
        chain_field = None
        if target is not None and depth < target:
            chain_field = self._chain_field(desc, target - depth)
        density = 0.5 if depth <= 2 else (0.3 if depth <= 4 else 0.12)
        # at chain depth, keep siblings small
        nested_ok = depth < 6 and (target is None or depth < 3)
        oneof_done = set()
        # The pool lists extensions in an order that changes from one process to the next
        # (upb's hash table); sorted, the same seed gives the same corpus on every run.
        extensions = sorted(schemas.pool().FindAllExtensions(desc), key=lambda f: f.number)
        fields = list(desc.fields) + extensions
        self.rng.shuffle(fields)
        if chain_field is not None:
            fields.remove(chain_field)
            fields.append(chain_field)  # last, so other members of its oneof don't clobber it
        for fd in fields:
            if fd is chain_field:
                self._set_chain(m, fd, depth, target)
                continue
            if is_required(fd):
                if self.rng.random() < 0.95:
                    self._set_one(m, fd, depth, nested_ok)
                continue
            if self.rng.random() > density:
                continue
            oo = fd.containing_oneof
            if oo is not None and not oo.name.startswith("_"):
                if oo.name in oneof_done and self.rng.random() < 0.8:
                    continue
                oneof_done.add(oo.name)
            self._set_one(m, fd, depth, nested_ok)

    def _chain_field(self, desc, remaining):
        cands = []
        for fd in desc.fields:
            if fd.type not in (FD.TYPE_MESSAGE, FD.TYPE_GROUP):
                continue
            sub = fd.message_type
            cost = 1
            if sub.GetOptions().map_entry:
                vf = sub.fields_by_name["value"]
                if vf.type != FD.TYPE_MESSAGE:
                    continue
                sub = vf.message_type
                cost = 2
            if cost <= remaining and max_depth(sub.full_name) >= remaining - cost:
                cands.append(fd)
        return self.rng.choice(cands) if cands else None

    def _set_chain(self, m, fd, depth, target):
        entry = fd.message_type
        if entry.GetOptions().map_entry:
            key = self.scalar(entry.fields_by_name["key"])
            sub = _get(m, fd)[key]
            self._fill(sub, sub.DESCRIPTOR, depth + 2, target)
        elif is_repeated(fd):
            lst = _get(m, fd)
            for _ in range(self.rng.randint(0, 1)):
                self._fill(lst.add(), fd.message_type, depth + 1, None if depth > 3 else depth + 2)
            self._fill(lst.add(), fd.message_type, depth + 1, target)
        else:
            sub = _get(m, fd)
            sub.SetInParent()
            self._fill(sub, fd.message_type, depth + 1, target)

    def _count(self):
        r = self.rng.random()
        if r < 0.15:
            return 0
        if r < 0.7:
            return self.rng.randint(1, 3)
        if r < 0.95:
            return self.rng.randint(4, 20)
        return self.rng.randint(50, 300)

    def _set_one(self, m, fd, depth, nested_ok):
        if fd.type in (FD.TYPE_MESSAGE, FD.TYPE_GROUP):
            entry = fd.message_type
            if entry.GetOptions().map_entry:
                kf, vf = entry.fields_by_name["key"], entry.fields_by_name["value"]
                mp = _get(m, fd)
                n = self._count()
                if vf.type == FD.TYPE_MESSAGE:
                    if not nested_ok:
                        return
                    n = min(n, 6)
                for _ in range(n):
                    k = self.scalar(kf)
                    if vf.type == FD.TYPE_MESSAGE:
                        self._fill(mp[k], vf.message_type, depth + 2, None)
                    else:
                        mp[k] = self.scalar(vf)
                return
            if not nested_ok:
                return
            if is_repeated(fd):
                lst = _get(m, fd)
                for _ in range(min(self._count(), 6)):
                    self._fill(lst.add(), fd.message_type, depth + 1, None)
            else:
                sub = _get(m, fd)
                sub.SetInParent()
                self._fill(sub, fd.message_type, depth + 1, None)
            return
        if is_repeated(fd):
            lst = _get(m, fd)
            n = self._count()
            if fd.type in (FD.TYPE_STRING, FD.TYPE_BYTES):
                n = min(n, 30)
            for _ in range(n):
                lst.append(self.scalar(fd))
            return
        _put(m, fd, self.scalar(fd))


def _get(m, fd):
    """A field's value or container; extensions through m.Extensions."""
    return m.Extensions[fd] if fd.is_extension else getattr(m, fd.name)


def _put(m, fd, v):
    if fd.is_extension:
        m.Extensions[fd] = v
    else:
        setattr(m, fd.name, v)


def is_closed_enum(fd) -> bool:
    if fd.type != FD.TYPE_ENUM:
        return False
    # Closedness belongs to the enum's file: proto2 enums are closed, proto3 enums open.
    return bool(fd.enum_type.is_closed)


def is_repeated(fd) -> bool:
    r = getattr(fd, "is_repeated", None)
    if r is not None:
        return r() if callable(r) else bool(r)
    return fd.label == FD.LABEL_REPEATED


def is_required(fd) -> bool:
    r = getattr(fd, "is_required", None)
    if r is not None:
        return r() if callable(r) else bool(r)
    return fd.label == FD.LABEL_REQUIRED


def _msg_children(desc):
    for fd in desc.fields:
        if fd.type in (FD.TYPE_MESSAGE, FD.TYPE_GROUP):
            sub = fd.message_type
            if sub.GetOptions().map_entry:
                vf = sub.fields_by_name["value"]
                if vf.type == FD.TYPE_MESSAGE:
                    yield 2, vf.message_type
            else:
                yield 1, sub


_MAXD: dict = {}


def max_depth(full_name: str) -> float:
    """Maximum additional wire depth reachable below a message type (inf when recursive)."""
    if full_name in _MAXD:
        v = _MAXD[full_name]
        return math.inf if v is None else v
    _MAXD[full_name] = None  # on the stack: a cycle means unbounded
    desc = schemas.descriptor(full_name)
    best = 0
    for cost, sub in _msg_children(desc):
        best = max(best, cost + max_depth(sub.full_name))
    _MAXD[full_name] = best
    return best


def all_fields(full_name: str):
    """Every (message type, field) reachable from full_name, for coverage checks."""
    seen, out, todo = set(), [], [schemas.descriptor(full_name)]
    while todo:
        d = todo.pop()
        if d.full_name in seen:
            continue
        seen.add(d.full_name)
        for fd in d.fields:
            out.append((d.full_name, fd.name))
            if fd.type in (FD.TYPE_MESSAGE, FD.TYPE_GROUP):
                todo.append(fd.message_type)
    return out

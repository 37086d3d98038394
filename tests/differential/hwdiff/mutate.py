"""Wire-level mutators: derive mutants (valid or not) from valid messages.

Each mutant is (op_name, bytes). Structural mutations can act at any
nesting level: the payload of a length-delimited field that tokenizes as a
message is mutated recursively and re-wrapped with a recomputed length.
"""
from __future__ import annotations

import random
import struct
from dataclasses import dataclass

from .runner import varint

INTERESTING = [0x00, 0x80, 0xFF, 0x7F, 0x01, 0x08, 0x0A, 0x0B, 0x0C, 0x0D, 0x0F, 0x12]
MAX_FIELD = (1 << 29) - 1


@dataclass
class Tok:
    start: int
    end: int
    num: int
    wt: int
    hdr_end: int  # start of the value (after tag and, for LEN, the length)


class Malformed(Exception):
    pass


def read_varint(data: bytes, i: int, limit: int):
    n, shift = 0, 0
    while True:
        if i >= limit or shift > 63:
            raise Malformed
        b = data[i]
        i += 1
        n |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return n & 0xFFFFFFFFFFFFFFFF, i


def tokenize(data: bytes, start: int = 0, limit: int | None = None, end_group: int | None = None):
    """Top-level fields of a message; raises Malformed."""
    limit = len(data) if limit is None else limit
    toks, i = [], start
    while i < limit:
        s = i
        tag, i = read_varint(data, i, limit)
        num, wt = tag >> 3, tag & 7
        if num == 0:
            raise Malformed
        if wt == 0:
            _, i = read_varint(data, i, limit)
            toks.append(Tok(s, i, num, wt, i))
        elif wt == 1:
            i += 8
            toks.append(Tok(s, i, num, wt, i - 8))
        elif wt == 5:
            i += 4
            toks.append(Tok(s, i, num, wt, i - 4))
        elif wt == 2:
            n, i = read_varint(data, i, limit)
            h = i
            i += n
            toks.append(Tok(s, i, num, wt, h))
        elif wt == 3:
            h = i
            _, i = tokenize_group(data, i, limit, num)
            toks.append(Tok(s, i, num, wt, h))
        elif wt == 4:
            if end_group == num:
                return toks, s
            raise Malformed
        else:
            raise Malformed
        if i > limit:
            raise Malformed
    if end_group is not None:
        raise Malformed
    return toks, i


def tokenize_group(data, i, limit, num):
    toks, j = tokenize(data, i, limit, end_group=num)
    _, after = read_varint(data, j, limit)
    return toks, after


def fields(data: bytes):
    try:
        return tokenize(data)[0]
    except (Malformed, IndexError):
        return None


def tag(num: int, wt: int) -> bytes:
    return varint((num << 3) | wt)


def padded_varint(n: int, width: int) -> bytes:
    """n encoded in exactly `width` bytes (non-minimal when width is larger), width may exceed 10."""
    out = bytearray()
    for k in range(width):
        b = (n >> (7 * k)) & 0x7F if k < 10 else 0
        out.append(b | (0x80 if k < width - 1 else 0))
    return bytes(out)


def group(num: int, body: bytes = b"") -> bytes:
    return tag(num, 3) + body + tag(num, 4)


def nested_groups(num: int, depth: int) -> bytes:
    return tag(num, 3) * depth + tag(num, 4) * depth


def nested_messages(num: int, depth: int, inner: bytes = b"", width: int = 0) -> bytes:
    """`inner` wrapped in `depth` length-delimited fields `num` (a recursive message field),
    their tags and lengths in `width` bytes each (padded, non-minimal) when it is not 0."""
    out = inner
    for _ in range(depth):
        if width:
            out = padded_varint((num << 3) | 2, width) + padded_varint(len(out), width) + out
        else:
            out = tag(num, 2) + varint(len(out)) + out
    return out


BAD_UTF8 = [b"\xff", b"\xc0\x80", b"\xc3", b"\xe2\x82", b"\xed\xa0\x80", b"\xed\xbf\xbf", b"\xf4\x90\x80\x80",
            b"\xf8\x88\x80\x80\x80", b"\x80", b"a\xfeb", b"\xe0\x80\xaf", b"\xf0\x8f\xbf\xbf", b"\xc1\xbf"]
ODD_UTF8 = [b"\xef\xbb\xbf", b"\xf4\x8f\xbf\xbf", b"\xed\x9f\xbf", b"\xee\x80\x80", b"\x00", b"\xc2\x80"]
BIG_VARINTS = [0, 1, 2, 0x7F, 0x80, 2**31 - 1, 2**31, 2**32 - 1, 2**32, 2**32 + 1, 2**63 - 1, 2**63, 2**64 - 1,
               2**64 - 2, 0xFFFFFFFF80000000, 0x100000002, 2**35 + 5]
UNKNOWN_NUMS = [15, 16, 99, 1000, 2048, 19000, 19999, 262144, MAX_FIELD, MAX_FIELD - 1, 77777]


class Mutator:
    def __init__(self, rng: random.Random, known_numbers=()):
        self.rng = rng
        self.known = list(known_numbers) or [1]

    # ---------------------------------------------------------------- raw ops
    def bitflip(self, d, other):
        if not d:
            return self.insert_unknown(d, other)
        b = bytearray(d)
        for _ in range(self.rng.choice([1, 1, 1, 2, 3])):
            i = self.rng.randrange(len(b))
            b[i] ^= 1 << self.rng.randrange(8)
        return bytes(b)

    def subst(self, d, other):
        if not d:
            return bytes([self.rng.choice(INTERESTING)])
        b = bytearray(d)
        b[self.rng.randrange(len(b))] = self.rng.choice(INTERESTING)
        return bytes(b)

    def truncate(self, d, other):
        return d[: self.rng.randrange(len(d) + 1)] if d else d

    def splice(self, d, other):
        i = self.rng.randrange(len(d) + 1)
        j = self.rng.randrange(len(other) + 1)
        return d[:i] + other[j:]

    def concat(self, d, other):
        return d + other  # merge semantics: always valid when both are

    def insert_random(self, d, other):
        i = self.rng.randrange(len(d) + 1)
        return d[:i] + self.rng.randbytes(self.rng.randint(1, 6)) + d[i:]

    # ---------------------------------------------------------------- field ops
    def _unknown_field(self):
        r = self.rng.random()
        num = self.rng.choice(UNKNOWN_NUMS + self.known) if r < 0.8 else self.rng.randint(1, MAX_FIELD)
        wt = self.rng.choice([0, 1, 2, 3, 5, 0, 2, 3])
        if wt == 0:
            return tag(num, 0) + varint(self.rng.choice(BIG_VARINTS))
        if wt == 1:
            return tag(num, 1) + self.rng.randbytes(8)
        if wt == 5:
            return tag(num, 5) + self.rng.randbytes(4)
        if wt == 2:
            body = self.rng.choice([b"", b"abc", self.rng.randbytes(self.rng.randint(0, 20)), b"\x08\x01"])
            return tag(num, 2) + varint(len(body)) + body
        # well-formed group, possibly with nested content and nested groups
        body = b""
        for _ in range(self.rng.randint(0, 3)):
            k = self.rng.random()
            if k < 0.3:
                body += tag(self.rng.randint(1, 50), 0) + varint(self.rng.choice(BIG_VARINTS))
            elif k < 0.5:
                body += tag(self.rng.randint(1, 50), 2) + b"\x02hi"
            elif k < 0.7:
                body += tag(self.rng.randint(1, 50), 5) + b"\x00\x00\x80\x3f"
            else:
                body += group(self.rng.randint(1, 50), tag(1, 0) + b"\x01")
        return group(num, body)

    def insert_unknown(self, d, other):
        f = fields(d)
        pos = self.rng.choice([t.start for t in f] + [len(d)]) if f else len(d)
        return d[:pos] + self._unknown_field() + d[pos:]

    def bad_group(self, d, other):
        num = self.rng.choice(UNKNOWN_NUMS + self.known)
        k = self.rng.randrange(5)
        junk = [tag(num, 3),                                  # start without end
                tag(num, 4),                                  # end without start
                tag(num, 3) + tag(num + 1, 4),                # mismatched end
                tag(num, 3) + tag(num, 3) + tag(num, 4),      # unbalanced nesting
                tag(num, 3) + b"\x08",                        # truncated inside
                ][k]
        return self._at_boundary(d, junk)

    def bad_wiretype(self, d, other):
        num = self.rng.choice(self.known + UNKNOWN_NUMS)
        return self._at_boundary(d, tag(num, self.rng.choice([6, 7])) + b"\x00" * self.rng.randint(0, 8))

    def field_zero(self, d, other):
        wt = self.rng.choice([0, 1, 2, 5, 3])
        junk = {0: b"\x00\x01", 1: b"\x01" + b"\x00" * 8, 2: b"\x02\x00", 5: b"\x05" + b"\x00" * 4, 3: b"\x03\x04"}[wt]
        return self._at_boundary(d, junk)

    def big_field_number(self, d, other):
        # field numbers just past 2^29-1, and tags wider than 32 bits
        num = self.rng.choice([MAX_FIELD + 1, 1 << 30, (1 << 32) // 8 + 3, MAX_FIELD])
        return self._at_boundary(d, tag(num, 0) + b"\x01")

    def _at_boundary(self, d, junk):
        f = fields(d)
        pos = self.rng.choice([t.start for t in f] + [len(d)]) if f else len(d)
        return d[:pos] + junk + d[pos:]

    def duplicate_field(self, d, other):
        f = fields(d)
        if not f:
            return self.bitflip(d, other)
        t = self.rng.choice(f)
        span = d[t.start : t.end]
        pos = self.rng.choice([t.end, len(d), 0])
        return d[:pos] + span + d[pos:]

    def delete_field(self, d, other):
        f = fields(d)
        if not f:
            return self.truncate(d, other)
        t = self.rng.choice(f)
        return d[: t.start] + d[t.end :]

    def swap_fields(self, d, other):
        f = fields(d)
        if not f or len(f) < 2:
            return self.duplicate_field(d, other)
        a, b = sorted(self.rng.sample(range(len(f)), 2))
        ta, tb = f[a], f[b]
        return d[: ta.start] + d[tb.start : tb.end] + d[ta.end : tb.start] + d[ta.start : ta.end] + d[tb.end :]

    def graft_field(self, d, other):
        f = fields(other)
        if not f:
            return self.concat(d, other)
        t = self.rng.choice(f)
        return self._at_boundary(d, other[t.start : t.end])

    def change_wiretype(self, d, other):
        f = fields(d)
        if not f:
            return self.bitflip(d, other)
        t = self.rng.choice(f)
        new = t.wt
        while new == t.wt:
            new = self.rng.choice([0, 1, 2, 5])
        _, te = read_varint(d, t.start, len(d))
        return d[: t.start] + tag(t.num, new) + d[te:]

    def pad_varint(self, d, other):
        """Re-encode a tag, varint value or length non-minimally (2..11 bytes)."""
        f = fields(d)
        if not f:
            return self.bitflip(d, other)
        t = self.rng.choice(f)
        width = self.rng.choice([2, 3, 5, 6, 9, 10, 10, 10, 11, 11])
        which = self.rng.random()
        _, te = read_varint(d, t.start, len(d))
        if which < 0.3 or t.wt not in (0, 2):
            return d[: t.start] + padded_varint((t.num << 3) | t.wt, width) + d[te:]
        v, ve = read_varint(d, te, len(d))
        return d[:te] + padded_varint(v, width) + d[ve:]

    def tenth_byte(self, d, other):
        """10-byte varint whose last byte carries bits beyond 64 (0x02..0x7f), or 11-byte ones."""
        f = fields(d)
        cands = [t for t in f if t.wt == 0] if f else []
        last = self.rng.choice([0x01, 0x02, 0x7F, 0x40])
        v = b"\xff" * 9 + bytes([last]) if self.rng.random() < 0.7 else b"\xff" * 10 + b"\x01"
        if not cands:
            return self._at_boundary(d, tag(self.rng.choice(self.known), 0) + v)
        t = self.rng.choice(cands)
        _, te = read_varint(d, t.start, len(d))
        return d[:te] + v + d[t.end :]

    def set_varint(self, d, other):
        """Replace a varint value with a big/odd one (bool 2, int32 truncation, closed-enum unknowns)."""
        f = fields(d)
        cands = [t for t in f if t.wt == 0] if f else []
        if not cands:
            return self._at_boundary(d, tag(self.rng.choice(self.known), 0) + varint(self.rng.choice(BIG_VARINTS)))
        t = self.rng.choice(cands)
        _, te = read_varint(d, t.start, len(d))
        return d[:te] + varint(self.rng.choice(BIG_VARINTS + [3, 5, 7, 100, 100000])) + d[t.end :]

    def bad_length(self, d, other):
        f = fields(d)
        cands = [t for t in f if t.wt == 2] if f else []
        if not cands:
            return d + tag(self.rng.choice(self.known), 2) + varint(self.rng.randint(1, 50))
        t = self.rng.choice(cands)
        _, te = read_varint(d, t.start, len(d))
        n = t.end - t.hdr_end
        new = self.rng.choice([n + 1, n + 2, len(d) + 10, 2**31 - 1, 2**31, 2**32 - 1, 2**32 + n, 2**63,
                               max(0, n - 1)])
        return d[:te] + varint(new) + d[t.hdr_end :]

    def bad_utf8(self, d, other):
        f = fields(d)
        cands = [t for t in f if t.wt == 2] if f else []
        bad = self.rng.choice(BAD_UTF8 if self.rng.random() < 0.8 else ODD_UTF8)
        if not cands:
            return self._at_boundary(d, tag(self.rng.choice(self.known), 2) + varint(len(bad)) + bad)
        t = self.rng.choice(cands)
        payload = d[t.hdr_end : t.end]
        i = self.rng.randrange(len(payload) + 1)
        payload = payload[:i] + bad + payload[i:] if self.rng.random() < 0.7 else bad
        _, te = read_varint(d, t.start, len(d))
        return d[:te] + varint(len(payload)) + payload + d[t.end :]

    def short_packed(self, d, other):
        """Drop the last byte inside a length-delimited payload but keep the length consistent."""
        f = fields(d)
        cands = [t for t in f if t.wt == 2 and t.end > t.hdr_end] if f else []
        if not cands:
            return self.truncate(d, other)
        t = self.rng.choice(cands)
        payload = d[t.hdr_end : t.end - 1]
        _, te = read_varint(d, t.start, len(d))
        return d[:te] + varint(len(payload)) + payload + d[t.end :]

    def deep_groups(self, d, other):
        depth = self.rng.choice([50, 98, 99, 100, 101, 102, 150])
        return self._at_boundary(d, nested_groups(self.rng.choice(UNKNOWN_NUMS), depth))

    # ---------------------------------------------------------------- driver
    RAW_OPS = ["bitflip", "bitflip", "subst", "subst", "truncate", "splice", "concat", "insert_random"]
    FIELD_OPS = ["insert_unknown", "insert_unknown", "bad_group", "bad_wiretype", "field_zero", "big_field_number",
                 "duplicate_field", "duplicate_field", "delete_field", "swap_fields", "graft_field",
                 "change_wiretype", "pad_varint", "pad_varint", "tenth_byte", "set_varint", "set_varint",
                 "bad_length", "bad_utf8", "bad_utf8", "short_packed", "deep_groups"]

    def mutate(self, d: bytes, other: bytes):
        if self.rng.random() < 0.3:
            op = self.rng.choice(self.RAW_OPS)
            return op, getattr(self, op)(d, other)
        return self._structural(d, other, 0)

    def _structural(self, d, other, level):
        f = fields(d)
        if f and self.rng.random() < 0.55:
            subs = [t for t in f if t.wt == 2 and t.end > t.hdr_end and fields(d[t.hdr_end : t.end])]
            if subs:
                t = self.rng.choice(subs)
                op, new = self._structural(d[t.hdr_end : t.end], other, level + 1)
                _, te = read_varint(d, t.start, len(d))
                return op, d[:te] + varint(len(new)) + new + d[t.end :]
        op = self.rng.choice(self.FIELD_OPS)
        return (f"{op}@L{level}" if level else op), getattr(self, op)(d, other)

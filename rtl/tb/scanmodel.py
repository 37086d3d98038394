"""The model of rtl/hw_pb_scan.v shared by its testbench and tb/loop_limits (hw_x_chase's
per-byte inputs): for every byte of a stream, the field a tag there would start, as the
CPU engine reads a tag and the value after it (crates/cpu/src/protobuf/wire.rs); and the
hostile and mutated streams both testbenches feed."""

from google.protobuf.internal.encoder import _VarintBytes as varint   # the official encoder

SAT = (1 << 32) - 1


def read_varint(buf, q):
    """(value, length) of the varint at q, bytes past buf read as 0; length 0: no end in 10
    bytes (value: the ten bytes' groups)."""
    v = 0
    for i in range(10):
        b = buf[q + i] if q + i < len(buf) else 0
        v |= (b & 0x7F) << (7 * i)
        if not b & 0x80:
            return v, i + 1
    return v, 0


def scan_model(buf, w, nwords, nb=5):
    """Per word (nwords words of w bytes of buf), per byte p, a dict: tl (the tag's length,
    5 when bad), hl (the header's length: the tag, and a length prefix), wt, n (the number's low nb bits), big (number >= 2^nb), bad (1 tag too long
    or >= 2^32, 2 number 0, 3 the varint or length prefix after it too long), e (the field's
    end, saturated), hx / nx (one-hot: the header's / field's end from the word's first byte,
    0 past the next word), z (a length of 0). hw_pb_scan's outputs (w = 16)."""
    out = []
    for i in range(nwords):
        row = []
        for p in range(w):
            q = i * w + p
            tag, tlen = read_varint(buf, q)
            tbad = tlen == 0 or tlen > 5 or (tag & (2**64 - 1)) >> 32 != 0
            tl = 5 if tbad else tlen
            wt, num = tag & 7, (tag >> 3) & (2**29 - 1)
            val, vlen = read_varint(buf, q + tl)
            vover = vlen == 0
            vl = vlen or 10
            v35 = val & (2**35 - 1)
            vbad = (wt == 0 and vover) or (wt == 2 and (vover or vl > 5))
            hl = tl + (vl if wt == 2 else 0)
            fl = tl + {0: vl, 1: 8, 2: vl, 5: 4}.get(wt, 0)
            rel = p + fl + (v35 if wt == 2 and not vbad else 0)
            row.append(dict(
                tl=tl, hl=hl, wt=wt, n=num & ((1 << nb) - 1), big=int(num >> nb != 0),
                bad=1 if tbad else 2 if num == 0 else 3 if vbad else 0,
                e=min(i * w + rel, SAT),
                hx=1 << (p + hl) if p + hl < 2 * w else 0, nx=1 << rel if rel < 2 * w else 0,
                z=int(wt == 2 and not vbad and v35 == 0)))
        out.append(row)
    return out


def hostile(rng, n):
    """Bytes made to break a decoder: continuation runs, 5/6-byte length prefixes, huge lengths,
    over-long tags, number 0, every wire type."""
    out = bytearray()
    while len(out) < n:
        c = rng.randint(0, 9)
        if c == 0:
            out += bytes([rng.randint(0x80, 0xFF) for _ in range(rng.randint(1, 14))]) + bytes([rng.randint(0, 0x7F)])
        elif c == 1:   # a type 2 tag, then a non-minimal length prefix of 5 or 6 bytes
            out += bytes([rng.randint(1, 15) << 3 | 2]) + bytes([rng.randint(0x80, 0xFF) for _ in range(rng.randint(4, 5))]) + bytes([rng.randint(0, 0x7F)])
        elif c == 2:   # a tag over 2^32 in 5 bytes, or a tag of 6 bytes
            out += bytes([0xFF, 0xFF, 0xFF, 0xFF, rng.choice([0x10, 0x0F, 0x7F, 0x8F]), 0x01])
        elif c == 3:   # field number 0 with each wire type, also as a non-minimal tag
            out += bytes([rng.randint(0, 7)]) if rng.random() < 0.5 else bytes([0x80 | rng.randint(0, 7), 0x00])
        elif c == 4:   # any wire type
            out += varint(rng.randint(1, 5000) << 3 | rng.randint(0, 7))
        elif c == 5:   # a 5-byte length whose value is past 2^32 (saturated end)
            out += bytes([0x0A, 0xFF, 0xFF, 0xFF, 0xFF, rng.choice([0x0F, 0x7F, 0x10])])
        elif c == 6:   # a 10-byte varint, or an 11-byte one
            out += bytes([0x08]) + bytes([0xFF] * rng.choice([9, 10])) + bytes([rng.choice([0x01, 0x7F])])
        else:
            out += rng.randbytes(rng.randint(1, 8))
    return bytes(out[:n])


def mutate(rng, data):
    """A valid stream with a few bytes changed, inserted or dropped."""
    b = bytearray(data)
    for _ in range(rng.randint(1, 6)):
        if not b:
            break
        k = rng.randrange(len(b))
        op = rng.randint(0, 2)
        if op == 0:
            b[k] = rng.randint(0, 255)
        elif op == 1:
            b[k:k] = bytes([0x80 | rng.randint(0, 127)])
        else:
            del b[k]
    return bytes(b)

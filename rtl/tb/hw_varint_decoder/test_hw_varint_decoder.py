"""cocotb testbench for rtl/hw_varint_decoder.v (cocotb 2.x), plus pytest checks that
the Python reference model follows the official protobuf library.

The varint rule (what the official Python package 6.x does, upb and pure-Python backends):
  * at most 10 bytes; if the 10th byte still has bit 7 set the varint is over-long (error);
  * bits beyond bit 63 are dropped: 9 x 0xff + 0x7f == 9 x 0xff + 0x01 == 2^64-1,
    9 x 0xff + 0x02 == 2^63-1;
  * a tag varint (upb) must be at most 5 bytes and below 2^32.
"""

import random
import sys
from pathlib import Path

import pytest

import cocotb
from cocotb.triggers import Timer
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # rtl/tb (tbutil, hwsc) when run as a script
from tbutil import expect_param_error, run_cocotb, seed_for

RTL_DIR = Path(__file__).resolve().parents[2]
TB_DIR = Path(__file__).resolve().parent
MASK64 = (1 << 64) - 1

# --------------------------------------------------------------------------- reference model


def ref_varint(window, avail):
    """window: up to 10 bytes (LSB first); avail: valid byte count (>= 10 means ten).
    Returns dict(ok, length, value, incomplete, overlong, over32)."""
    window = bytes(window) + bytes(10 - len(window))
    a = min(avail, 10)
    for i in range(a):
        if window[i] < 0x80:
            v = 0
            for j in range(i + 1):
                v |= (window[j] & 0x7F) << (7 * j)
            v &= MASK64
            return dict(ok=1, length=i + 1, value=v, incomplete=0, overlong=0,
                        over32=int(i + 1 > 5 or (v >> 32) != 0))
    if a < 10:
        return dict(ok=0, length=0, value=None, incomplete=1, overlong=0, over32=0)
    return dict(ok=0, length=0, value=None, incomplete=0, overlong=1, over32=0)


def encode_varint(v):
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def random_window(rng):
    """A 10-byte window whose varint is 1..11+ bytes long, with extreme payloads mixed in."""
    n = rng.choice(list(range(1, 11)) * 3 + [10, 10, 10, 11, 12])
    out = bytearray()
    for i in range(10):
        p = rng.choice([0x00, 0x7F, 0x01, rng.randrange(128), rng.randrange(128)])
        if i < n - 1:
            out.append(0x80 | p)
        elif i == n - 1:
            out.append(p)
        else:
            out.append(rng.randrange(256))
    return bytes(out)


# --------------------------------------------------------------------------- the official library as oracle


def _message_class():
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

    fdp = descriptor_pb2.FileDescriptorProto(name="hw_varint_tb.proto", package="hwtb", syntax="proto3")
    m = fdp.message_type.add(name="M")
    F = descriptor_pb2.FieldDescriptorProto
    m.field.add(name="u64", number=1, type=F.TYPE_UINT64, label=F.LABEL_OPTIONAL)
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fdp)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("hwtb.M"))


def official_decode(varint_bytes):
    """Parse field 1 (uint64) = varint_bytes with the official library; None on error."""
    from google.protobuf.message import DecodeError

    M = _message_class()
    try:
        return M.FromString(b"\x08" + bytes(varint_bytes)).u64
    except DecodeError:
        return None


def official_accepts_tag(tag_bytes):
    from google.protobuf.message import DecodeError

    M = _message_class()
    try:
        M.FromString(bytes(tag_bytes) + b"\x05")
        return True
    except DecodeError:
        return False


RULE_CASES = [
    # (bytes, expected value or None for an error)  -- the documented rule
    (b"\xff" * 9 + b"\x01", MASK64),
    (b"\xff" * 9 + b"\x7f", MASK64),  # bits beyond 63 dropped, not an error
    (b"\xff" * 9 + b"\x02", (1 << 63) - 1),
    (b"\xff" * 9 + b"\x00", (1 << 63) - 1),
    (b"\x80" * 9 + b"\x7e", 0),
    (b"\x80" * 9 + b"\x00", 0),  # non-minimal 10-byte zero is fine
    (b"\x80\x00", 0),
    (b"\xff" * 9 + b"\x81\x00", None),  # 11 bytes: over-long
    (b"\x80" * 10 + b"\x00", None),
    (b"\x80" * 10, None),  # no terminator at all
    (b"\x81", None),  # truncated
    (b"\xac\x02", 300),
]


def test_rule_matches_official_library():
    """The rule implemented in RTL, as observed in the official protobuf package."""
    for bs, expected in RULE_CASES:
        assert official_decode(bs) == expected, bs.hex()
        r = ref_varint(bs[:10], len(bs))
        if expected is None:
            assert not r["ok"] or r["length"] < len(bs)
        else:
            assert r["ok"] and r["length"] == len(bs) and r["value"] == expected, bs.hex()


def test_reference_model_matches_official_library():
    rng = random.Random(7)
    for _ in range(3000):
        w = random_window(rng)
        r = ref_varint(w, 10)
        if r["ok"]:
            assert official_decode(w[: r["length"]]) == r["value"], w.hex()
            # and every truncation of it is rejected
            assert official_decode(w[: r["length"] - 1]) is None
        else:
            assert r["overlong"]
            assert official_decode(w + b"\x00") is None, w.hex()
    for v in [0, 1, 127, 128, 300, (1 << 32) - 1, 1 << 32, (1 << 63), MASK64] + [rng.getrandbits(64) for _ in range(500)]:
        e = encode_varint(v)
        assert ref_varint(e, len(e))["value"] == v


def test_tag_rule_matches_upb():
    from google.protobuf.internal import api_implementation

    if api_implementation.Type() != "upb":
        pytest.skip("tag length rule is upb's; pure-Python backend is laxer")
    for n in range(1, 11):  # field 1, wire type 0, padded to n bytes
        tag = b"\x08" if n == 1 else b"\x88" + b"\x80" * (n - 2) + b"\x00"
        assert official_accepts_tag(tag) == (not ref_varint(tag, n)["over32"]), n
    for last in (0x00, 0x0F, 0x10, 0x7F):  # 5-byte tags, value below / above 2^32
        tag = bytes([0x88, 0x80, 0x80, 0x80, last])
        r = ref_varint(tag, 5)
        if last <= 0x0F:
            assert not r["over32"]
        else:
            assert r["over32"] and not official_accepts_tag(tag)


# --------------------------------------------------------------------------- cocotb tests


async def check(dut, window, avail):
    window = bytes(window) + bytes(10 - len(window))
    dut.in_bytes.value = int.from_bytes(window, "little")
    dut.avail_bytes.value = avail
    await Timer(1, unit="ns")
    exp = ref_varint(window, avail)
    got = dict(ok=int(dut.ok.value), length=int(dut.length.value),
               incomplete=int(dut.incomplete.value), overlong=int(dut.overlong.value),
               over32=int(dut.over32.value))
    for k in ("ok", "length", "incomplete", "overlong", "over32"):
        assert got[k] == exp[k], f"{window.hex()} avail {avail}: {k} {got[k]} expected {exp[k]}"
    if exp["ok"]:
        v = int(dut.value.value)
        assert v == exp["value"], f"{window.hex()} avail {avail}: value {v:#x} expected {exp['value']:#x}"


@cocotb.test()
async def test_rule_cases(dut):
    """The documented rule cases, with every avail count."""
    for bs, _ in RULE_CASES:
        for avail in range(0, 12):
            await check(dut, bs[:10], avail)


@cocotb.test()
async def test_every_continuation_pattern(dut):
    """All 1024 continuation-bit patterns over ten bytes (random payloads) with every
    avail count 0..10 plus saturated counts."""
    rng = random.Random(seed_for("patterns"))
    max_avail = (1 << len(dut.avail_bytes)) - 1
    for pattern in range(1024):
        w = bytes(((0x80 if (pattern >> i) & 1 else 0) | rng.choice([0, 0x7F, rng.randrange(128)])) for i in range(10))
        for avail in list(range(0, 11)) + [max_avail]:
            await check(dut, w, avail)


@cocotb.test()
async def test_random_and_encoded_values(dut):
    """Encodings of random and boundary 64-bit values (including int32 -1 as 10 bytes)
    and random windows."""
    rng = random.Random(seed_for("random"))
    max_avail = (1 << len(dut.avail_bytes)) - 1
    values = [0, 1, 127, 128, 16383, 16384, (1 << 31) - 1, (1 << 32) - 1, 1 << 32, (1 << 35) - 1, 1 << 35,
              (1 << 63) - 1, 1 << 63, MASK64]
    values += [rng.getrandbits(rng.randrange(1, 65)) for _ in range(2000)]
    for v in values:
        e = encode_varint(v)
        junk = bytes(rng.randrange(256) for _ in range(10 - len(e)))
        await check(dut, e + junk, rng.choice([len(e), 10, max_avail, rng.randrange(0, 11)]))
    for _ in range(3000):
        await check(dut, random_window(rng), rng.randrange(0, max_avail + 1))


# --------------------------------------------------------------------------- pytest entry


def _build_and_test(avail_width):
    run_cocotb(TB_DIR, "hw_varint_decoder", [RTL_DIR / "hw_varint_decoder.v"], f"aw{avail_width}",
               {"AVAIL_WIDTH": avail_width})


@pytest.mark.parametrize("avail_width", [4, 5])
def test_hw_varint_decoder(avail_width):
    _build_and_test(avail_width)


def test_bad_parameters_rejected(tmp_path):
    expect_param_error(tmp_path, "hw_varint_decoder", RTL_DIR / "hw_varint_decoder.v", "AVAIL_WIDTH=3",
                       "AVAIL_WIDTH must be in 4..32")


if __name__ == "__main__":
    _build_and_test(5)

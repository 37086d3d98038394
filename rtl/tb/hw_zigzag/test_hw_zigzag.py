"""cocotb testbench for rtl/hw_zigzag.v (cocotb 2.x): ZigZag decode against a Python
model and against the official protobuf library's sint32 / sint64 decoding."""

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


def ref_zigzag(v, width):
    """Decoded value as a WIDTH-bit two's-complement pattern."""
    mask = (1 << width) - 1
    return ((v >> 1) ^ (-(v & 1))) & mask


def to_signed(v, width):
    return v - (1 << width) if v >> (width - 1) else v


def test_model_matches_official_library():
    """sint32 / sint64 of the official library == zigzag of the (truncated) varint value."""
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

    fdp = descriptor_pb2.FileDescriptorProto(name="hw_zz_tb.proto", package="hwzz", syntax="proto3")
    m = fdp.message_type.add(name="M")
    F = descriptor_pb2.FieldDescriptorProto
    m.field.add(name="s32", number=1, type=F.TYPE_SINT32, label=F.LABEL_OPTIONAL)
    m.field.add(name="s64", number=2, type=F.TYPE_SINT64, label=F.LABEL_OPTIONAL)
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fdp)
    M = message_factory.GetMessageClass(pool.FindMessageTypeByName("hwzz.M"))

    def varint(v):
        out = bytearray()
        while True:
            b, v = v & 0x7F, v >> 7
            out.append(b | (0x80 if v else 0))
            if not v:
                return bytes(out)

    rng = random.Random(3)
    for v in [0, 1, 2, 3, (1 << 32) - 1, (1 << 32) - 2, (1 << 32) + 1, (1 << 64) - 1, 1 << 63] + \
            [rng.getrandbits(64) for _ in range(300)]:
        msg = M.FromString(b"\x08" + varint(v) + b"\x10" + varint(v))
        assert msg.s32 == to_signed(ref_zigzag(v & 0xFFFFFFFF, 32), 32), hex(v)
        assert msg.s64 == to_signed(ref_zigzag(v, 64), 64), hex(v)


@cocotb.test()
async def test_zigzag(dut):
    width = len(dut.value_in)
    rng = random.Random(seed_for("zigzag"))
    mask = (1 << width) - 1
    values = [0, 1, 2, 3, 4, mask, mask - 1, 1 << (width - 1), (1 << (width - 1)) - 1]
    values += [rng.getrandbits(width) for _ in range(2000)]
    for v in values:
        dut.value_in.value = v
        await Timer(1, unit="ns")
        assert int(dut.value_out.value) == ref_zigzag(v, width), hex(v)


def _build_and_test(width):
    run_cocotb(TB_DIR, "hw_zigzag", [RTL_DIR / "hw_zigzag.v"], f"w{width}", {"WIDTH": width})


@pytest.mark.parametrize("width", [32, 64])
def test_hw_zigzag(width):
    _build_and_test(width)


def test_bad_parameters_rejected(tmp_path):
    expect_param_error(tmp_path, "hw_zigzag", RTL_DIR / "hw_zigzag.v", "WIDTH=16", "WIDTH must be 32 or 64")


if __name__ == "__main__":
    _build_and_test(64)

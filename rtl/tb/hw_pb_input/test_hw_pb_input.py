"""cocotb testbench for hw_pb_input (rtl/hw_pb_input.v; cocotb 2.x, Icarus Verilog): the
protobuf core's input stage. A random stream of encoded fields (tags of 1-5 bytes of every
wire type, values and lengths of 1-10 bytes, short and long strings, overlong tags,
continuation bytes without end) read through a window with any number of valid bytes
(garbage past them). The reader's move is given to the stage a cycle ahead, as the Stream
Reader gives it (step, step_len): it holds (with a skip length that is not taken), skips
the shown field whole or the hinted bytes, skips forward, back (a length modulo 2^32),
16-64 bytes past spec's skip (same low bits), 0 bytes, or jumps, and restarts (to 0);
the bounds' next values hold, pop, enter or move. Checks, every cycle, against a model of
the two registered decode sets (cur at the position, spec at the end of the shown field,
or the hinted skip) that compares positions: which set is shown (shown_spec), the tag
varint and the varint after it (found, length, value; every whole varint's value also
against the official protobuf library's decoder), the 32-bit limit, the header length,
the valid bytes, the bytes left to both bounds and the checks against them (lengths and
the value within the bytes left, the field's length and where it ends against them; the
frame's end after a pop or entering a
child too), and `fresh` (the shown set is at the position, bounds held or popped or
entered, no restart)."""

import random
import sys
from pathlib import Path

import pytest

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import ReadOnly, RisingEdge
from google.protobuf.internal import decoder as pb_decoder
from google.protobuf.internal.encoder import _VarintBytes as varint   # the official encoder
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # rtl/tb (tbutil, hwsc) when run as a script
from tbutil import run_cocotb, seed_for

RTL_DIR = Path(__file__).resolve().parents[2]
TB_DIR = Path(__file__).resolve().parent
M32 = (1 << 32) - 1


def decode(window, avail):
    """hw_varint_decoder over the window's first bytes: (found, length, value); the length
    is 0 when no byte with bit 7 clear is among the first min(avail, 10)."""
    for i in range(min(avail, 10)):
        if not window[i] & 0x80:
            value = 0
            for k in range(i + 1):
                value |= (window[k] & 0x7F) << (7 * k)
            value &= (1 << 64) - 1
            # the official decoder agrees on every whole varint
            ref, end = pb_decoder._DecodeVarint(bytes(window[:i + 1]), 0)
            assert (ref, end) == (value, i + 1), "model disagrees with protobuf's decoder"
            return True, i + 1, value
    return False, 0, None


def field_len(wt, tfound, tlen, vfound, hdr, vval):
    """The length of the field a set describes, as the input stage takes it (None: longer
    than 15 bytes, or not known)."""
    if not tfound:
        return 0
    fl = {0: hdr, 1: tlen + 8, 5: tlen + 4}.get(wt, tlen)
    if wt == 2:
        if vfound and vval >> 32:
            return None
        fl = hdr + (vval & M32) if vfound else tlen
    return fl if fl <= 15 else None


def decode_set(window, avail, pos, fr_end, vend, up=0, dn=0, base=None):
    """One decode set: the tag and the varint after it at byte 0 of window (avail bytes
    valid), the bytes left to both bounds, the field's length. base: the reader's position
    (the set's own when None), from which the frame bounds' value checks count."""
    found, tlen, tval = decode(window, avail)
    rest = window[tlen:] + bytes(tlen)
    vfound, vlen, vval = decode(rest, avail - tlen)

    # the field's length from the tag on (unspecified without the tag, or without the
    # length prefix for wire type 2)
    wt = tval & 7 if found else None
    fld = (None if not found else tlen + vlen if wt == 0 else (tlen + vlen + vval) & M32 if wt == 2 and vfound
           else None if wt == 2 else tlen + 4 if wt == 5 else tlen + 8)

    def past(end):
        """The set is past a frame bound as seen from the reader's position (base)."""
        return base is not None and (end - base) & M32 < (pos - base) & M32

    def bnd(end, frame=True):
        """The bound checks against end - pos bytes left, as (value, mask of the bits
        specified): {tag_len <= b, hdr_len <= b, wav >= b, the header and the varint after
        it within b (0 without the varint for a frame bound, else unspecified), the field's
        length >= b, == b (unspecified without it, and for wire type 2 unless the header
        and the length are within b)}, with {av < 10, av < 5} on top (av: the bytes a tag
        decode may read, b when the window covers it, else the window's). A frame bound's value checks count from the
        reader's position, so they are unspecified for a set past the bound as seen from
        there (its b wraps)."""
        b = (end - pos) & M32
        beyond = frame and past(end)
        av = b if avail >= b else avail
        v = ((av < 10) << 7 | (av < 5) << 6 | (tlen <= b) << 5 | (tlen + vlen <= b) << 4 | (avail >= b) << 3
             | int(bool(vfound) and tlen + vlen + vval <= b) << 2)
        # (wire type 2: where the header and the length are within the bound only)
        fld_known = fld is not None and (wt != 2 or (v & 0b10100 == 0b10100 and not beyond))
        if fld_known:
            v |= (fld >= b) << 1 | int(fld == b)
        mask = 0b11111000 | (0b100 if (vfound or frame) and not beyond else 0) | (0b11 if fld_known else 0)
        return v & mask, mask

    def tl(end):
        """The tag read as a length prefix within end - pos bytes (tag_len + tag_val <= b,
        the tag found and below 2^32); unspecified for a set past the bound as seen from
        the reader's position (as the value checks above)."""
        if past(end):
            return None
        b = (end - pos) & M32
        return int(bool(found) and tval >> 32 == 0 and tlen + tval <= b)
    return dict(pos=pos, wav=avail, brem_fr=(fr_end - pos) & M32, brem_v=(vend - pos) & M32,
                brem_up=(up - pos) & M32, brem_dn=(dn - pos) & M32,
                bnd_fr=bnd(fr_end), bnd_v=bnd(vend, False), bnd_up=bnd(up), bnd_dn=bnd(dn), fld_len=fld,
                tlen_fr=tl(fr_end), tlen_up=tl(up), tlen_dn=tl(dn),
                tag_found=int(found), tag_len=tlen, tag_val=tval,
                tag_o32=int(found and (tlen > 5 or tval >> 32 != 0)),
                val_found=int(vfound), val_len=vlen, val_val=vval, hdr_len=tlen + vlen,
                fl=field_len(tval & 7 if found else 0, found, tlen, vfound, tlen + vlen, vval))


def sets(window, avail, pos, fr_end, vend, up, dn, shown, hint):
    """(cur, spec) registered this cycle: the set at pos, and the set at the end of the
    field the shown set describes (its length taken whatever position it is at), or hint
    bytes on when given (None: 16 or more)."""
    cur = decode_set(window, avail, pos, fr_end, vend, up, dn)
    fl = shown["fl"] if hint is False else hint
    skip = 0 if fl is None else fl
    s_avail = 0 if fl is None or skip > avail else avail - skip
    spec = decode_set(window[skip:] + bytes(skip), s_avail, (pos + skip) & M32, fr_end, vend, up, dn, pos)
    return cur, spec


# model keys not compared with a port: where the set is and its field length as the
# speculative skip takes it; the bytes left to the frame below and to the child, and the
# checks against them (compared as brem_fr / bnd_fr after a pop or an enter)
UNCOMPARED = ("pos", "fl", "brem_up", "brem_dn", "bnd_up", "bnd_dn", "tlen_up", "tlen_dn")


def compared(dut, st):
    """(name, port value, model value) for each output the model st specifies: a value
    without its varint's end is unspecified (None); the bound checks are (value, mask of
    the bits specified)."""
    for k, v in st.items():
        if v is None or k in UNCOMPARED:
            continue
        got = int(getattr(dut, k).value)
        if k.startswith("bnd_"):
            v, mask = v
            got &= mask
        yield k, got, v


def random_field(rng):
    """A field's bytes: a tag of 1-5 bytes and a value of its wire type (lengths short or
    long), sometimes an overlong tag or continuation bytes without end."""
    r = rng.random()
    if r < 0.08:
        return bytes(rng.randrange(0x80, 0x100) for _ in range(rng.randrange(4, 14)))
    wt = rng.choice([0, 0, 1, 2, 2, 5, 3, 4, 6, 7])
    tag = varint(rng.choice([rng.randrange(1, 16), rng.randrange(1, 1 << 29)]) << 3 | wt)
    if r < 0.12:
        tag = bytes(b | 0x80 for b in tag) + bytes([0x80] * rng.randrange(1, 4)) + b"\x00"
    if wt == 0:
        return tag + varint(rng.choice([rng.randrange(128), rng.randrange(1 << 32), rng.getrandbits(64)]))
    if wt in (1, 5):
        return tag + bytes(rng.randrange(256) for _ in range(8 if wt == 1 else 4))
    if wt == 2:
        n = rng.choice([rng.randrange(12), rng.randrange(40)])
        return tag + varint(n) + bytes(rng.randrange(256) for _ in range(n))
    return tag


async def reset(dut):
    """Starts the clock and resets the stage with every input 0."""
    cocotb.start_soon(Clock(dut.clk, 10, unit="ns").start())
    dut.rst.value = 1
    for port in ("restart", "win", "win_avail", "pos", "step", "step_len", "fr_end", "fr_end_up", "fr_end_dn",
                 "hint_en", "hint_fl", "vend", "fr_end_next", "vend_next"):
        getattr(dut, port).value = 0
    for _ in range(2):
        await RisingEdge(dut.clk)
    dut.rst.value = 0


@cocotb.test()
async def test_decodes_and_freshness(dut):
    rng = random.Random(seed_for("pb_input"))
    stream = b"".join(random_field(rng) for _ in range(4000))
    await reset(dut)

    n = 4000
    pos, fr_end, vend, up, dn = 0, 100, 50, 200, 70
    shown = decode_set(bytes(16), 0, 0, 0, 0)   # after reset: cur, all zero
    regs = None   # (cur, spec, restart, fr_end, vend, up, dn, hint, move) registered last cycle
    counts = {"found": 0, "val": 0, "o32": 0, "not_found": 0, "fresh": 0, "stale": 0,
              "restart": 0, "spec": 0, "hint": 0, "pop": 0, "enter": 0,
              "back": 0, "not_taken": 0, "far_alias": 0, "bnd_in": 0, "bnd_out": 0, "fld_end": 0,
              "tlen_in": 0, "tlen_out": 0}
    for t in range(n):
        if regs is not None:
            # what the registers show now: the model compares positions (the stage itself
            # only saw last cycle's move, and next bounds, as small inputs)
            cur, spec, prestart, pfr, pvend, pup, pdn, phint, pmove = regs
            shown = dict(spec if spec["pos"] == pos and cur["pos"] != pos else cur)
            # the frame's end: as registered, the one below (a pop), the child's (entered)
            if pfr != fr_end:
                side = "up" if pup == fr_end else "dn"
                shown["brem_fr"], shown["bnd_fr"] = shown["brem_" + side], shown["bnd_" + side]
                shown["tlen_fr"] = shown["tlen_" + side]
            fresh = int(not prestart and shown["pos"] == pos and vend == pvend and fr_end in (pfr, pup, pdn))
        # this cycle's inputs: a skip hint, the window at pos (any number of valid bytes)
        hint = False
        if rng.random() < 0.1:
            hint = rng.choice([rng.randrange(16), None])
        avail = rng.choice([16, 16, 16, rng.randrange(17)])
        window = stream[pos:pos + avail] + bytes(rng.randrange(256) for _ in range(16 - avail))
        # the bytes spec is decoded past this cycle
        s_skip = shown["fl"] if hint is False else hint
        s_skip = 0 if s_skip is None else s_skip
        # the reader's move this cycle (where it is next cycle): skips the hinted bytes or
        # the shown field whole (the fast paths), something else forward, back, far (also
        # a multiple of 16 past spec's skip), a skip of 0, a restart (to 0), or it holds
        # with a length that is not taken (the state machine waits; a skip past the end)
        restart = int(rng.random() < 0.03)
        step, step_len = 0, rng.choice([0, s_skip, 16 + s_skip, rng.getrandbits(32)])
        move = "hold"
        r = rng.random()
        if restart:
            move = "restart"
        elif r < 0.45 and type(hint) is int:
            step, step_len, move = 1, hint, "hint"
        elif r < 0.45 and shown["fl"] is not None and shown["pos"] == pos:
            step, step_len, move = 1, shown["fl"], "field"
        elif r < 0.58:
            step, step_len, move = 1, rng.randrange(1, 20), "fwd"
        elif r < 0.63:
            step, step_len, move = 1, -rng.randrange(1, 40) & M32, "back"
        elif r < 0.65:
            step, step_len, move = 1, (rng.randrange(len(stream)) - pos) & M32, "jump"
        elif r < 0.68:
            step, step_len, move = 1, 16 * rng.randrange(1, 5) + s_skip, "far_alias"
        elif r < 0.7:
            step, step_len, move = 1, 0, "zero"
        pos_next = 0 if restart else (pos + step_len) & M32 if step else pos
        if not 0 <= pos_next <= len(stream) - 16:
            step, pos_next, move = 0, pos, "hold"   # (the reader would not take it: past the end)
        # bounds next cycle: held, popped to the frame below, entered into the child, or anything
        r = rng.random()
        fr_end_next, vend_next = fr_end, vend
        # (near the position half the time: a bound inside the window, the checks failing;
        # the frame's end also where the field shown now ends)
        if r < 0.03:
            fr_end_next = rng.choice([rng.getrandbits(32), pos + rng.randrange(24), pos + (shown["fld_len"] or 0)])
        elif r < 0.06:
            vend_next = rng.choice([rng.getrandbits(32), pos + rng.randrange(24)])
        elif r < 0.1:
            fr_end_next = up
        elif r < 0.14:
            fr_end_next = dn
        dut.win.value = int.from_bytes(window, "little")
        dut.win_avail.value = avail
        dut.pos.value, dut.fr_end.value, dut.vend.value = pos, fr_end, vend
        dut.fr_end_up.value, dut.fr_end_dn.value = up, dn
        dut.step.value, dut.step_len.value = step, step_len
        dut.fr_end_next.value, dut.vend_next.value = fr_end_next, vend_next
        dut.hint_en.value = int(hint is not False)
        dut.hint_fl.value = 0 if hint is False else 16 if hint is None else hint
        dut.restart.value = restart
        await ReadOnly()
        if regs is not None:
            if fresh:
                counts["pop"] += pfr != fr_end and pup == fr_end
                counts["enter"] += pfr != fr_end and pup != fr_end
                assert shown["brem_fr"] == (fr_end - pos) & M32
            assert int(dut.fresh.value) == fresh, f"cycle {t}: fresh {int(dut.fresh.value)} != {fresh} after {pmove}"
            show_spec = int(spec["pos"] == pos and cur["pos"] != pos)
            assert int(dut.shown_spec.value) == show_spec, f"cycle {t}: shown_spec after {pmove}"
            counts["fresh" if fresh else "stale"] += 1
            counts["restart"] += prestart
            counts["spec"] += fresh and show_spec
            counts["hint"] += fresh and phint is not False and show_spec
            counts["back"] += pmove == "back"
            counts["not_taken"] += pmove == "hold" and pstep_len not in (0, None)
            counts["far_alias"] += pmove == "far_alias"
            for k, got, v in compared(dut, shown):
                if k.startswith("bnd_"):
                    counts["bnd_in"] += got & 0b100100 == 0b100100
                    counts["bnd_out"] += got & 0b100000 == 0 and shown["tag_found"]
                    counts["fld_end"] += got & 0b11 == 0b11
                if k == "tlen_fr":
                    counts["tlen_in" if got else "tlen_out"] += shown["tag_found"]
                assert got == v, f"cycle {t}: {k} = {got:#x}, want {v:#x} (after {pmove})"
            counts["found" if shown["tag_found"] else "not_found"] += 1
            counts["val"] += shown["val_found"]
            counts["o32"] += shown["tag_o32"]
        regs = sets(window, avail, pos, fr_end, vend, up, dn, shown, hint) + (restart, fr_end, vend, up, dn, hint,
                                                                             move)
        pstep_len = step_len
        await RisingEdge(dut.clk)
        pos, fr_end, vend = pos_next, fr_end_next, vend_next
        # the frame below and the child may be anything next cycle
        if rng.random() < 0.1:
            up = rng.choice([fr_end, rng.getrandbits(32)])
        if rng.random() < 0.1:
            dn = rng.choice([pos + rng.randrange(40), rng.getrandbits(32)])
    for k, at_least in (("found", n // 3), ("val", n // 4), ("o32", n // 100), ("not_found", n // 20),
                        ("fresh", n // 3), ("stale", n // 10), ("restart", n // 60), ("spec", n // 6),
                        ("hint", n // 100), ("pop", n // 100), ("enter", n // 100), ("back", n // 50),
                        ("not_taken", n // 10), ("far_alias", n // 60), ("bnd_in", n // 10),
                        ("bnd_out", n // 100), ("fld_end", n // 200), ("tlen_in", n // 100),
                        ("tlen_out", n // 10)):
        assert counts[k] >= at_least, f"only {counts[k]} {k} checks ({counts})"



def placed_window(rng, skip, l1, l2, wt):
    """A window with a tag of l1 bytes (wire type wt) at byte skip and a varint of l2 bytes
    right after it, as far as they fit in 16 bytes (the rest cut off: bytes past the
    window read as 0), random bytes elsewhere."""
    w = [rng.randrange(256) for _ in range(16)]
    tag = [rng.randrange(0x80, 0x100) for _ in range(l1 - 1)] + [rng.randrange(0x80)]
    tag[0] = tag[0] & ~7 | wt
    # the varint after it: a short length prefix near 15 bytes of field, or any value
    val = [rng.randrange(0x80, 0x100) for _ in range(l2 - 1)] + [rng.randrange(0x80)]
    if l2 == 1 and rng.random() < 0.5:
        val = [max(0, min(0x7F, 15 - l1 - 1 + rng.randrange(-2, 3)))]
    for k, b in enumerate(tag + val):
        if skip + k < 16:
            w[skip + k] = b
    return bytes(w)


@cocotb.test()
async def test_every_skip_and_length(dut):
    """The speculative set at every skip 0-15 (and 16 or more) with every tag length 1-10
    and every length 1-10 of the varint after it, with the window's valid bytes ending
    before, inside, at and past each: the set shown after the reader skips there, and the
    lookahead field number of both sets in the same cycle, against the model; a third time
    without the hint, so spec goes past the field the shown set describes (its length).
    (The RTL also checks both sets against its decoders in series every cycle, $fatal.)"""
    rng = random.Random(seed_for("pb_input_picks"))
    await reset(dut)
    fr_end, vend = 0x10000, 0x8000
    dut.fr_end.value, dut.fr_end_next.value, dut.fr_end_up.value, dut.fr_end_dn.value = fr_end, fr_end, 0, 0
    dut.vend.value, dut.vend_next.value = vend, vend
    # (a tag cut off by the window's end once; a varint after it cut off by one byte once)
    cases = [(skip, l1, l2) for skip in range(16) for l1 in range(1, 11) for l2 in range(1, 11)
             if (skip + l1 <= 16 or l2 == 1) and (skip + l1 + l2 <= 16 or l2 == 17 - skip - l1)]
    cases += [(None, l1, 1) for l1 in range(1, 11)]
    # each three times: the valid bytes ending at the varint's end (or the window's), and
    # before, inside or at the tag, inside the varint, or anywhere; then without the hint
    cases = [c + (rep,) for c in cases for rep in range(3)]
    pos, want, seen = 0, None, set()
    for t, (skip, l1, l2, rep) in enumerate(cases):
        s = 0 if skip is None else skip
        window = placed_window(rng, s, l1, l2, rng.choice([0, 1, 2, 2, 5, 3]))
        ends = [s + l1 - 1, s + l1, s + l1 + l2 - 1, rng.randrange(17)]
        avail = max(0, min(16, s + l1 + l2 if rep == 0 else ends[t // 3 % len(ends)]))
        hint = rep < 2
        if not hint:
            # past the field the set shown now describes (after reset: all 0, length 0)
            skip = want[1]["fl"] if want is not None else 0
            s = 0 if skip is None else skip
        cur = decode_set(window, avail, pos, fr_end, vend)
        s_avail = 0 if skip is None or s > avail else avail - s
        spec = decode_set(window[s:] + bytes(s), s_avail, pos + s, fr_end, vend, base=pos)
        dut.win.value = int.from_bytes(window, "little")
        dut.win_avail.value = avail
        dut.pos.value = pos
        dut.hint_en.value = int(hint)
        dut.hint_fl.value = 16 if skip is None else skip
        # the reader skips the hinted bytes (then spec is shown next cycle), or holds
        step = int(s > 0)
        dut.step.value, dut.step_len.value = step, s
        await ReadOnly()
        for name, st in (("cur_num_next", cur), ("spec_num_next", spec)):
            if st["tag_found"]:
                assert int(getattr(dut, name).value) == (st["tag_val"] >> 3) & M32, f"case {t}: {name}"
        if want is not None:
            assert int(dut.fresh.value) == 1
            assert int(dut.shown_spec.value) == want[0], f"case {t - 1}: shown_spec"
            for k, got, v in compared(dut, want[1]):
                assert got == v, f"case {t - 1} {cases[t - 1]}: {k} = {got:#x}, want {v:#x}"
        want = (step, spec if step else cur)
        if skip is not None:
            seen.add((skip, spec["tag_len"], spec["val_len"]))
        await RisingEdge(dut.clk)
        pos += s
    # every skip with a tag found of every length that fits, and a varint after it of every
    # length that fits
    for skip in range(16):
        for l1 in range(1, 17 - skip if skip + 10 > 16 else 11):
            assert (skip, l1, 0) in seen or any((skip, l1, l2) in seen for l2 in range(1, 11)), (skip, l1)
            for l2 in range(1, min(10, 16 - skip - l1) + 1):
                assert (skip, l1, l2) in seen, f"skip {skip}, tag {l1}, varint {l2} not decoded"

def test_hw_pb_input():
    run_cocotb(TB_DIR, "hw_pb_input", [RTL_DIR / "hw_pb_input.v", RTL_DIR / "hw_varint_decoder.v"], "default")

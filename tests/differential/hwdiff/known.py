"""Normalizers for already-reported discrepancies, so triage can look past them.

Only tools/triage.py --explain uses this; the tests never do.
"""
from __future__ import annotations

from google.protobuf.descriptor import FieldDescriptor as FD

from . import mutate, schemas
from .runner import varint

_WT = {FD.TYPE_DOUBLE: 1, FD.TYPE_FIXED64: 1, FD.TYPE_SFIXED64: 1, FD.TYPE_FLOAT: 5, FD.TYPE_FIXED32: 5,
       FD.TYPE_SFIXED32: 5, FD.TYPE_STRING: 2, FD.TYPE_BYTES: 2, FD.TYPE_MESSAGE: 2}


def _wt(fd):
    return _WT.get(fd.type, 0)


def _entry_goes_unknown(entry_desc, payload: bytes, drop_unknown_entries: bool) -> bool:
    toks = mutate.fields(payload)
    if toks is None:
        return False
    for t in toks:
        fd = entry_desc.fields_by_number.get(t.num)
        if fd is None or t.wt != _wt(fd):
            if drop_unknown_entries:
                return True
            continue
        if fd.type == FD.TYPE_ENUM and fd.enum_type.is_closed:
            v, _ = mutate.read_varint(payload, t.hdr_end if t.hdr_end != t.end else _val_start(payload, t), len(payload))
            v = v - (1 << 64) if v >= 1 << 63 else v
            v = ((v + (1 << 31)) % (1 << 32)) - (1 << 31)
            if v not in entry_desc.fields_by_number[t.num].enum_type.values_by_number:
                return True
    return False


def _val_start(data, t):
    _, i = mutate.read_varint(data, t.start, len(data))
    return i


def strip_map_entries(desc, data: bytes, drop_unknown_entries=True, depth=0) -> bytes:
    """Delete map entries the official (upb) parser moves to unknown fields."""
    toks = mutate.fields(data)
    if toks is None or depth > 120:
        return data
    out = bytearray()
    for t in toks:
        fd = desc.fields_by_number.get(t.num)
        chunk = data[t.start:t.end]
        if fd is not None and fd.type == FD.TYPE_MESSAGE and t.wt == 2:
            payload = data[t.hdr_end:t.end]
            sub = fd.message_type
            if sub.GetOptions().map_entry:
                if _entry_goes_unknown(sub, payload, drop_unknown_entries):
                    continue
                new = strip_map_entries(sub, payload, drop_unknown_entries, depth + 1)
            else:
                new = strip_map_entries(sub, payload, drop_unknown_entries, depth + 1)
            _, te = mutate.read_varint(data, t.start, len(data))
            chunk = data[t.start:te] + varint(len(new)) + new
        out += chunk
    return bytes(out)


def normalize_output(text: str) -> str:
    return text.replace('"VERDE"', '"GREEN"')

"""The official library as oracle, and exact JSON comparison."""
from __future__ import annotations

import json
import math

from google.protobuf import json_format
from google.protobuf.descriptor import FieldDescriptor as FD
from google.protobuf.message import DecodeError

from . import gen, mutate, schemas

ACCEPT, REJECT, UNPRINTABLE = "accept", "reject", "unprintable"


class Verdict:
    """What the official library does with some bytes for a reader type.

    kind: ACCEPT (json holds the compact MessageToJson text; a proto2 string holding
          invalid UTF-8 prints as the repr of its bytes, "b'...'", which heapwire
          prints too),
          REJECT (DecodeError), or
          UNPRINTABLE (parsed, but the official JSON printer refuses the message, e.g. a
          proto2 map key holding invalid UTF-8, or an Any whose type is unknown):
          heapwire must refuse too, exit 1 with one stderr line naming kind and offset.
    """

    __slots__ = ("kind", "json", "detail")

    def __init__(self, kind, json_text=None, detail=""):
        self.kind, self.json, self.detail = kind, json_text, detail

    def __repr__(self):
        return f"Verdict({self.kind}, {self.detail or self.json!r})"


def official_json(msg) -> str:
    """The official default proto3 JSON mapping, compact (one line)."""
    return json_format.MessageToJson(msg, indent=None)


def _repeated_group_numbers(reader: str) -> set[int]:
    """Field numbers of the reader's repeated group (repeated DELIMITED) fields and
    extensions."""
    d = schemas.message_class(reader).DESCRIPTOR
    fds = list(d.fields) + list(d.file.pool.FindAllExtensions(d))
    return {f.number for f in fds if f.type == FD.TYPE_GROUP and f.is_repeated}


def as_cpp_reads(reader: str, data: bytes):
    """The bytes upb reads as the C++ library reads `data`, or None when C++ rejects it.

    upb (the Python library's parser) reads a length-delimited record of a repeated group
    field as a group body that runs to an end-group tag, ignoring the length: it may
    accept what every other parser rejects (0a 02 08 05 0c) and reject what they accept
    (0a 02 08 05). The C++ library (as protoc --decode; checked by test_probes.py), Java
    and heapwire keep the record as an unknown field, i.e. print what upb prints without
    it. Only top-level records: no schema here nests a repeated group deeper."""
    nums = _repeated_group_numbers(reader)
    if not nums:
        return data
    toks = mutate.fields(data)
    if toks is None:
        return None  # not even the top level frames: every parser rejects
    drop = [t for t in toks if t.wt == 2 and t.num in nums]
    if not drop:
        return data
    out, i = bytearray(), 0
    for t in drop:
        out += data[i:t.start]
        i = t.end
    return bytes(out + data[i:])


def verdict(reader: str, data: bytes) -> Verdict:
    cls = schemas.message_class(reader)
    m = cls()
    data = as_cpp_reads(reader, data)
    if data is None:
        return Verdict(REJECT, detail="malformed at the top level")
    try:
        m.ParseFromString(data)
    except DecodeError as e:
        return Verdict(REJECT, detail=str(e))
    try:
        return Verdict(ACCEPT, official_json(m))
    except Exception as e:  # noqa: BLE001 - any printer failure: the official library refuses to print
        return Verdict(UNPRINTABLE, detail=f"official JSON printer refuses: {type(e).__name__}: {e}")


def _walk(msg):
    """Yields (field descriptor, value) of every set field of `msg` and its sub-messages."""
    stack = [msg]
    while stack:
        m = stack.pop()
        for fd, val in m.ListFields():
            yield fd, val
            if fd.type in (FD.TYPE_MESSAGE, FD.TYPE_GROUP):
                if fd.message_type.GetOptions().map_entry:
                    vf = fd.message_type.fields_by_name["value"]
                    if vf.type == FD.TYPE_MESSAGE:
                        stack.extend(val[k] for k in val)
                elif gen.is_repeated(fd):
                    stack.extend(val)
                else:
                    stack.append(val)


def serialization_is_defined(msg) -> bool:
    """True when the official deterministic serialization of `msg` is the one order an
    encoder can be held to: no map entries (their order is the library's) and no
    extensions (upb writes them in an order of its own)."""
    return not any(fd.is_extension or (fd.type == FD.TYPE_MESSAGE and fd.message_type.GetOptions().map_entry)
                   for fd, _ in _walk(msg))


def official_bytes(reader: str, text: str) -> bytes | None:
    """The official deterministic serialization of the JSON `text` as a `reader`
    message, or None when that order is not defined (see serialization_is_defined)."""
    m = schemas.message_class(reader)()
    json_format.Parse(text, m, descriptor_pool=schemas.pool())
    return m.SerializePartialToString(deterministic=True) if serialization_is_defined(m) else None


def reaches(desc, pred) -> bool:
    """True if a message of type `desc` can hold a field for which pred(field) holds, at
    any depth."""
    return any(pred(schemas.descriptor(m).fields_by_name[f]) for m, f in gen.all_fields(desc.full_name))


def is_closed_enum(fd) -> bool:
    return fd.type == FD.TYPE_ENUM and gen.is_closed_enum(fd)


def is_map(fd) -> bool:
    return fd.type == FD.TYPE_MESSAGE and fd.message_type.GetOptions().map_entry


def official_parses(reader: str, text: str) -> bool:
    """True if the official JSON parser accepts `text` as a `reader` message."""
    try:
        json_format.Parse(text, schemas.message_class(reader)(), descriptor_pool=schemas.pool())
    except json_format.ParseError:
        return False
    return True


# ------------------------------------------------------------ JSON compare
class JsonSyntaxError(ValueError):
    pass


def _bad_constant(name):
    raise JsonSyntaxError(f"bare {name} is not JSON (the mapping prints \"{name}\" as a string)")


def _parse_int(s):
    return -0.0 if s == "-0" else int(s)


def loads(text: str):
    """Parse JSON strictly: numbers exactly, no bare NaN/Infinity."""
    try:
        return json.loads(text, parse_float=float, parse_int=_parse_int, parse_constant=_bad_constant)
    except json.JSONDecodeError as e:
        raise JsonSyntaxError(str(e)) from e


def _num(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def first_difference(exp, act, path="$"):
    """None if equal, else (path, expected, actual). Dict key order is ignored."""
    if isinstance(exp, dict) and isinstance(act, dict):
        for k in exp:
            if k not in act:
                return (f"{path}.{k}", exp[k], "<missing>")
        for k in act:
            if k not in exp:
                return (f"{path}.{k}", "<missing>", act[k])
        for k in exp:
            d = first_difference(exp[k], act[k], f"{path}.{k}")
            if d:
                return d
        return None
    if isinstance(exp, list) and isinstance(act, list):
        for i, (a, b) in enumerate(zip(exp, act)):
            d = first_difference(a, b, f"{path}[{i}]")
            if d:
                return d
        if len(exp) != len(act):
            return (f"{path}.length", len(exp), len(act))
        return None
    if _num(exp) and _num(act):
        if exp == act and (exp != 0 or math.copysign(1, float(exp)) == math.copysign(1, float(act))):
            return None
        return (path, exp, act)
    if type(exp) is type(act) and exp == act:
        return None
    return (path, exp, act)


def float32_hint(exp, act) -> str:
    """Explain a numeric difference that vanishes at float32 precision."""
    import struct

    if _num(exp) and _num(act):
        try:
            e32 = struct.unpack("<f", struct.pack("<f", float(exp)))[0]
            a32 = struct.unpack("<f", struct.pack("<f", float(act)))[0]
        except OverflowError:
            return ""
        if e32 == a32:
            return " (equal at float32 precision: the printed float is not the shortest round-trip form)"
    return ""

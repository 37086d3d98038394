"""A small reader of heapwire's table file (`heapwire compile -o` writes `<stem>.hwsc`),
written from docs/table-format.md alone, for the testbenches' reference models.

read(path) -> Schema with .ptr, .header_words, .messages, .enums, .classes (plain
dataclasses; names as in the document). The CRC-32 trailer is checked.
"""

import struct
import zlib
from dataclasses import dataclass, field
from typing import List, Optional

NONE = 0xFFFFFFFF

# google.protobuf.FieldDescriptorProto.Type numbers
DOUBLE, FLOAT, INT64, UINT64, INT32, FIXED64, FIXED32, BOOL, STRING, GROUP, MESSAGE, BYTES, \
    UINT32, ENUM, SFIXED32, SFIXED64, SINT32, SINT64 = range(1, 19)

# field flags
F_REPEATED, F_PACKED, F_UTF8, F_CLOSED, F_MAP, F_REQUIRED = (1 << i for i in range(6))
# message flags
M_MAP_ENTRY, M_PROTO3 = 1, 2
# presence kinds
P_IMPLICIT, P_HASBIT, P_ONEOF, P_POINTER = range(4)


def wire_type(kind):
    """Wire type of one value of `kind` (protobuf encoding)."""
    if kind in (DOUBLE, FIXED64, SFIXED64):
        return 1
    if kind in (FLOAT, FIXED32, SFIXED32):
        return 5
    if kind in (STRING, BYTES, MESSAGE):
        return 2
    if kind == GROUP:
        return 3
    return 0


def scalar_size(kind):
    """Bytes of one value in the image (None: strings, bytes and messages)."""
    if kind in (DOUBLE, INT64, UINT64, FIXED64, SFIXED64, SINT64):
        return 8
    if kind in (FLOAT, INT32, UINT32, FIXED32, SFIXED32, SINT32, ENUM):
        return 4
    if kind == BOOL:
        return 1
    return None


def is_message(kind):
    return kind in (MESSAGE, GROUP)


def is_signed(kind):
    return kind in (INT32, INT64, SINT32, SINT64, SFIXED32, SFIXED64, ENUM)


@dataclass
class Field:
    number: int
    kind: int
    flags: int
    presence: int
    presence_index: int
    offset: int
    sub: int
    name: str
    json_name: str
    default: object = None

    @property
    def repeated(self):
        return bool(self.flags & F_REPEATED)


@dataclass
class Oneof:
    name: str
    case_offset: int
    storage_offset: int
    storage_size: int


@dataclass
class Message:
    full_name: str
    size: int
    align: int
    flags: int
    hasbits_offset: int
    hasbit_count: int
    unknown_offset: int
    fields: List[Field] = field(default_factory=list)
    oneofs: List[Oneof] = field(default_factory=list)

    def field(self, number) -> Optional[Field]:
        for f in self.fields:
            if f.number == number:
                return f
        return None


@dataclass
class Enum:
    full_name: str
    closed: bool
    values: list


@dataclass
class Member:
    decl: int       # message index of the declaring class
    field: int      # field index in that message
    offset: int
    size: int
    wire_width: int  # 0: not on the wire
    cpp_member: str


@dataclass
class Class:
    message: int
    type_id: int    # NONE: abstract
    base: int       # class index or NONE
    size: int
    align: int
    cpp_name: str
    members: List[Member]


@dataclass
class Schema:
    ptr: int
    header_words: int
    messages: List[Message]
    enums: List[Enum]
    classes: List[Class]

    def message_index(self, full_name):
        for i, m in enumerate(self.messages):
            if m.full_name == full_name:
                return i
        raise KeyError(full_name)

    def class_of(self, msg_index):
        for ci, c in enumerate(self.classes):
            if c.message == msg_index:
                return ci
        return None

    def is_subclass(self, c, t):
        """Class c is class t or derives from it."""
        while c != NONE:
            if c == t:
                return True
            c = self.classes[c].base
        return False

    def member_field(self, m: Member) -> Field:
        return self.messages[m.decl].fields[m.field]


class _R:
    def __init__(self, b):
        self.b, self.pos = b, 0

    def take(self, n):
        assert self.pos + n <= len(self.b), "table file truncated"
        s = self.b[self.pos:self.pos + n]
        self.pos += n
        return s

    def u8(self):
        return self.take(1)[0]

    def u16(self):
        return struct.unpack("<H", self.take(2))[0]

    def u32(self):
        return struct.unpack("<I", self.take(4))[0]

    def u64(self):
        return struct.unpack("<Q", self.take(8))[0]

    def str(self):
        return self.take(self.u32()).decode("utf-8")

    def blob(self):
        return self.take(self.u32())


def parse(b: bytes) -> Schema:
    assert len(b) >= 12 and b[:8] == b"HWSCHEMA", "not a table file"
    assert struct.unpack("<I", b[-4:])[0] == zlib.crc32(b[:-4]), "table file CRC mismatch"
    r = _R(b[:-4])
    r.take(8)
    version = r.u32()
    assert version == 2, f"table file version {version}"
    ptr, hdr, _ = r.u8(), r.u8(), r.u16()
    nmsg, nenum = r.u32(), r.u32()
    messages = []
    for _ in range(nmsg):
        m = Message(r.str(), *(r.u32() for _ in range(6)))
        nf, no = r.u32(), r.u32()
        for _ in range(nf):
            number, kind, flags, pkind, dkind = r.u32(), r.u8(), r.u8(), r.u8(), r.u8()
            f = Field(number, kind, flags, pkind, r.u32(), r.u32(), r.u32(), r.str(), r.str())
            if dkind in (1, 2, 3, 4):
                f.default = r.u64()
            elif dkind == 5:
                f.default = r.blob()
            m.fields.append(f)
        for _ in range(no):
            m.oneofs.append(Oneof(r.str(), r.u32(), r.u32(), r.u32()))
        messages.append(m)
    enums = []
    for _ in range(nenum):
        name, closed, nv = r.str(), bool(r.u8()), r.u32()
        vals = []
        for _ in range(nv):
            vname = r.str()
            vals.append((vname, struct.unpack("<i", r.take(4))[0]))
        enums.append(Enum(name, closed, vals))
    classes = []
    for _ in range(r.u32()):
        message, type_id, base, size, align = (r.u32() for _ in range(5))
        cpp = r.str()
        members = []
        for _ in range(r.u32()):
            members.append(Member(*(r.u32() for _ in range(5)), r.str()))
        classes.append(Class(message, type_id, base, size, align, cpp, members))
    assert r.pos == len(r.b), "trailing bytes in the table file"
    return Schema(ptr, hdr, messages, enums, classes)


def read(path) -> Schema:
    with open(path, "rb") as f:
        return parse(f.read())

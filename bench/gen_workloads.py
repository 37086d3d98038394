#!/usr/bin/env python3
"""Deterministic benchmark workloads for heapwire.

Writes length-delimited protobuf streams (each message preceded by its length
as a varint, as protobuf's writeDelimitedTo does) plus a manifest.json:

  social_compose_post.bin   heapwire.bench.social.ComposePostRequest   ~252 B
  social_store_post.bin     heapwire.bench.social.StorePostRequest     ~427 B
  social_compose_media.bin  heapwire.bench.social.ComposeMediaRequest  ~76 B
  social_register_user.bin  heapwire.bench.social.RegisterUserRequest  ~103 B
  social_login.bin          heapwire.bench.social.LoginRequest         ~74 B
  gm1.bin                   heapwire.bench.gm1.Record                  ~228 B
  gm2.bin                   heapwire.bench.gm2.Document                ~84 KB

and, so that no decoder is flattered by one hand-written generator, the same
types (plus a scalar-heavy message with every field kind, kinds.EveryKind)
filled field by field from their descriptors with random values, the way the
differential suite (tests/differential/hwdiff/gen.py) makes its corpus: every
varint width and scalar kind, edge values, non-ASCII text, maps and repeated
sub-messages. These `rand_*` files have no size target; their sizes are what
the values make:

  rand_compose_post.bin ... rand_login.bin   the five social requests
  rand_every_kind.bin       heapwire.bench.kinds.EveryKind
  rand_gm1.bin, rand_gm2.bin                 the gm1 / gm2 shapes (gm2 keeps
                                             ~1000 entries a document)

The social-network average sizes are the per-request averages reported for
DeathStarBench's social network in the in-network (de)serialization paper; the
generator does not reproduce them by accident: each message type has one
continuous knob (a text or password length, a media count, an entry count)
that is calibrated by bisection on a pilot sample so that the stream's
average serialized size lands on the target. Achieved averages are printed
and recorded in the manifest; generation fails if one is off by more than 5%
(for files of 100 messages or more; smaller samples only get a warning).

Schemas are loaded through `protoc --descriptor_set_out` and the official
protobuf package's descriptor pool (no generated _pb2 modules), and every
message is serialized with deterministic=True, so the same seed gives the same
bytes.
"""

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time

import struct

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from google.protobuf.descriptor import FieldDescriptor as FD

HERE = os.path.dirname(os.path.abspath(__file__))
SCHEMA_DIR = os.path.join(HERE, "schemas")
SCHEMA_FILES = ["social.proto", "google_message1.proto", "google_message2.proto", "every_kind.proto"]
TOLERANCE = 0.05


def log(*a):
    print("gen_workloads:", *a, file=sys.stderr, flush=True)


# --------------------------------------------------------------------------
# schema loading


def load_pool():
    protoc = shutil.which("protoc")
    if not protoc:
        sys.exit("gen_workloads: protoc not found (apt-get install protobuf-compiler)")
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "bench.pb")
        subprocess.run(
            [protoc, "-I", SCHEMA_DIR, "--include_imports", "--descriptor_set_out=" + out]
            + SCHEMA_FILES,
            check=True,
        )
        with open(out, "rb") as f:
            fds = descriptor_pb2.FileDescriptorSet.FromString(f.read())
    pool = descriptor_pool.DescriptorPool()
    for fd in fds.file:
        pool.Add(fd)
    return pool


def message_class(pool, full_name):
    return message_factory.GetMessageClass(pool.FindMessageTypeByName(full_name))


# --------------------------------------------------------------------------
# realistic-looking content

WORDS = (
    "the a to and of in is it you that for on was with this my at be have just "
    "not are so but we all like one get what out up new now day love time good "
    "today people great night week back home coffee morning weekend friends city "
    "music game team season trip photo video link read thread check update launch "
    "release build deploy server latency cache request queue shard replica network "
    "packet kernel compiler benchmark paper talk conference demo lunch dinner rain "
    "sunny train station airport beach mountain river book movie show episode"
).split()
# Some non-ASCII words (Latin accents, CJK, Cyrillic, Greek, emoji), as real posts have.
WORDS_INTL = (
    "café naïve jalapeño über São Paulo Zürich Kraków Malmö señor crème brûlée "
    "日本 東京 ラーメン 今日 ありがとう 你好 北京 안녕 서울 Привет Москва γειά "
    "🎉 😂 🚀 ❤️ 👍 ☕ 🔥 ✨"
).split()
FIRST_NAMES = (
    "Alice Bob Carol Dave Erin Frank Grace Heidi Ivan Judy Mallory Niaj Olivia "
    "Peggy Rupert Sybil Trent Victor Walter Zoë José Anaïs Jürgen Łukasz Søren "
    "Ayşe Chloé Renée Björn Siobhán Yuki Mei Priya Arjun Fatima Omar Ingrid"
).split()
LAST_NAMES = (
    "Smith Johnson Williams Brown Jones Garcia Miller Davis Rodriguez Martinez "
    "Müller Schäfer Nowak Kowalski Dubois Lefèvre Østergaard Nguyen Tanaka Sato "
    "Kim Park Chen Wang Singh Patel Haddad Yılmaz Ivanova Rossi Ferreira Gómez"
).split()
MEDIA_TYPES = ["png", "jpg", "gif", "mp4"]
DOMAINS = [
    "example.com", "news.example.org", "blog.example.net", "video.example.com",
    "shop.example.co.uk", "docs.example.io", "photos.example.com",
]
PATH_WORDS = "2024 2025 posts article watch story item p en status media tag search".split()
ALNUM = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
N_USERS = 962  # the social graph DeathStarBench ships has 962 users


def utf8_len(s):
    return len(s.encode("utf-8"))


def trim_utf8(s, nbytes):
    b = s.encode("utf-8")[:nbytes]
    return b.decode("utf-8", errors="ignore").rstrip()


def rand_len(rng, mean, spread=0.6, lo=0):
    """A length around `mean` (uniform in mean*(1±spread)), randomly rounded so
    that the expected value is exactly mean*... for a continuous knob."""
    x = rng.uniform(mean * (1 - spread), mean * (1 + spread))
    n = int(x)
    if rng.random() < x - n:
        n += 1
    return max(lo, n)


def rand_count(rng, mean):
    """An integer count whose expected value is `mean` (random rounding)."""
    n = int(mean)
    if rng.random() < mean - n:
        n += 1
    return n


def rand_id64(rng):
    return rng.getrandbits(63)  # unique ids / request ids: full-width int64


def user_id(rng):
    return rng.randrange(N_USERS)


def username(uid):
    return "username_%d" % uid


def alnum(rng, n):
    return "".join(rng.choice(ALNUM) for _ in range(n))


def words_text(rng, nbytes, mentions=(), urls=()):
    """Free text of about `nbytes` UTF-8 bytes with the given @mentions and
    links inserted at random word positions."""
    extra = ["@" + m for m in mentions] + list(urls)
    parts = []
    size = 0
    while size < nbytes:
        w = rng.choice(WORDS_INTL) if rng.random() < 0.06 else rng.choice(WORDS)
        if not parts and w.isascii():
            w = w.capitalize()
        parts.append(w)
        size += utf8_len(w) + 1
    for e in extra:
        parts.insert(rng.randrange(len(parts) + 1), e)
    budget = nbytes + sum(utf8_len(e) + 1 for e in extra)
    return trim_utf8(" ".join(parts), budget)


def short_url(rng):
    return "http://short-url/" + alnum(rng, 10)


def long_url(rng):
    path = "/".join(rng.choice(PATH_WORDS) for _ in range(rng.randint(1, 3)))
    return "https://%s/%s/%s" % (rng.choice(DOMAINS), path, alnum(rng, rng.randint(6, 14)))


def carrier(rng, msg_map):
    # Jaeger's text-map propagation: "uber-trace-id" = trace:span:parent:flags
    # (ids in hex without padding; 32-bit ids as in the sizes we tune to).
    msg_map["uber-trace-id"] = "%x:%x:0:1" % (rng.getrandbits(32), rng.getrandbits(32))


def now_ms(rng):
    return 1_700_000_000_000 + rng.randrange(100_000_000_000)


# --------------------------------------------------------------------------
# per-type builders: build(cls, rng, knob) -> message


def build_login(cls, rng, knob):
    m = cls()
    m.req_id = rand_id64(rng)
    m.username = username(user_id(rng))
    m.password = alnum(rng, rand_len(rng, knob, 0.5, lo=1))
    carrier(rng, m.carrier)
    return m


def build_register_user(cls, rng, knob):
    m = cls()
    uid = user_id(rng)
    m.req_id = rand_id64(rng)
    m.first_name = rng.choice(FIRST_NAMES)
    m.last_name = rng.choice(LAST_NAMES)
    m.username = username(uid)
    m.password = alnum(rng, rand_len(rng, knob, 0.5, lo=1))
    m.user_id = uid
    carrier(rng, m.carrier)
    return m


def build_compose_media(cls, rng, knob):
    m = cls()
    m.req_id = rand_id64(rng)
    for _ in range(max(1, rand_count(rng, knob))):
        m.media_types.append(rng.choice(MEDIA_TYPES))
        m.media_ids.append(rand_id64(rng))
    carrier(rng, m.carrier)
    return m


def post_type(rng):
    r = rng.random()
    return 0 if r < 0.7 else 1 if r < 0.8 else 2 if r < 0.95 else 3


def build_compose_post(cls, rng, knob):
    m = cls()
    uid = user_id(rng)
    m.req_id = rand_id64(rng)
    m.username = username(uid)
    m.user_id = uid
    mentions = [username(user_id(rng)) for _ in range(rng.choice((0, 0, 1, 1, 2)))]
    urls = [long_url(rng) for _ in range(rng.choice((0, 0, 0, 1)))]
    m.text = words_text(rng, rand_len(rng, knob, 0.6, lo=8), mentions, urls)
    for _ in range(rng.choice((0, 0, 0, 1, 1, 2))):
        m.media_ids.append(rand_id64(rng))
        m.media_types.append(rng.choice(MEDIA_TYPES))
    m.post_type = post_type(rng)
    carrier(rng, m.carrier)
    return m


def build_store_post(cls, rng, knob):
    m = cls()
    uid = user_id(rng)
    m.req_id = rand_id64(rng)
    p = m.post
    p.post_id = rand_id64(rng)
    p.creator.user_id = uid
    p.creator.username = username(uid)
    p.req_id = m.req_id
    mention_ids = [user_id(rng) for _ in range(rng.choice((0, 1, 1, 2, 3)))]
    urls = [(short_url(rng), long_url(rng)) for _ in range(rng.choice((0, 1, 1, 2)))]
    p.text = words_text(
        rng, rand_len(rng, knob, 0.6, lo=8), [username(u) for u in mention_ids], [s for s, _ in urls]
    )
    for u in mention_ids:
        p.user_mentions.add(user_id=u, username=username(u))
    for _ in range(rng.choice((0, 0, 1, 1, 2))):
        p.media.add(media_id=rand_id64(rng), media_type=rng.choice(MEDIA_TYPES))
    for s, l in urls:
        p.urls.add(shortened_url=s, expanded_url=l)
    p.timestamp = now_ms(rng)
    p.post_type = post_type(rng)
    carrier(rng, m.carrier)
    return m


def maybe(rng, p):
    return rng.random() < p


def build_gm1(cls, rng, knob):
    """Sparse: each optional field is present with its own probability."""
    m = cls()
    m.name = alnum(rng, rng.randint(6, 14))
    m.kind = rng.randint(1, 20)
    if maybe(rng, 0.9):
        m.version = rng.randint(1, 300)
    if maybe(rng, 0.5):
        m.locale = rng.choice(["en-US", "de-DE", "ja-JP", "pt-BR", "fr-FR"])
    for _ in range(rng.choice((0, 0, 1, 2))):
        m.checksums.append(rng.getrandbits(64))
    if maybe(rng, 0.6):
        m.flags = rng.getrandbits(rng.choice((3, 7, 14)))
    if maybe(rng, 0.4):
        m.origin = rng.choice(DOMAINS)
    m.title = words_text(rng, rand_len(rng, knob, 0.6, lo=4))
    m.active = maybe(rng, 0.7)
    m.archived = maybe(rng, 0.2)
    m.pinned = maybe(rng, 0.1)
    d = m.detail
    d.width = rng.choice((320, 640, 1280, 1920))
    d.height = rng.choice((240, 480, 720, 1080))
    if maybe(rng, 0.3):
        d.depth = rng.choice((8, 10, 12))
    if maybe(rng, 0.6):
        d.label = rng.choice(WORDS) + "-" + alnum(rng, 4)
    d.enabled = maybe(rng, 0.8)
    if maybe(rng, 0.5):
        d.offset = rng.getrandbits(33)
    if maybe(rng, 0.5):
        d.codec = rng.choice(["h264", "vp9", "av1", "hevc"])
    if maybe(rng, 0.4):
        d.stride = rng.choice((1024, 2048, 4096))
    d.mirrored = maybe(rng, 0.1)
    if maybe(rng, 0.3):
        d.rotation = rng.choice((90, 180, 270))
    if maybe(rng, 0.4):
        d.layers = rng.randint(1, 8)
    if maybe(rng, 0.4):
        d.frames = rng.randint(1, 100000)
    d.looping = maybe(rng, 0.2)
    if maybe(rng, 0.5):
        d.duration_us = rng.getrandbits(30)
    if maybe(rng, 0.6):
        d.media_key = rng.getrandbits(62)
    if maybe(rng, 0.5):
        d.bitrate = rng.randint(64_000, 8_000_000)
    if maybe(rng, 0.3):
        d.profile = rng.choice(["baseline", "main", "high"])
    if maybe(rng, 0.4):
        d.channels = rng.choice((1, 2, 6))
    if maybe(rng, 0.5):
        d.content_hash = rng.getrandbits(64)
    if maybe(rng, 0.3):
        d.stamp = rng.getrandbits(64)
    if maybe(rng, 0.6):
        m.priority = rng.randint(-5, 100)
    if maybe(rng, 0.5):
        m.shard = rng.randint(0, 4095)
    if maybe(rng, 0.5):
        m.summary = words_text(rng, rand_len(rng, knob * 0.5, 0.6, lo=3))
    m.created_ms = now_ms(rng)
    if maybe(rng, 0.4):
        m.region = rng.randint(1, 30)
    for _ in range(rng.choice((0, 0, 2, 4))):
        m.tags.append(rng.randint(0, 5000))
    if maybe(rng, 0.5):
        m.score = rng.randint(-1000, 100000)
    if maybe(rng, 0.3):
        m.rank = rng.randint(1, 1000)
    if maybe(rng, 0.3):
        m.depth = rng.randint(1, 12)
    m.visible = maybe(rng, 0.8)
    if maybe(rng, 0.4):
        m.weight = rng.randint(1, 1000)
    if maybe(rng, 0.2):
        m.retries = rng.randint(1, 5)
    if maybe(rng, 0.3):
        m.parent_index = rng.randint(0, 10_000_000)
    m.editable = maybe(rng, 0.5)
    m.cached = maybe(rng, 0.5)
    m.indexed = maybe(rng, 0.6)
    if maybe(rng, 0.5):
        m.revision = rng.randint(1, 100000)
    if maybe(rng, 0.3):
        m.owner_group = rng.randint(1, 500)
    if maybe(rng, 0.3):
        m.source_host = "host-%03d.%s" % (rng.randint(0, 999), rng.choice(DOMAINS))
    if maybe(rng, 0.4):
        m.content_type = rng.choice(["text/html", "application/json", "image/png", "video/mp4"])
    if maybe(rng, 0.3):
        m.ttl_s = rng.choice((60, 300, 3600, 86400))
    if maybe(rng, 0.2):
        m.quota = rng.randint(1, 1 << 20)
    if maybe(rng, 0.15):
        m.trace_note = words_text(rng, rng.randint(8, 24))
    if maybe(rng, 0.5):
        m.updated_ms = now_ms(rng)
    if maybe(rng, 0.5):
        m.ratio = rng.choice((0.25, 0.5, 0.75, 1.5, 3.0, 0.1))
    if maybe(rng, 0.2):
        m.budget = rng.randint(1, 1 << 24)
    if maybe(rng, 0.3):
        m.slot = rng.randint(0, 63)
    if maybe(rng, 0.3):
        m.lane = rng.randint(0, 7)
    if maybe(rng, 0.3):
        m.order_key = rng.randint(0, 1 << 28)
    return m


def build_gm2(cls, rng, knob):
    m = cls()
    m.id = "doc-" + alnum(rng, 16)
    m.revision = rng.randint(1, 5000)
    m.title = words_text(rng, rng.randint(20, 60))
    m.created_ms = now_ms(rng)
    m.compressed = maybe(rng, 0.5)
    for _ in range(rng.randint(1, 4)):
        m.authors.append(rng.choice(FIRST_NAMES) + " " + rng.choice(LAST_NAMES))
    for _ in range(rng.randint(0, 8)):
        m.checksums.append(rng.getrandbits(31))
    m.score = rng.random() * 100
    n = rand_len(rng, knob, 0.1, lo=1)
    for _ in range(n):
        e = m.entries.add()
        e.key = rng.getrandbits(40)
        e.text = words_text(rng, rng.randint(20, 55))
        if utf8_len(e.text) < 20:
            e.text = (e.text + " " + alnum(rng, 20))[:55]
        e.hits = rng.randint(0, 20000)
        if maybe(rng, 0.8):
            e.weight = rng.choice((0.5, 1.0, 1.25, 2.0, 0.125, 3.5))
        if maybe(rng, 0.3):
            e.dirty = True
        if maybe(rng, 0.5):
            e.state = rng.randint(0, 3)
        if maybe(rng, 0.7):
            e.tag = rng.choice(WORDS) + ":" + alnum(rng, rng.randint(4, 12))
        if maybe(rng, 0.2):
            e.shard = rng.randint(0, 63)
        if maybe(rng, 0.5):
            e.delta = rng.randint(-300, 300)
    if maybe(rng, 0.5):
        m.footer = words_text(rng, rng.randint(10, 40))
    return m


# --------------------------------------------------------------------------
# descriptor-driven random messages (the differential suite's way)

# Edge values each integer kind favours, besides random values of every width.
EDGE_I32 = [0, 1, -1, 127, 128, -128, 16383, 16384, 2**31 - 1, -2**31, 1 << 24, -(1 << 24)]
EDGE_I64 = EDGE_I32 + [2**63 - 1, -2**63, 2**53, -(2**53), 2**32, -(2**32), 10**18]
EDGE_U32 = [0, 1, 127, 128, 16383, 16384, 2**31, 2**32 - 1, 1 << 28]
EDGE_U64 = EDGE_U32 + [2**64 - 1, 2**63, 2**53 + 1, 2**32, 10**19]
EDGE_DBL = [0.0, -0.0, 1.0, -1.0, 0.5, 0.1, 1e21, 1e-7, float("inf"), float("-inf"), float("nan"),
            5e-324, 1.7976931348623157e308, 123456789.125]
RAND_STRINGS = ["", "a", "héllo wörld", "中文字符", "日本語テキスト", "😀", "👩‍👩‍👧‍👦", "\U0010FFFF",
                "a\u0000b", "\"quoted\" \\back\\slash", "\u2028\u2029", "Ω≈ç√∫", "ĀāĂăĄą" * 8]


class RandomFill:
    """Fills official-library messages from their descriptors with random values.

    Integers take an edge value or a random one of a random bit length (so
    every varint width, 1 to 10 bytes, appears); floats random bit patterns or
    edge values; strings mix 1- to 4-byte UTF-8 characters; open enums now and
    then an unknown number. `counts` overrides the element count of named
    repeated fields (gm2's ~1000 entries)."""

    def __init__(self, rng, density=0.7, max_depth=3, counts=None):
        self.rng = rng
        self.density = density
        self.max_depth = max_depth
        self.counts = counts or {}

    def int_of(self, edges, lo, hi):
        r = self.rng
        if r.random() < 0.3:
            return r.choice(edges)
        v = r.getrandbits(r.randint(1, max(1, (hi - lo).bit_length() - (1 if lo < 0 else 0))))
        if lo < 0 and r.random() < 0.5:
            v = -v
        return max(lo, min(hi, v))

    def text(self):
        r = self.rng
        if r.random() < 0.3:
            return r.choice(RAND_STRINGS)
        out = []
        for _ in range(r.randint(0, 40)):
            k = r.random()
            if k < 0.6:
                out.append(chr(r.randint(0x20, 0x7E)))
            elif k < 0.75:
                out.append(chr(r.randint(0x80, 0x7FF)))
            elif k < 0.92:
                c = r.randint(0x800, 0xFFFD)
                out.append(chr(c) if not 0xD800 <= c <= 0xDFFF else "\ue000")
            else:
                out.append(chr(r.randint(0x10000, 0x10FFFF)))
        return "".join(out)

    def scalar(self, fd):
        r, t = self.rng, fd.type
        if t in (FD.TYPE_INT32, FD.TYPE_SINT32, FD.TYPE_SFIXED32):
            return self.int_of(EDGE_I32, -2**31, 2**31 - 1)
        if t in (FD.TYPE_INT64, FD.TYPE_SINT64, FD.TYPE_SFIXED64):
            return self.int_of(EDGE_I64, -2**63, 2**63 - 1)
        if t in (FD.TYPE_UINT32, FD.TYPE_FIXED32):
            return self.int_of(EDGE_U32, 0, 2**32 - 1)
        if t in (FD.TYPE_UINT64, FD.TYPE_FIXED64):
            return self.int_of(EDGE_U64, 0, 2**64 - 1)
        if t == FD.TYPE_DOUBLE:
            if r.random() < 0.3:
                return r.choice(EDGE_DBL)
            return struct.unpack("<d", r.getrandbits(64).to_bytes(8, "little"))[0]
        if t == FD.TYPE_FLOAT:
            return struct.unpack("<f", r.getrandbits(32).to_bytes(4, "little"))[0]
        if t == FD.TYPE_BOOL:
            return r.random() < 0.5
        if t == FD.TYPE_STRING:
            return self.text()
        if t == FD.TYPE_BYTES:
            return r.randbytes(r.randint(0, 40))
        if t == FD.TYPE_ENUM:
            nums = [v.number for v in fd.enum_type.values]
            if fd.enum_type.is_closed or r.random() < 0.85:
                return r.choice(nums)
            return r.choice([-1, 77, 1000, 2**31 - 1, -2**31])
        raise AssertionError("not a scalar: " + fd.full_name)

    def count(self, fd):
        if fd.name in self.counts:
            return self.rng.randint(*self.counts[fd.name])
        r = self.rng.random()
        return 0 if r < 0.1 else self.rng.randint(1, 4) if r < 0.7 else self.rng.randint(5, 16)

    def fill(self, m, depth=1):
        for fd in m.DESCRIPTOR.fields:
            required = fd.is_required
            if not required and fd.name not in self.counts and self.rng.random() > self.density:
                continue
            oneof = fd.containing_oneof
            if oneof is not None and m.WhichOneof(oneof.name):  # one member of a oneof
                continue
            self.set_field(m, fd, depth)
        return m

    def set_field(self, m, fd, depth):
        value = getattr(m, fd.name)
        if fd.type == FD.TYPE_MESSAGE and fd.message_type.GetOptions().map_entry:
            kf, vf = fd.message_type.fields_by_name["key"], fd.message_type.fields_by_name["value"]
            for _ in range(self.count(fd)):
                k = self.scalar(kf)
                if vf.type == FD.TYPE_MESSAGE:
                    if depth < self.max_depth:
                        self.fill(value[k], depth + 2)
                else:
                    value[k] = self.scalar(vf)
        elif fd.type == FD.TYPE_MESSAGE:
            if depth >= self.max_depth:
                return
            if fd.is_repeated:
                for _ in range(self.count(fd)):
                    self.fill(value.add(), depth + 1)
            else:
                value.SetInParent()
                self.fill(value, depth + 1)
        elif fd.is_repeated:
            value.extend(self.scalar(fd) for _ in range(self.count(fd)))
        else:
            setattr(m, fd.name, self.scalar(fd))


def random_builder(**kw):
    """A builder (cls, rng, knob) -> message that fills `cls` at random; no knob."""
    def build(cls, rng, knob):
        return RandomFill(rng, **kw).fill(cls())
    return build


# name, proto file, full type, builder, target average size (None: random, no
# target), knob range
WORKLOADS = [
    ("social_compose_post", "social.proto", "heapwire.bench.social.ComposePostRequest",
     build_compose_post, 252, (8, 1000)),
    ("social_store_post", "social.proto", "heapwire.bench.social.StorePostRequest",
     build_store_post, 427, (8, 1500)),
    ("social_compose_media", "social.proto", "heapwire.bench.social.ComposeMediaRequest",
     build_compose_media, 76, (1, 6)),
    ("social_register_user", "social.proto", "heapwire.bench.social.RegisterUserRequest",
     build_register_user, 103, (1, 80)),
    ("social_login", "social.proto", "heapwire.bench.social.LoginRequest",
     build_login, 74, (1, 80)),
    ("gm1", "google_message1.proto", "heapwire.bench.gm1.Record", build_gm1, 228, (4, 400)),
    ("gm2", "google_message2.proto", "heapwire.bench.gm2.Document", build_gm2, 84_000, (50, 3000)),
    ("rand_compose_post", "social.proto", "heapwire.bench.social.ComposePostRequest",
     random_builder(), None, None),
    ("rand_store_post", "social.proto", "heapwire.bench.social.StorePostRequest",
     random_builder(), None, None),
    ("rand_compose_media", "social.proto", "heapwire.bench.social.ComposeMediaRequest",
     random_builder(), None, None),
    ("rand_register_user", "social.proto", "heapwire.bench.social.RegisterUserRequest",
     random_builder(), None, None),
    ("rand_login", "social.proto", "heapwire.bench.social.LoginRequest", random_builder(), None, None),
    ("rand_every_kind", "every_kind.proto", "heapwire.bench.kinds.EveryKind",
     random_builder(density=0.8), None, None),
    ("rand_gm1", "google_message1.proto", "heapwire.bench.gm1.Record",
     random_builder(density=0.5), None, None),
    ("rand_gm2", "google_message2.proto", "heapwire.bench.gm2.Document",
     random_builder(counts={"entries": (800, 1400)}), None, None),
]


def encode_varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def generate(cls, builder, rng, knob, count):
    return [builder(cls, rng, knob).SerializeToString(deterministic=True) for _ in range(count)]


def calibrate(cls, builder, target, knob_range, seed, name, pilot):
    """Bisection on the knob so the pilot sample's average size is `target`
    (average size is monotone in the knob, up to sampling noise)."""
    lo, hi = knob_range
    for _ in range(18):
        mid = (lo + hi) / 2
        rng = random.Random("%s/%s/pilot" % (seed, name))
        msgs = generate(cls, builder, rng, mid, pilot)
        avg = sum(map(len, msgs)) / len(msgs)
        if avg < target:
            lo = mid
        else:
            hi = mid
        if abs(avg - target) / target < 0.002:
            break
    return (lo + hi) / 2


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=os.path.join(HERE, "out"), help="output directory")
    ap.add_argument("--seed", type=int, default=20240601, help="random seed (default 20240601)")
    ap.add_argument("--count", type=int, default=None,
                    help="messages per file (overrides --mb for every file)")
    ap.add_argument("--mb", type=float, default=4.0,
                    help="approximate payload megabytes per file when --count is not given (default 4)")
    ap.add_argument("--only", default=None,
                    help="comma-separated workload names to generate (default: all)")
    args = ap.parse_args()

    os.makedirs(args.out, exist_ok=True)
    pool = load_pool()
    only = set(args.only.split(",")) if args.only else None
    manifest = {"seed": args.seed, "format": "varint-length-delimited protobuf", "files": []}
    failed = []
    for name, proto, full, builder, target, knob_range in WORKLOADS:
        if only and name not in only:
            continue
        t0 = time.time()
        cls = message_class(pool, full)
        if target is None:  # random: no knob; the count from a pilot sample's average size
            knob = None
            if args.count is None:
                rng = random.Random("%s/%s/pilot" % (args.seed, name))
                pilot = generate(cls, builder, rng, knob, 20)
                avg_pilot = sum(map(len, pilot)) / len(pilot)
        else:
            pilot = max(8, min(2000, int(400_000 / target)))
            knob = calibrate(cls, builder, target, knob_range, args.seed, name, pilot)
            avg_pilot = target
        count = args.count or max(1, int(round(args.mb * 1e6 / avg_pilot)))
        rng = random.Random("%s/%s" % (args.seed, name))
        msgs = generate(cls, builder, rng, knob, count)
        payload = sum(map(len, msgs))
        avg = payload / count
        path = os.path.join(args.out, name + ".bin")
        with open(path, "wb") as f:
            for b in msgs:
                f.write(encode_varint(len(b)))
                f.write(b)
        dev = (avg - target) / target if target else 0.0
        ok = abs(dev) <= TOLERANCE
        if not ok and count >= 100:  # tiny samples (--count) may stray; only warn then
            failed.append(name)
        manifest["files"].append({
            "file": name + ".bin",
            "workload": name,
            "proto": proto,
            "type": full,
            "count": count,
            "payload_bytes": payload,
            "file_bytes": os.path.getsize(path),
            "avg_size": round(avg, 2),
            "target_avg_size": target,
            "min_size": min(map(len, msgs)),
            "max_size": max(map(len, msgs)),
            "knob": None if knob is None else round(knob, 4),
        })
        print("%-22s %-42s n=%-6d avg %9.1f B (%s)%s  [%.1fs]" % (
            name, full, count, avg,
            "random, no target" if target is None else "target %6d, %+5.1f%%" % (target, dev * 100),
            "" if ok else "  OUT OF TOLERANCE",
            time.time() - t0), flush=True)
    with open(os.path.join(args.out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=2)
        f.write("\n")
    if failed:
        sys.exit("gen_workloads: average size off target by more than 5%%: %s" % ", ".join(failed))


if __name__ == "__main__":
    main()

"""Checks on bench/gen_workloads.py: determinism, size targets, valid streams."""
import hashlib
import json
import os
import subprocess
import sys

import pytest

BENCH = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, BENCH)
import gen_workloads  # noqa: E402


def run_gen(out, *extra):
    subprocess.run([sys.executable, os.path.join(BENCH, "gen_workloads.py"), "--out", str(out), *extra],
                   check=True, capture_output=True)
    return json.load(open(os.path.join(out, "manifest.json")))


def split(data):
    pos, msgs = 0, []
    while pos < len(data):
        n, shift = 0, 0
        while True:
            b = data[pos]
            pos += 1
            n |= (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                break
        msgs.append(data[pos:pos + n])
        pos += n
    assert pos == len(data)
    return msgs


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    a = tmp_path_factory.mktemp("a")
    return a, run_gen(a, "--mb", "0.3")


def test_sizes_within_tolerance(generated):
    _, manifest = generated
    names = {f["workload"] for f in manifest["files"]}
    assert names == {w[0] for w in gen_workloads.WORKLOADS}
    tuned = [f for f in manifest["files"] if f["target_avg_size"] is not None]
    assert {f["workload"] for f in tuned} == {w[0] for w in gen_workloads.WORKLOADS if w[4] is not None}
    for f in tuned:
        assert abs(f["avg_size"] - f["target_avg_size"]) <= 0.05 * f["target_avg_size"], f


def test_streams_parse_with_official_library(generated):
    out, manifest = generated
    pool = gen_workloads.load_pool()
    for f in manifest["files"]:
        cls = gen_workloads.message_class(pool, f["type"])
        msgs = split(open(os.path.join(out, f["file"]), "rb").read())
        assert len(msgs) == f["count"]
        assert sum(map(len, msgs)) == f["payload_bytes"]
        for b in msgs[:50]:
            m = cls.FromString(b)
            assert m.SerializeToString(deterministic=True) == b


def test_deterministic_and_seed_sensitive(generated, tmp_path):
    out, _ = generated
    again = run_gen(tmp_path / "b", "--mb", "0.3", "--only", "social_login,gm1")
    other = run_gen(tmp_path / "c", "--mb", "0.3", "--only", "social_login", "--seed", "7")
    digest = lambda p: hashlib.sha256(open(p, "rb").read()).hexdigest()
    for f in again["files"]:
        assert digest(out / f["file"]) == digest(tmp_path / "b" / f["file"])
    assert digest(out / "social_login.bin") != digest(tmp_path / "c" / "social_login.bin")


def test_count_flag(tmp_path):
    m = run_gen(tmp_path, "--count", "5", "--only", "gm2,social_store_post")
    assert [f["count"] for f in m["files"]] == [5, 5]


def messages_of(out, manifest, workload):
    f = next(f for f in manifest["files"] if f["workload"] == workload)
    cls = gen_workloads.message_class(gen_workloads.load_pool(), f["type"])
    return [cls.FromString(b) for b in split(open(os.path.join(out, f["file"]), "rb").read())]


def varint_widths(data):
    """The lengths of the varints that open every field's value in `data`, by walking its tags."""
    widths, pos = set(), 0

    def varint(pos):
        start = pos
        while data[pos] & 0x80:
            pos += 1
        return int.from_bytes(data[start:pos + 1], "little"), pos + 1 - start

    while pos < len(data):
        tag, n = varint(pos)
        pos += n
        wire = tag & 7
        if wire == 0:
            _, n = varint(pos)
            widths.add(n)
            pos += n
        elif wire == 1:
            pos += 8
        elif wire == 5:
            pos += 4
        else:
            length = 0
            length, n = varint(pos)
            pos += n + length
    return widths


def test_random_every_kind_covers_every_field_and_width(generated):
    out, manifest = generated
    msgs = messages_of(out, manifest, "rand_every_kind")
    desc = msgs[0].DESCRIPTOR
    seen = set()
    for m in msgs:
        for fd, _ in m.ListFields():
            seen.add(fd.name)
    assert seen == {fd.name for fd in desc.fields}
    widths = set()
    for m in msgs[:200]:
        widths |= varint_widths(m.SerializeToString(deterministic=True))
    assert widths == set(range(1, 11)), widths  # every varint width, 1 to 10 bytes
    assert any(m.level not in (0, 1, 2, 3) for m in msgs)  # unknown values of the open enum
    assert any(any(ord(c) > 0xFFFF for c in m.name) for m in msgs)  # 4-byte UTF-8


def test_random_social_requests_have_maps_repeats_and_non_ascii(generated):
    out, manifest = generated
    for name in ("rand_compose_post", "rand_store_post", "rand_compose_media",
                 "rand_register_user", "rand_login"):
        msgs = messages_of(out, manifest, name)
        assert sum(len(m.carrier) > 1 for m in msgs) > len(msgs) // 2, name
        assert any(any(ord(c) > 0x7F for c in k + v) for m in msgs for k, v in m.carrier.items()), name
    posts = [m.post for m in messages_of(out, manifest, "rand_store_post")]
    assert sum(len(p.user_mentions) > 1 and len(p.urls) > 1 for p in posts) > len(posts) // 10


def test_random_gm2_keeps_its_shape(generated):
    out, manifest = generated
    for m in messages_of(out, manifest, "rand_gm2"):
        assert 800 <= len(m.entries) <= 1400

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
    for f in manifest["files"]:
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

"""The harness catches bugs: the suite run against an official-library stand-in
(tools/fake_heapwire.py) passes, and goes red for every bug the stand-in can inject.

Each bug runs only the slice of the suite that should see it, with few generated
messages, so this stays a matter of seconds.
"""
import os
import subprocess
import sys

import pytest

from hwdiff import schemas

HERE = os.path.dirname(os.path.abspath(__file__))
FAKE = os.path.join(HERE, "tools", "fake_heapwire.py")

# bug -> the slice of the suite that must catch it (pytest arguments, relative to HERE)
SLICES = {
    "float-precision": ["test_differential.py::test_valid_messages[scalars3:hw.p3.Scalars]"],
    "accept-depth": ["test_probes.py", "-k", "depth"],
    "utf8": ["test_probes.py", "-k", "UTF"],
    "print-unprintable": ["test_probes.py", "-k", "UTF"],
    "encode-order": ["test_differential.py::test_encode_from_json_roundtrip[proto2:hw.p2.Basic]"],
    "encode-unpacked": ["test_differential.py::test_encode_from_json_roundtrip[proto2:hw.p2.Basic]"],
}


@pytest.fixture(scope="module")
def descriptor_set(tmp_path_factory):
    """The schemas compiled once for every stand-in process."""
    p = tmp_path_factory.mktemp("fds") / "all.pb"
    p.write_bytes(schemas.all_files().SerializeToString())
    return str(p)


def _suite(args, bug, tmp_path, descriptor_set):
    env = dict(os.environ, HEAPWIRE_BIN=FAKE, FAKE_HEAPWIRE_BUG=bug, HEAPWIRE_DIFF_CASES="8",
               HEAPWIRE_DIFF_REPRO_DIR=str(tmp_path / "repro"), HEAPWIRE_DIFF_DESCRIPTOR_SET=descriptor_set)
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-x", *args],
                          cwd=HERE, env=env, capture_output=True, text=True, timeout=600)


def test_stand_in_passes_without_a_bug(tmp_path, descriptor_set):
    args = sorted({x for a in SLICES.values() for x in a if "::" in x})
    r = _suite(args + ["test_probes.py", "-k", "UTF or depth"], "", tmp_path, descriptor_set)
    assert r.returncode == 0, f"the stand-in without a bug must pass:\n{r.stdout[-3000:]}\n{r.stderr[-2000:]}"


@pytest.mark.parametrize("bug", sorted(SLICES))
def test_injected_bug_is_caught(bug, tmp_path, descriptor_set):
    r = _suite(SLICES[bug], bug, tmp_path, descriptor_set)
    assert r.returncode == 1 and " failed" in r.stdout, (
        f"FAKE_HEAPWIRE_BUG={bug} was not caught (exit {r.returncode}):\n{r.stdout[-3000:]}\n{r.stderr[-2000:]}")

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def pytest_addoption(parser):
    parser.addoption("--thorough", action="store_true", default=False,
                     help="differential suite: 10x more generated messages and mutants")


def pytest_configure(config):
    try:
        thorough = config.getoption("--thorough")
    except ValueError:
        thorough = False
    if thorough:
        os.environ.setdefault("HEAPWIRE_DIFF_THOROUGH", "1")

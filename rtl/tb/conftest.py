"""pytest set-up shared by every cocotb suite under rtl/tb: makes the helpers in this
folder (tbutil.py, hwsc.py) importable from each tb/<module>/test_<module>.py (and, through
the PYTHONPATH the cocotb runner hands the simulator, from the cocotb tests too)."""

import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

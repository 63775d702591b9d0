"""pytest setup: the test support modules (``test/support``: the random
module generator :mod:`modgen`, the differential harness
:mod:`differential`, shared small inputs :mod:`samples`) are importable by
name from every test."""

import pathlib
import sys

SUPPORT = pathlib.Path(__file__).resolve().parent.parent / "support"
if str(SUPPORT) not in sys.path:
    sys.path.insert(0, str(SUPPORT))

"""pytest setup: the test support modules (``test/support``: the random
module generator :mod:`modgen`, the differential harness
:mod:`differential`, shared small inputs :mod:`samples`) are importable by
name from every test."""

import pathlib
import sys

SUPPORT = pathlib.Path(__file__).resolve().parent.parent / "support"
if str(SUPPORT) not in sys.path:
    sys.path.insert(0, str(SUPPORT))

# Every compile in the tests verifies the whole module after every pass
# (--verify-each), so a pass that produces invalid IR fails the tests even
# though a plain compile verifies only what each pass created (ir.md §4).
import os  # noqa: E402

os.environ.setdefault("FETCHC_VERIFY_EACH", "1")

# The kernel compile cache is off in the tests (each compile is a real one,
# and a monkeypatched compiler is never answered from the cache); the tests
# of the cache turn it on explicitly (test_compile_cache.py).
os.environ.setdefault("FETCHC_NO_CACHE", "1")

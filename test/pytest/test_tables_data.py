"""The baked lookup tables (fetchc/target/tables_data.py) against ml_dtypes.

The compile path reads the four tables of hardware.md §2.1 from generated
constants so that it never imports numpy or ml_dtypes; this test rebuilds
every entry independently from ml_dtypes and the encoding rules of seqbin.md
"TABLES", so a stale or hand-edited table fails here.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from fetchc import target

E2M1 = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0]


def _e2m1(code: int) -> float:
    v = E2M1[code & 7]
    return -v if code & 8 else v


@pytest.mark.parametrize("dst", ["f8E4M3FN", "f8E5M2"])
def test_paired_tables(dst: str) -> None:
    dt = {"f8E4M3FN": ml_dtypes.float8_e4m3fn, "f8E5M2": ml_dtypes.float8_e5m2}[dst]
    entries = target.table_entries(target.F4E2M1FN, target.BY_NAME[dst])
    assert len(entries) == 256
    for key in range(256):
        lo = int(np.array([_e2m1(key & 0xF)], dtype=dt).view(np.uint8)[0])
        hi = int(np.array([_e2m1(key >> 4)], dtype=dt).view(np.uint8)[0])
        assert entries[key] == lo | (hi << 8), key


@pytest.mark.parametrize("src", ["f8E4M3FN", "f8E5M2"])
def test_non_paired_tables(src: str) -> None:
    dt = {"f8E4M3FN": ml_dtypes.float8_e4m3fn, "f8E5M2": ml_dtypes.float8_e5m2}[src]
    entries = target.table_entries(target.BY_NAME[src], target.BF16)
    keys = np.arange(256, dtype=np.uint8).view(dt)
    for key in range(256):
        v = float(keys[key])
        if np.isnan(v):  # NaN keys keep their sign: 0x7FC0 / 0xFFC0 (seqbin.md TABLES)
            assert entries[key] == (0xFFC0 if key & 0x80 else 0x7FC0), key
            continue
        want = int(np.array([v], dtype=np.float32).view(np.uint32)[0] >> 16)  # exact: every f8 fits bf16
        assert entries[key] == want, key


def test_lookup_table_is_the_same_data() -> None:
    for (src, dst) in target.LOOKUP_TABLES:
        arr = target.lookup_table(src, dst)
        assert arr.dtype == np.uint16 and arr.tolist() == list(target.table_entries(src, dst))


def test_no_table_for_other_pairs() -> None:
    with pytest.raises(KeyError):
        target.table_entries(target.F32, target.BF16)


def test_compile_path_does_not_import_numpy() -> None:
    """The compile path (docs/architecture.md): compiling every example imports
    neither numpy nor ml_dtypes."""
    import subprocess
    import sys

    import os

    examples = os.path.join(os.path.dirname(__file__), "..", "..", "examples")
    code = (
        "import sys, os, fetchc.cli\n"
        "for f in sorted(os.listdir(sys.argv[1])):\n"
        "    if f.endswith('.mlir'):\n"
        "        assert fetchc.cli.main([os.path.join(sys.argv[1], f), '-o', os.devnull]) == 0, f\n"
        "bad = [m for m in ('numpy', 'ml_dtypes') if m in sys.modules]\n"
        "print(bad)\n"
        "sys.exit(1 if bad else 0)\n"
    )
    r = subprocess.run([sys.executable, "-c", code, examples], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def test_a_checkout_imports_as_the_installed_package():
    """fetchc/dialects and fetchc/passes link to the top-level folders, so
    ``PYTHONPATH=<checkout>`` imports every package without installing."""
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    code = ("import fetchc.dialects.fetch, fetchc.passes.place_dm, fetchc.frontend.parsing, fetchc.golden.run, "
            "fetchc.seqbin.emit, fetchc.target.sequencer; import fetchc.dialects as d; print(list(d.__path__)[0])")
    r = subprocess.run([sys.executable, "-I", "-c", f"import sys; sys.path.insert(0, {str(root)!r}); {code}"],
                       capture_output=True, text=True, cwd="/")
    assert r.returncode == 0, r.stderr
    found = Path(r.stdout.strip())
    assert found == root / "fetchc" / "dialects" and found.is_symlink()
    assert found.resolve() == root / "dialects"

"""Who ends the process (issue 26 item 13; ``fetchc.process.owns_process``).

A successful ``fetchc`` ends with ``os._exit`` after doing what the
interpreter's exit does (threads, ``atexit``, flushing), skipping the
finalisation.  That is right only when fetchc is the whole program: under
``python -m cProfile`` (which writes its profile after the program), a
host's ``runpy``, or with a ``sitecustomize`` that keeps a buffered log
open, what runs after fetchc was lost.  Each case is one real process
(``--version``: a successful command that loads no xDSL); a witness object
in the program's globals prints when the interpreter finalises.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

# The console script as pip writes it (`from fetchc.command import entry`,
# `sys.exit(entry())`), plus a witness that prints when finalised.
SCRIPT = """\
import sys
from fetchc.command import entry


class Witness:
    def __del__(self):
        sys.__stderr__.write("finalised\\n")


witness = Witness()
if __name__ == "__main__":
    sys.exit(entry())
"""


def _run(tmp_path: Path, *argv: str, env: dict | None = None) -> subprocess.CompletedProcess:
    script = tmp_path / "fetchc"
    script.write_text(SCRIPT)
    full = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONSTARTUP")}
    full.update(env or {})
    return subprocess.run(
        [sys.executable, *[str(script) if a == "SCRIPT" else a for a in argv]],
        cwd=tmp_path, capture_output=True, text=True, env=full, timeout=120,
    )  # fmt: skip


def test_the_console_script_owns_its_process_and_exits_fast(tmp_path):
    r = _run(tmp_path, "SCRIPT", "--version")
    assert (r.returncode, r.stdout.startswith("fetchc "), r.stderr) == (0, True, "")  # no "finalised"


def test_under_cprofile_the_profile_is_written(tmp_path):
    r = _run(tmp_path, "-m", "cProfile", "-o", "prof", "SCRIPT", "--version")
    assert r.returncode == 0 and r.stdout.startswith("fetchc ")
    assert (tmp_path / "prof").stat().st_size > 1000  # cProfile wrote it after the program ended
    assert r.stderr == "finalised\n"  # the interpreter's own exit


def test_under_a_host_s_runpy_the_host_goes_on(tmp_path):
    host = "import runpy, sys\nsys.argv = ['fetchc', '--version']\n"
    host += "try:\n    runpy.run_path('fetchc', run_name='__main__')\nexcept SystemExit as e:\n"
    host += "    print('host goes on, status', e.code)\n"
    r = _run(tmp_path, "-c", host)
    assert r.returncode == 0 and r.stdout.splitlines()[1:] == ["host goes on, status 0"], r.stdout


def test_a_sitecustomize_s_buffered_log_is_written(tmp_path):
    """(A ``usercustomize`` counts the same; a virtual environment does not
    load one.)"""
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text('log = open("log.txt", "w")\nlog.write("customised\\n")\n')
    r = _run(tmp_path, "SCRIPT", "--version", env={"PYTHONPATH": str(site)})
    assert r.returncode == 0 and (tmp_path / "log.txt").read_text() == "customised\n"

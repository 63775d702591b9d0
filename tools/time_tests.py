#!/usr/bin/env python3
"""Time the README's test command on fresh clones, paired, wall and CPU.

For each git revision given (``--rev``, default ``HEAD``), every round
clones the repository (``--repo``, default this checkout) into a new
temporary directory, checks the revision out and runs *that revision's*
README test command (the second command of its README, as CI's ``.ci/run``
runs it) from the clone's root: creating the venv, ``pip install``, lit,
pytest.  The command is split at ``&&`` into steps, each run with
``bash -c`` and timed: wall time, and CPU time (user + system) of the step and
everything it waited for (``os.wait4``; lit's fork server is waited for by
lit, its children by it, so their CPU counts).  Revisions alternate within a
round (A B, A B, ...) so that both see the same machine load; the load
average is printed before each run, since wall time on a shared machine
depends on it and CPU time much less.

Prints one line per run and step, then per revision the median over the
rounds of each step and of the total, and with two revisions the ratio of
the second to the first (the median of the per-round ratios).  A failing
step is reported (its exit status) and ends that run.  Nothing is asserted;
timing is for people to read (the tests assert no timing).

Usage::

    python3 tools/time_tests.py                           # HEAD, one run
    python3 tools/time_tests.py --rev 5d0dab2 --rev HEAD --runs 3
    python3 tools/time_tests.py --rev main --keep         # keep the clone

Standard library only.  Each run needs the network or pip's cache for
``pip install``, as the README's command does.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def readme_test_command(readme: str) -> str:
    """The README's second shell command (test/pytest/test_readme.py's rule:
    the fenced blocks before the second-level heading after the first block)."""
    head = readme[: readme.index("\n## ", readme.index("```"))]
    cmds = [c.strip() for c in re.findall(r"```(?:sh|bash)?\n(.*?)```", head, re.S)]
    if len(cmds) < 2:
        raise SystemExit("the README has no test command (second fenced block)")
    return cmds[1]


def _default_sigint() -> None:
    """SIGINT at its default in the step, as in a terminal or CI: this
    script run in the background (``&``) would hand it down ignored, and the
    tests that interrupt fetchc would then fail."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def timed(cmd: str, cwd: Path, log) -> tuple[float, float, int]:
    """``(wall seconds, CPU seconds, exit status)`` of ``bash -c cmd``."""
    start = time.monotonic()
    proc = subprocess.Popen(["bash", "-c", cmd], cwd=cwd, stdout=log, stderr=subprocess.STDOUT,
                            preexec_fn=_default_sigint)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return time.monotonic() - start, usage.ru_utime + usage.ru_stime, proc.returncode


def one_run(repo: str, rev: str, keep: bool) -> dict | None:
    """Clone, check out, run the README test command step by step."""
    work = Path(tempfile.mkdtemp(prefix="fetchc-time-"))
    clone = work / "fetchc"
    sha = subprocess.run(["git", "-C", repo, "rev-parse", "--verify", f"{rev}^{{commit}}"],
                         capture_output=True, text=True, check=True).stdout.strip()
    subprocess.run(["git", "clone", "-q", repo, str(clone)], check=True)
    subprocess.run(["git", "-C", str(clone), "checkout", "-q", sha], check=True)
    commit = subprocess.run(["git", "-C", str(clone), "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True, check=True).stdout.strip()
    steps = [s.strip() for s in readme_test_command((clone / "README.md").read_text()).split("&&")]
    load = os.getloadavg()[0]
    print(f"== {rev} ({commit}) in {clone}, load average {load:.1f}", flush=True)
    times: dict[str, tuple[float, float]] = {}
    log_path = work / "log.txt"
    with open(log_path, "w") as log:
        for step in steps:
            wall, cpu, rc = timed(step, clone, log)
            times[step] = (wall, cpu)
            failed = f"   FAILED (exit {rc})" if rc else ""
            print(f"   {wall:7.1f} s wall {cpu:7.1f} s CPU   {step}{failed}", flush=True)
            if rc:
                print(f"   log: {log_path}")
                return None
    tail = log_path.read_text().strip().splitlines()[-3:]
    for line in tail:
        print(f"   | {line}")
    total = (sum(w for w, _ in times.values()), sum(c for _, c in times.values()))
    print(f"   {total[0]:7.1f} s wall {total[1]:7.1f} s CPU   total", flush=True)
    if not keep:
        shutil.rmtree(work, ignore_errors=True)
    return {"steps": times, "total": total}


def summary(revs: list[str], runs: dict[str, list[dict]]) -> None:
    print("\nmedians over the rounds (wall / CPU, seconds):")
    for rev in revs:
        done = runs[rev]
        if not done:
            print(f"  {rev}: no successful run")
            continue
        print(f"  {rev} ({len(done)} runs):")
        for step in done[0]["steps"]:
            w = statistics.median(r["steps"][step][0] for r in done if step in r["steps"])
            c = statistics.median(r["steps"][step][1] for r in done if step in r["steps"])
            print(f"    {w:7.1f} {c:7.1f}   {step}")
        w = statistics.median(r["total"][0] for r in done)
        c = statistics.median(r["total"][1] for r in done)
        print(f"    {w:7.1f} {c:7.1f}   total")
    if len(revs) == 2 and all(runs[r] for r in revs):
        pairs = list(zip(runs[revs[0]], runs[revs[1]]))
        rw = statistics.median(b["total"][0] / a["total"][0] for a, b in pairs)
        rc = statistics.median(b["total"][1] / a["total"][1] for a, b in pairs)
        print(f"  {revs[1]} / {revs[0]}: wall {rw:.2f}, CPU {rc:.2f} (median of {len(pairs)} paired rounds)")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rev", action="append", help="a git revision to time (repeatable; default HEAD)")
    p.add_argument("--repo", default=str(ROOT), help="the repository to clone (default: this checkout)")
    p.add_argument("--runs", type=int, default=1, help="rounds (default 1)")
    p.add_argument("--keep", action="store_true", help="keep the clones (their paths are printed)")
    a = p.parse_args()
    revs = a.rev or ["HEAD"]
    runs: dict[str, list[dict]] = {r: [] for r in revs}
    for _ in range(a.runs):
        for rev in revs:
            result = one_run(a.repo, rev, a.keep)
            if result:
                runs[rev].append(result)
    summary(revs, runs)
    return 0


if __name__ == "__main__":
    sys.exit(main())

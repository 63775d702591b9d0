"""The lit suite's fork server (test/support/fetchc_server.py and
fetchc_client.py): a command run through it is indistinguishable from the real
``fetchc`` (output, errors, exit status, files, a terminal), commands it
cannot reproduce run for real, and neither a dead nor a stuck server hangs a
client or outlives its parent."""

from __future__ import annotations

import os
import pty
import select
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import fetchc_server
from fetchc_server import PER_TEST_ENV, refusal

ROOT = Path(__file__).resolve().parents[2]
CLIENT = ROOT / "test" / "support" / "fetchc_client.py"
EXAMPLE = ROOT / "examples" / "int8_zero_point_contract.mlir"
REAL = shutil.which("fetchc", path=os.path.dirname(sys.executable)) or shutil.which("fetchc")

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux") or REAL is None,
    reason="the fork server is Linux-only and needs the fetchc command",
)

BAD = (
    "func.func @f(%w: memref<64xi8>) {\n"
    "  %s = fetch.fetch %w : memref<64xi8> -> !fetch.stream<main, [4], [32], i8>\n"
    "  func.return\n}\n"
)


@pytest.fixture(scope="module")
def env():
    """One environment for the server and every command (pytest's own
    changes per test: PYTEST_CURRENT_TEST)."""
    e = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    e["PYTHONHASHSEED"] = "0"
    return e


@pytest.fixture(scope="module")
def server(env, tmp_path_factory):
    log_path = tmp_path_factory.mktemp("server") / "server.log"
    with open(log_path, "w") as log:
        srv = fetchc_server.launch(sys.executable, env, log)
    assert srv is not None, log_path.read_text()
    srv.log_path = log_path
    yield srv
    srv.stop()
    assert srv.proc.poll() is not None


def _log(server) -> str:
    return server.log_path.read_text()


def _client(server, *extra: str, module: bool = False) -> list[str]:
    target = ["-m", "fetchc.cli"] if module else [REAL]
    return [sys.executable, "-I", "-S", str(CLIENT), *extra, server.socket_path, *target]


def _run(argv: list[str], env: dict, cwd: Path, stdin: bytes = b"", **kw) -> subprocess.CompletedProcess:
    return subprocess.run(argv, input=stdin, capture_output=True, env=env, cwd=cwd, timeout=300, **kw)


CASES = {
    "compile to a file": (["EXAMPLE", "-o", "out.bin"], b""),
    "compile stdin to a file": (["-", "-o", "out.bin"], EXAMPLE.read_bytes()),
    "emit mlir to stdout": (["--emit=mlir", "EXAMPLE"], b""),
    "verify error": (["bad.mlir", "-o", "out.bin"], b""),
    "usage error": (["--no-such-flag"], b""),
    "version": (["--version"], b""),
    "help": (["--help"], b""),
    "dis": (["dis", "given.bin"], b""),
    "missing input": (["nope.mlir"], b""),
}


@pytest.fixture(scope="module")
def given_bin() -> bytes:
    import fetchc

    return fetchc.compile(EXAMPLE.read_text(), filename=str(EXAMPLE)).seq_bin


@pytest.mark.parametrize("module", [False, True], ids=["fetchc", "python -m fetchc.cli"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_a_served_command_is_the_real_command(server, env, tmp_path, given_bin, name, module):
    """The console script and ``python -m fetchc.cli`` (the pytest tests'
    spelling), each against the same command run as a process."""
    args, stdin = CASES[name]
    results = []
    for how in ("real", "served"):
        cwd = tmp_path / how
        cwd.mkdir()
        (cwd / "bad.mlir").write_text(BAD)
        (cwd / "given.bin").write_bytes(given_bin)
        argv = [a.replace("EXAMPLE", str(EXAMPLE)) for a in args]
        real = [sys.executable, "-m", "fetchc.cli"] if module else [REAL]
        cmd = [*real, *argv] if how == "real" else [*_client(server, module=module), *argv]
        before = _log(server).count("ran for real")
        r = _run(cmd, env, cwd, stdin)
        out = cwd / "out.bin"
        results.append((r.returncode, r.stdout, r.stderr, out.read_bytes() if out.exists() else None))
        assert _log(server).count("ran for real") == before
    assert results[0] == results[1]


def test_a_terminal_is_the_clients(server, env, tmp_path):
    """stdout is the client's own terminal: a seq.bin to it is refused, as
    by the real command."""
    got = []
    for cmd in ([REAL, str(EXAMPLE)], [*_client(server), str(EXAMPLE)]):
        main, sub = pty.openpty()
        p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=sub, stderr=subprocess.PIPE, env=env, cwd=tmp_path)
        os.close(sub)
        _, err = p.communicate(timeout=300)
        out = b""
        while select.select([main], [], [], 0)[0]:
            try:
                chunk = os.read(main, 4096)
            except OSError:
                break
            if not chunk:
                break
            out += chunk
        os.close(main)
        got.append((p.returncode, out, err))
    assert got[0] == got[1]
    assert b"terminal" in got[0][2]


def test_a_resource_limit_runs_for_real(server, env, tmp_path):
    """Under ``ulimit -v`` the command runs as a real process (the server's
    children would inherit the server's limits and address space)."""
    import resource

    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (1 << 30, resource.getrlimit(resource.RLIMIT_AS)[1]))

    r = _run([*_client(server), str(EXAMPLE), "-o", "out.bin"], env, tmp_path, preexec_fn=limit)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "out.bin").read_bytes()[:4] == b"FSEQ"
    assert "out.bin: resource limits" in _log(server)


def test_an_environment_variable_runs_for_real(server, env, tmp_path):
    r = _run([*_client(server), "--version"], {**env, "FETCHC_SERVER_TEST_VARIABLE": "1"}, tmp_path)
    assert r.returncode == 0
    assert "--version: environment (FETCHC_SERVER_TEST_VARIABLE)" in _log(server)


def test_refusal_rules():
    """What differs decides: limits, affinity, priority, and any variable but
    lit's per-test ones (PER_TEST_ENV)."""
    import resource

    base = {b"A": b"1", b"TMPDIR": b"/x"}
    limits = {resource.RLIMIT_AS: resource.getrlimit(resource.RLIMIT_AS)}
    req = {
        "v": fetchc_server.PROTOCOL, "rlimits": dict(limits), "env": dict(base), "command": [os.fsencode(REAL)],
        "affinity": sorted(os.sched_getaffinity(0)), "priority": os.getpriority(os.PRIO_PROCESS, 0),
    }
    assert refusal(req, base, limits) is None
    for var in PER_TEST_ENV:
        assert refusal({**req, "env": {**base, var: b"/elsewhere"}}, base, limits) is None
    assert refusal({**req, "env": {**base, b"A": b"2"}}, base, limits) == "environment (A)"
    assert refusal({**req, "env": {b"TMPDIR": b"/x"}}, base, limits) == "environment (A)"
    assert refusal({**req, "rlimits": {resource.RLIMIT_AS: (1 << 30, 1 << 30)}}, base, limits) == "resource limits"
    assert refusal({**req, "priority": req["priority"] + 1}, base, limits) == "priority"
    assert refusal({**req, "v": 0}, base, limits) == "protocol"
    python = os.fsencode(sys.executable)
    assert refusal({**req, "command": [python, b"-m", b"fetchc.cli"]}, base, limits) is None
    assert refusal({**req, "command": [python, b"-m", b"os"]}, base, limits) == "another python or module"
    assert refusal({**req, "command": [b"/bin/true", b"-m", b"fetchc.cli"]}, base, limits) == "another python or module"


def _children(pid: int) -> set[int]:
    try:
        return {int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()}
    except OSError:
        return set()


def _wait_until(cond, seconds: float = 60.0) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(0.05)
    return cond()


def _reading_stdin(pid: int) -> bool:
    """Some thread of ``pid`` is in read(0, ...) (``/proc/PID/task/*/syscall``)."""
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return False
    for tid in tasks:
        try:
            if Path(f"/proc/{pid}/task/{tid}/syscall").read_text().startswith("0 0x0 "):
                return True
        except OSError:
            pass
    return False


def _default_sigint() -> None:  # pragma: no cover - runs in the child
    """SIGINT at its default, whatever this test run inherited (a suite run
    in the background has it ignored, and so would its children)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _blocked_client(server, env, tmp_path):
    """A served ``fetchc -`` whose child is reading stdin (a pipe kept open),
    and that child's pid."""
    before = _children(server.proc.pid)
    p = subprocess.Popen([*_client(server), "-", "-o", "out.bin"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, env=env, cwd=tmp_path, preexec_fn=_default_sigint)
    assert _wait_until(lambda: _children(server.proc.pid) - before)
    (child,) = _children(server.proc.pid) - before
    assert _wait_until(lambda: _reading_stdin(child), 300)
    return p, child


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT])
def test_a_signal_reaches_the_child_as_it_would_the_real_command(server, env, tmp_path, sig):
    """A signal to the client while fetchc waits for stdin acts on the child
    as on the real command.  For SIGINT only the message is compared: the
    real process then also crashes in interpreter finalisation (the daemon
    worker thread still holds stdin's lock: 'Fatal Python error:
    _enter_buffered_busy', SIGABRT), which a forked child, leaving with
    os._exit, does not reproduce (docs/architecture.md, Tests)."""
    results = []
    for how in ("real", "served"):
        cwd = tmp_path / how
        cwd.mkdir()
        if how == "served":
            p, child = _blocked_client(server, env, cwd)
        else:
            p = subprocess.Popen([REAL, "-", "-o", "out.bin"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, env=env, cwd=cwd, preexec_fn=_default_sigint)
        p.stdin.write(b"func.func @f() {\n")
        p.stdin.flush()
        assert _wait_until(lambda: _reading_stdin(child if how == "served" else p.pid), 300)
        p.send_signal(sig)
        p.wait(timeout=120)  # stdin stays open: the command must not see its end
        out, err = p.communicate(timeout=120)
        results.append((p.returncode, out, err, (cwd / "out.bin").exists()))
    if sig == signal.SIGINT:
        results = [(out, err.splitlines()[:1], exists) for _, out, err, exists in results]
        assert results[1] == (b"", [b"error: interrupted"], False)
    assert results[0] == results[1]


def test_a_killed_client_takes_its_child_along(server, env, tmp_path):
    p, child = _blocked_client(server, env, tmp_path)
    p.kill()
    p.wait(timeout=60)
    assert _wait_until(lambda: child not in _children(server.proc.pid))
    p.stdin.close()


def test_a_client_never_hangs_on_a_dead_server(env, tmp_path):
    """A server killed mid-command: its child dies with it and the client
    reports it (exit 125), rather than waiting forever."""
    with open(tmp_path / "log", "w") as log:
        srv = fetchc_server.launch(sys.executable, env, log)
    p, child = _blocked_client(srv, env, tmp_path)
    srv.proc.kill()
    _, err = p.communicate(timeout=120)
    assert p.returncode == 125
    assert b"test server died" in err
    assert _wait_until(lambda: not Path(f"/proc/{child}").exists() or "Z" in _state(child))
    srv.stop()


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "Z"


def test_no_server_runs_the_real_command(env, tmp_path):
    r = _run([sys.executable, "-I", "-S", str(CLIENT), str(tmp_path / "no-socket"), REAL, str(EXAMPLE), "-o", "x.bin"],
             env, tmp_path)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "x.bin").read_bytes() == _run([REAL, str(EXAMPLE), "-o", "-"], env, tmp_path).stdout


def test_a_stuck_server_is_given_up_and_never_runs_the_command_late(env, tmp_path):
    """A stopped server: the client runs the real command after the
    handshake timeout; the child forked when the server wakes up never runs
    it (it waits for the client's go-ahead, which never comes)."""
    log_path = tmp_path / "log"
    with open(log_path, "w") as log:
        srv = fetchc_server.launch(sys.executable, env, log)
    os.kill(srv.proc.pid, signal.SIGSTOP)
    try:
        r = _run([*_client(srv, "--handshake=1"), str(EXAMPLE), "-o", "x.bin"], env, tmp_path)
        assert r.returncode == 0, r.stderr
        (tmp_path / "x.bin").unlink()
    finally:
        os.kill(srv.proc.pid, signal.SIGCONT)
    stats = srv.stop()  # the server handles the stale request before it reads the end of its pipe
    assert "1 client gave up before the go-ahead" in stats
    assert not (tmp_path / "x.bin").exists()


def test_the_server_never_outlives_its_parent(env, tmp_path):
    """The parent (lit) killed without stopping the server: the server exits."""
    code = (
        "import sys, os; sys.path.insert(0, sys.argv[1]); import fetchc_server\n"
        "s = fetchc_server.launch(sys.executable, None, open(os.devnull, 'w'))\n"
        "print(s.proc.pid, flush=True); os.kill(os.getpid(), 9)\n"
    )
    r = _run([sys.executable, "-c", code, str(ROOT / "test" / "support")], env, tmp_path)
    pid = int(r.stdout)
    assert _wait_until(lambda: _state(pid) == "Z" or not Path(f"/proc/{pid}").exists())

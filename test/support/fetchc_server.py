"""A fork server for the tests' ``fetchc`` commands: start-up paid once.

Starting ``fetchc`` costs 0.15-0.25 s of CPU (Python, then importing xDSL,
numpy and ml_dtypes), several times what compiling a test's kernel costs, and
the test suite starts it hundreds of times (lit's ``%fetchc``, pytest's
``served.FETCHC``).  This server imports everything once; for each request of
:mod:`fetchc_client` it forks a child that turns itself into the command the
client would have exec'd (the ``fetchc`` console script, or ``python -m
fetchc.cli``) and runs it.

What the child has of the server is only imports: the server never compiles,
parses or runs anything, so no cache, memo or counter of fetchc holds a value
a fresh process would not have.  The child takes the client's

* arguments (``sys.argv`` and ``sys.path[0]`` as the interpreter sets them
  for the script, or for ``-m``; the script or module then runs as
  ``__main__``, as it would),
* standard input, output and error (the client's own descriptors, received
  with ``SCM_RIGHTS``: pipes, files, ``/dev/stdout`` and ``isatty`` behave
  as for a fresh process; ``sys.stdin``/``stdout``/``stderr`` are rebuilt as
  Python builds them at start-up, line-buffered on a terminal),
* working directory (a descriptor), umask, environment (``os.environ``),
  signal dispositions (ignored, default, Python's SIGINT handler) and
  blocked-signal mask,

and exits as the interpreter would: threads joined, ``atexit`` handlers run,
standard streams flushed (exit status 120 when stdout cannot be flushed),
then its exit status, which the server passes to the client with the wait
status (so death by a signal reaches the client as that signal).

**When a command runs for real instead** (:func:`refusal`): its resource
limits (``ulimit``), CPU affinity or priority differ from the server's, its
environment differs from the one the server started with in any variable
(Python, the C library, numpy and fetchc read some at start-up or import:
``PYTHONHASHSEED``, ``FETCHC_CACHE_DIR``, ``LC_ALL``...), or a standard
descriptor is closed.  So a RUN line with ``ulimit -v`` or ``env X=1`` is a
real process, automatically.  What the child cannot reproduce, and no lit
test may rely on through ``%fetchc``: its process id and parent (a
different process than the client, in the server's session with no
controlling terminal, so ``/dev/tty`` is not the client's), the start-up code
cache (:mod:`fetchc.startup` is off while the server imports; in a child
everything is imported already, so it has nothing to do), timing, that numpy
is already imported for a compile (``load_numpy`` then has nothing to do;
under an address-space limit, where that matters, the command runs for
real), and interpreter finalisation after ``atexit`` (module teardown: the
child leaves with ``os._exit``).

Lifetime: the server exits when the pipe from its parent (lit) closes, on
SIGTERM, or when its parent is gone; then it kills the children still
running and removes its socket directory.  A child whose client disappears
(killed, timed out) is killed.  Statistics (forked / ran for real, and why)
are written to the file given by ``--stats`` at exit.

Usage: ``python fetchc_server.py --socket PATH --ready-fd N --parent-fd N
[--stats FILE]`` (lit.cfg.py uses :func:`launch`).
"""

from __future__ import annotations

import argparse
import collections
import gc
import importlib
import marshal
import os
import pkgutil
import select
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time

PROTOCOL = 1
MAX_REQUEST_BYTES = 16 << 20
READY_SECONDS = 120.0
"""How long :func:`launch` waits for the server to have imported everything
(seconds); a loaded machine can take tens of seconds."""


# ---- the lit side: start and stop -----------------------------------------


class Server:
    """A started server: :attr:`socket_path` for the clients, its log
    (:attr:`log_path`, when :func:`launch` made it); :meth:`stop` ends it
    (idempotent) and returns its statistics line."""

    log_path: str | None = None

    def __init__(self, proc: subprocess.Popen, socket_path: str, directory: str, parent_w: int, stats: str):
        self.proc, self.socket_path, self.directory = proc, socket_path, directory
        self._parent_w, self._stats, self._owner = parent_w, stats, os.getpid()

    def stop(self) -> str:
        if os.getpid() != self._owner or self._parent_w < 0:
            return ""
        os.close(self._parent_w)  # the server sees EOF and exits
        self._parent_w = -1
        for ask in (None, self.proc.terminate, self.proc.kill):
            if ask:
                ask()
            try:
                self.proc.wait(timeout=5)
                break
            except subprocess.TimeoutExpired:
                pass
        try:
            with open(self._stats) as f:
                line = f.read().strip()
        except OSError:
            line = ""
        _rmtree(self.directory)
        return line


def _rmtree(directory: str) -> None:
    import shutil

    shutil.rmtree(directory, ignore_errors=True)


def launch(python: str, env: dict | None, log=None) -> Server | None:
    """Start the server with ``python`` and environment ``env`` (the tests'
    own), its output to the file object ``log`` (default: the file
    ``log`` in its directory, :attr:`Server.log_path`, removed by
    :meth:`Server.stop`); wait until it serves.
    None when it cannot start or the platform lacks what it needs (Linux:
    pidfds, ``PR_SET_PDEATHSIG``); the tests then run the real ``fetchc``."""
    if not sys.platform.startswith("linux") or not hasattr(os, "pidfd_open") or not hasattr(select, "POLLRDHUP"):
        return None
    directory = tempfile.mkdtemp(prefix="fetchc-srv-")  # 0700: only this user can connect
    sock = os.path.join(directory, "s")
    stats = os.path.join(directory, "stats")
    log_path = os.path.join(directory, "log")
    own_log = log is None
    if own_log:
        log = open(log_path, "w")
    ready_r, ready_w = os.pipe()
    parent_r, parent_w = os.pipe()
    try:
        proc = subprocess.Popen(
            [python, os.path.abspath(__file__), "--socket", sock, "--ready-fd", str(ready_w),
             "--parent-fd", str(parent_r), "--stats", stats],
            env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
            pass_fds=(ready_w, parent_r), start_new_session=True,
        )
    except OSError:
        for fd in (ready_r, ready_w, parent_r, parent_w):
            os.close(fd)
        _rmtree(directory)
        return None
    finally:
        if own_log:
            log.close()
    os.close(ready_w)
    os.close(parent_r)
    ok = False
    try:
        r, _, _ = select.select([ready_r], [], [], READY_SECONDS)
        ok = bool(r) and os.read(ready_r, 1) == b"R"
    finally:
        os.close(ready_r)
    server = Server(proc, sock, directory, parent_w, stats)
    server.log_path = log_path if own_log else None
    if not ok:
        server.stop()
        return None
    return server


# ---- the server ------------------------------------------------------------


def preload() -> None:
    """Import what ``fetchc`` commands import (and only import: nothing is
    compiled or run): every fetchc module, numpy, ml_dtypes, and the xDSL
    dialects fetchc's context knows, with the start-up cache off."""
    saved = os.environ.get("FETCHC_CACHE_DIR")
    os.environ["FETCHC_CACHE_DIR"] = ""  # fetchc.startup.install() does nothing
    try:
        import fetchc

        for info in pkgutil.walk_packages(fetchc.__path__, "fetchc."):
            if not info.name.endswith("__main__"):
                importlib.import_module(info.name)
        import ml_dtypes  # noqa: F401
        import numpy  # noqa: F401
        from xdsl.dialects import get_all_dialects

        wanted = ("builtin", "func", "arith", "memref", "scf", "affine", "test")
        for name, factory in get_all_dialects().items():
            if name in wanted:
                factory()
    finally:
        if saved is None:
            del os.environ["FETCHC_CACHE_DIR"]
        else:
            os.environ["FETCHC_CACHE_DIR"] = saved


def _limits() -> dict:
    import resource

    out = {}
    for name in dir(resource):
        if name.startswith("RLIMIT_"):
            num = getattr(resource, name)
            try:
                out[num] = resource.getrlimit(num)
            except (OSError, ValueError):
                pass
    return out


PER_TEST_ENV = frozenset(
    s.encode()
    for s in ("LIT_CURRENT_TESTCASE", "PYTEST_CURRENT_TEST", "TMPDIR", "TEMP", "TMP", "TEMPDIR", "PYTHONPATH",
              "COLUMNS", "LINES")
)
"""Variables that may differ from the server's environment: the temporary
directory and the test's name, which lit and pytest set per test and nothing
reads at start-up or import (the child resets :data:`tempfile.tempdir`, which
the first ``tempfile.gettempdir()`` caches, so it is computed from them anew);
``COLUMNS`` and ``LINES``, read when a help text is formatted
(``shutil.get_terminal_size``), which GNU readline puts into the C
environment of a process that imports it (pytest's) but not into its
``os.environ``; and ``PYTHONPATH`` (lit's out-of-process ``diff`` leaves its
own directory there for the rest of the test), whose entries the child puts
into ``sys.path`` where the interpreter would."""


class Refused(Exception):
    pass


def refusal(req: dict, base_env: dict, limits: dict) -> str | None:
    """Why the request must run as a real process (a short reason), or None
    when a forked child is indistinguishable from one."""
    if req.get("v") != PROTOCOL:
        return "protocol"
    command = [os.fsdecode(c) for c in req["command"]]
    module = _module_of(command)
    same_python = os.path.realpath(command[0]) == os.path.realpath(sys.executable)
    if module is not None and (module != "fetchc.cli" or not same_python):
        return "another python or module"
    if module is None and len(command) != 1:
        return "command"
    if {k: tuple(v) for k, v in req["rlimits"].items()} != limits:
        return "resource limits"
    if sorted(req["affinity"]) != sorted(os.sched_getaffinity(0)):
        return "cpu affinity"
    if req["priority"] != os.getpriority(os.PRIO_PROCESS, 0):
        return "priority"
    changed = {k for k, _ in set(req["env"].items()) ^ set(base_env.items())} - PER_TEST_ENV
    if changed:
        return "environment (" + ", ".join(sorted(os.fsdecode(k) for k in changed))[:200] + ")"
    return None


def _recv_request(conn: socket.socket) -> dict:
    conn.settimeout(10.0)
    head = b""
    while len(head) < 8:
        more = conn.recv(8 - len(head))
        if not more:
            raise Refused("short request")
        head += more
    size = int.from_bytes(head, "little")
    if size > MAX_REQUEST_BYTES:
        raise Refused("request too large")
    body = b""
    while len(body) < size:
        more = conn.recv(min(1 << 20, size - len(body)))
        if not more:
            raise Refused("short request")
        body += more
    return marshal.loads(body)


class Loop:
    """The server's single-threaded loop (forking from a single thread is
    safe): the listening socket, the parent pipe, per running child its
    pidfd and the client's connection (closed by the client: kill)."""

    def __init__(self, listener: socket.socket, parent_fd: int, stats_path: str | None):
        self.listener, self.parent_fd, self.stats_path = listener, parent_fd, stats_path
        self.poll = select.poll()
        self.poll.register(listener.fileno(), select.POLLIN)
        self.poll.register(parent_fd, select.POLLIN)
        self.by_pidfd: dict[int, tuple[int, socket.socket]] = {}
        self.by_conn: dict[int, int] = {}  # conn fd -> pidfd
        self.base_env = dict(_SERVER_ENV)
        self.limits = _limits()
        self.stats: collections.Counter = collections.Counter()
        self.child_cpu = 0.0
        self.ready_seconds = 0.0
        self.own_pid = os.getpid()
        self.parent_pid = os.getppid()

    def run(self) -> None:
        while True:
            for fd, ev in self.poll.poll(1000):
                if fd == self.parent_fd:
                    return
                if fd == self.listener.fileno():
                    self.accept()
                elif fd in self.by_pidfd:
                    self.reap(fd)
                elif fd in self.by_conn:
                    self.client_gone(fd)
            if os.getppid() != self.parent_pid:
                return  # lit is gone without closing the pipe (killed)

    def accept(self) -> None:
        try:
            conn, _ = self.listener.accept()
        except OSError:
            return
        try:
            creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
            _, uid, _ = struct.unpack("3i", creds)
            if uid != os.getuid():
                raise Refused("another user")
            req = _recv_request(conn)
            why = refusal(req, self.base_env, self.limits)
            if why:
                test = os.fsdecode(req["env"].get(b"LIT_CURRENT_TESTCASE", b"?"))
                print(f"ran for real: {test}: {' '.join(map(os.fsdecode, req['args']))}: {why}", flush=True)
                raise Refused(why)
            self.start(conn, req)
        except (Refused, OSError, ValueError, EOFError, KeyError, TypeError) as e:
            self.stats[f"ran for real: {e}" if isinstance(e, Refused) else f"ran for real: {type(e).__name__}"] += 1
            try:
                conn.sendall(b"F" + bytes(8))
            except OSError:
                pass
            conn.close()

    def start(self, conn: socket.socket, req: dict) -> None:
        sys.stdout.flush()
        sys.stderr.flush()
        # The child starts with every signal blocked: one forwarded by the
        # client waits until the child has the client's dispositions.
        mask = signal.pthread_sigmask(signal.SIG_BLOCK, signal.valid_signals())
        pid = os.fork()
        if pid:
            signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        else:
            code = 70
            try:
                _die_with(self.own_pid)
                self.close_in_child(conn)
                code = child(conn, req)
            finally:
                os._exit(code)
        self.stats["forked"] += 1
        pidfd = os.pidfd_open(pid)
        self.by_pidfd[pidfd] = (pid, conn)
        self.poll.register(pidfd, select.POLLIN)
        try:
            conn.setblocking(True)
            conn.sendall(b"P" + pid.to_bytes(8, "little"))
        except OSError:  # the client gave up waiting (and runs the real command)
            self.stats["client gave up before the go-ahead"] += 1
            os.kill(pid, signal.SIGKILL)
            return
        self.by_conn[conn.fileno()] = pidfd
        self.poll.register(conn.fileno(), select.POLLRDHUP)

    def close_in_child(self, keep: socket.socket) -> None:
        self.listener.close()
        os.close(self.parent_fd)
        for pidfd, (_, conn) in self.by_pidfd.items():
            os.close(pidfd)
            if conn is not keep:
                conn.close()

    def reap(self, pidfd: int) -> None:
        pid, conn = self.by_pidfd.pop(pidfd)
        self.poll.unregister(pidfd)
        os.close(pidfd)
        _, status, usage = os.wait4(pid, 0)
        self.child_cpu += usage.ru_utime + usage.ru_stime
        if self.by_conn.pop(conn.fileno(), None) is not None:
            self.poll.unregister(conn.fileno())
        try:
            conn.sendall(b"W" + status.to_bytes(4, "little", signed=True))
        except OSError:
            pass
        conn.close()

    def client_gone(self, conn_fd: int) -> None:
        pidfd = self.by_conn.pop(conn_fd)
        self.poll.unregister(conn_fd)
        pid, _ = self.by_pidfd[pidfd]
        self.stats["killed: client gone"] += 1
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass

    def shutdown(self) -> None:
        for pidfd, (pid, conn) in list(self.by_pidfd.items()):
            try:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
            except OSError:
                pass
            os.close(pidfd)
            conn.close()
        if self.stats_path:
            parts = [f"{n} {what}" for what, n in sorted(self.stats.items(), key=lambda kv: -kv[1])]
            line = (f"ready in {self.ready_seconds:.1f} s; " + ("; ".join(parts) or "no requests")
                    + f"; children's CPU {self.child_cpu:.1f} s")
            try:
                with open(self.stats_path, "w") as f:
                    f.write(line)
            except OSError:
                pass


# ---- the child -------------------------------------------------------------


_LIBC: list = []
"""The C library (``ctypes``), loaded by :func:`serve` before any fork."""


def _die_with(server_pid: int) -> None:
    """Have the kernel kill this child when the server dies
    (``PR_SET_PDEATHSIG``), so no child outlives a killed server; the client
    then sees its connection close without a status."""
    _LIBC[0].prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
    if os.getppid() != server_pid:
        os._exit(70)  # the server died before prctl took effect


def _stdio(fd: int, write: bool, name: str, like):
    """A standard stream as CPython's start-up builds it (pylifecycle.c
    create_stdio): buffered binary, a TextIOWrapper with the locale's
    encoding and errors (``like``'s: the environment is the server's),
    newline "\\n", line-buffered on a terminal or for stderr."""
    import io

    buf = io.open(fd, "wb" if write else "rb", -1, closefd=False)
    buf.raw.name = name
    tty = buf.raw.isatty()
    stream = io.TextIOWrapper(buf, like.encoding, like.errors, "\n", tty or fd == 2, False)
    stream.mode = "w" if write else "r"
    return stream


def _wait_for_go(conn: socket.socket) -> list[int] | None:
    """The client's go-ahead: b"G" with its stdin, stdout, stderr and working
    directory as descriptors (sent only to a forked child, so that no
    descriptor of a client waits in a stuck server's socket, keeping the
    client's pipes open); None when the client gave up."""
    conn.settimeout(60.0)
    try:
        msg, fds, _, _ = socket.recv_fds(conn, 1, 4)
    except OSError:
        return None
    if msg == b"G" and len(fds) == 4:
        return fds
    for fd in fds:
        os.close(fd)
    return None


def _set_signals(req: dict) -> None:
    for sig, how in req["signals"].items():
        handler = (signal.SIG_IGN, signal.SIG_DFL, signal.default_int_handler)[how]
        try:
            signal.signal(sig, handler)
        except (OSError, ValueError):
            pass
    signal.pthread_sigmask(signal.SIG_SETMASK, req["sigmask"])


_SERVER_ENV: dict = {}
"""The server's environment as it started (set by :func:`serve`)."""
_SERVER_PATH: list = []
"""The ``sys.path`` entries the server's ``PYTHONPATH`` gave."""


def _pythonpath(env: dict) -> list[str]:
    """The ``sys.path`` entries the interpreter makes of ``PYTHONPATH``
    (absolute, empty ones dropped)."""
    value = os.fsdecode(env.get(b"PYTHONPATH", b""))
    return [os.path.abspath(p) for p in value.split(os.pathsep) if p]


def child(conn: socket.socket, req: dict) -> int:
    """Become the client's ``fetchc`` command and run it; the exit status."""
    fds = _wait_for_go(conn)
    if fds is None:
        print(f"client gave up before the go-ahead: {' '.join(map(os.fsdecode, req['args']))}", flush=True)
        return 0  # the client runs the real command
    conn.settimeout(None)
    for target, fd in enumerate(fds[:3]):
        os.dup2(fd, target)
    os.fchdir(fds[3])
    for fd in fds:
        if fd > 2:
            os.close(fd)
    fds.clear()
    os.umask(req["umask"])
    os.environb.clear()
    os.environb.update(req["env"])
    if "tempfile" in sys.modules:
        sys.modules["tempfile"].tempdir = None  # computed anew from this environment (PER_TEST_ENV)
    main = _program(req)
    like_in, like_out, like_err = sys.stdin, sys.stdout, sys.stderr
    sys.stdin = sys.__stdin__ = _stdio(0, False, "<stdin>", like_in)
    sys.stdout = sys.__stdout__ = _stdio(1, True, "<stdout>", like_out)
    sys.stderr = sys.__stderr__ = _stdio(2, True, "<stderr>", like_err)
    _set_signals(req)
    code = run_program(main)
    try:
        conn.sendall(b"X" + code.to_bytes(4, "little", signed=True))
    except OSError:
        pass
    return code


def _program(req: dict):
    """Set ``sys.argv`` and ``sys.path`` as the interpreter sets them for the
    request's command (the console script, or ``python -m MODULE``) and
    return what runs it."""
    command = [os.fsdecode(c) for c in req["command"]]
    args = [os.fsdecode(a) for a in req["args"]]
    rest = sys.path[1:]
    if rest[: len(_SERVER_PATH)] == _SERVER_PATH:
        rest = rest[len(_SERVER_PATH):]
    import runpy
    import types

    sys.modules["__main__"] = types.ModuleType("__main__")  # not the server's
    if _module_of(command):
        sys.argv = ["-m", *args]  # runpy puts the module's file in argv[0]
        first = os.getcwd()

        def main() -> None:
            # python -m imports the module once, as __main__: the server's
            # import of it must not be there (runpy warns about it).
            sys.modules.pop(command[2], None)
            runpy._run_module_as_main(command[2], alter_argv=True)
    else:
        sys.argv = [command[0], *args]
        first = os.path.dirname(command[0])

        def main() -> None:
            runpy.run_path(command[0], run_name="__main__")  # what python SCRIPT does
    sys.path[:] = [first, *_pythonpath(req["env"]), *rest]
    return main


def _module_of(command: list) -> str | None:
    """The module of a ``[python, "-m", MODULE]`` command, else None."""
    return command[2] if len(command) == 3 and command[1] == "-m" else None


def _exit_code(e: SystemExit) -> int:
    c = e.code
    if c is None:
        return 0
    if isinstance(c, int):
        return c & 0xFF
    try:
        sys.stderr.write(f"{c}\n")
    except Exception:  # noqa: BLE001
        pass
    return 1


def run_program(main) -> int:
    """``main()`` and what the interpreter's exit does; the exit status."""
    import atexit
    import threading
    import traceback

    try:
        main()
        code = 0
    except SystemExit as e:
        code = _exit_code(e)
    except KeyboardInterrupt:
        traceback.print_exc()
        code = -signal.SIGINT
    except BaseException:  # noqa: BLE001 - as the interpreter reports it
        traceback.print_exc()
        code = 1
    threading._shutdown()  # type: ignore[attr-defined]  # non-daemon threads, as Py_Finalize
    atexit._run_exitfuncs()
    try:
        sys.stdout.flush()
    except Exception as e:  # noqa: BLE001
        code = 120
        try:
            sys.stderr.write(f"Exception ignored in: {sys.stdout!r}\n{type(e).__name__}: {e}\n")
        except Exception:  # noqa: BLE001
            pass
    try:
        sys.stderr.flush()
    except Exception:  # noqa: BLE001
        pass
    if code == -signal.SIGINT:  # an uncaught Ctrl-C kills the interpreter with SIGINT
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
        code = 130
    return code


def serve(socket_path: str, ready_fd: int, parent_fd: int, stats_path: str | None) -> None:
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    started = time.monotonic()
    _SERVER_ENV.update(os.environb)
    _SERVER_PATH.extend(_pythonpath(_SERVER_ENV))
    preload()
    import ctypes

    _LIBC.append(ctypes.CDLL(None))
    if dict(os.environb) != _SERVER_ENV:
        print("fetchc_server: importing changed the environment; children get the client's", flush=True)
    gc.collect()
    gc.freeze()  # the children's collections skip what the server imported
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(socket_path)
    listener.listen(64)
    loop = Loop(listener, parent_fd, stats_path)
    loop.ready_seconds = time.monotonic() - started
    os.write(ready_fd, b"R")
    os.close(ready_fd)
    try:
        loop.run()
    finally:
        if os.getpid() == loop.own_pid:
            loop.shutdown()
            listener.close()
            os.unlink(socket_path)
            if os.getppid() != loop.parent_pid:  # nobody left to read the statistics
                _rmtree(os.path.dirname(socket_path))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--socket", required=True)
    p.add_argument("--ready-fd", type=int, required=True)
    p.add_argument("--parent-fd", type=int, required=True)
    p.add_argument("--stats")
    a = p.parse_args()
    serve(a.socket, a.ready_fd, a.parent_fd, a.stats)


if __name__ == "__main__":
    main()

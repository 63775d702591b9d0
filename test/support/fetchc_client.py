"""The ``%fetchc`` of the lit tests: run one ``fetchc`` command through the
test suite's fork server (:mod:`fetchc_server`), or exec the real ``fetchc``.

Usage (lit.cfg.py builds this line; stdlib only, run as ``python -I -S``)::

    fetchc_client.py [--handshake=SECONDS] SOCKET FETCHC [fetchc arguments ...]
    fetchc_client.py [--handshake=SECONDS] SOCKET -m fetchc.cli [fetchc arguments ...]

``FETCHC`` is the real console script; ``-m MODULE`` stands for ``python -m
MODULE`` with the interpreter running the client (what the pytest tests run).

The client sends its arguments, environment, umask, resource limits, CPU
affinity, priority, signal dispositions and mask to the server.  The server
either answers that this process must run the real command (its limits or
environment differ from the server's, see :func:`fetchc_server.refusal`), or
forks a child and names it; the client then hands the child its standard
input, output and error and its working directory as file descriptors
(``SCM_RIGHTS``), the child runs ``fetchc`` on exactly those, and the server
reports its wait status, which the client takes as its own (an exit code, or
death by the same signal).

It never hangs on a missing or stuck server: connecting and the server's
first answer are bounded by :data:`HANDSHAKE_SECONDS` (``--handshake``), after which the real
``fetchc`` runs instead (the child, if one was forked late, waits for the
client's go-ahead byte and exits without running when it never comes).  Once
the child runs, the client waits for it as a shell waits for a command,
forwarding SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2 and SIGALRM to
it; if the client is killed, the server kills the child.
"""

# Only built-in and C modules: with -I -S this client starts in about 8 ms
# of CPU, half of what importing os, socket and signal would add.
import _signal as signal
import _socket as socket
import marshal
import posix as os
import sys

HANDSHAKE_SECONDS = 30.0
"""How long to wait for the server to accept a request and fork (seconds).
Generous: a loaded 2-core machine can stall a process for seconds."""

FORWARDED = ("SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2", "SIGALRM")

PROTOCOL = 1


def fsencode(text: str) -> bytes:
    return text.encode(sys.getfilesystemencoding(), "surrogateescape")


def exec_real(command: list, args: list) -> None:
    """Replace this process with the real command (never returns)."""
    os.execv(command[0], [*command, *args])


def dispositions() -> dict:
    """Per signal number: 0 ignored, 1 default, 2 Python's SIGINT handler
    (what a fresh interpreter installs when SIGINT was not ignored)."""
    out = {}
    for sig in signal.valid_signals():
        if sig in (signal.SIGKILL, signal.SIGSTOP):
            continue
        try:
            h = signal.getsignal(sig)
        except (OSError, ValueError):
            continue
        if h is signal.SIG_IGN:
            out[int(sig)] = 0
        elif h is signal.default_int_handler:
            out[int(sig)] = 2
        else:
            out[int(sig)] = 1
    return out


def rlimits() -> dict:
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


def request(command: list, args: list, sigmask) -> bytes:
    mask = os.umask(0)
    os.umask(mask)
    return marshal.dumps({
        "v": PROTOCOL,
        "command": [fsencode(c) for c in command],
        "args": [fsencode(a) for a in args],
        "env": dict(os.environ),  # posix.environ: bytes
        "umask": mask,
        "rlimits": rlimits(),
        "affinity": sorted(os.sched_getaffinity(0)),
        "priority": os.getpriority(os.PRIO_PROCESS, 0),
        "signals": dispositions(),
        "sigmask": sorted(int(s) for s in sigmask),
    })


def send_fds(sock, data: bytes, fds: list) -> None:
    """``data`` with ``fds`` attached (``SCM_RIGHTS``), as socket.send_fds."""
    rights = b"".join(fd.to_bytes(4, sys.byteorder, signed=True) for fd in fds)
    sock.sendmsg([data], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, rights)])


def recv_exact(sock, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            break
        data += chunk
    return data


def handshake(path: str, command: list, args: list, mask, timeout: float):
    """``(socket, child pid)``, or None when the real command must run.
    ``mask``: the signal mask the command is to run with."""
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            return None  # a closed standard descriptor: only a real process shows that faithfully
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(timeout)
    try:
        sock.connect(path)
        body = request(command, args, mask)
        sock.sendall(len(body).to_bytes(8, "little") + body)
        answer = recv_exact(sock, 9)
    except OSError:  # no server, refused, timed out
        sock.close()
        return None
    if len(answer) != 9 or answer[:1] != b"P":
        sock.close()
        return None  # b"F": the server says this command must run for real
    return sock, int.from_bytes(answer[1:], "little")


def go(sock) -> None:
    """Let the forked child run: b"G" with this process's standard
    descriptors and working directory (only now: a stuck server never holds
    them, so it cannot keep a test's pipes open)."""
    cwd = os.open(".", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        send_fds(sock, b"G", [0, 1, 2, cwd])
    finally:
        os.close(cwd)


def forward_signals(pid: int) -> None:
    def forward(sig, _frame):
        try:
            os.kill(pid, sig)
        except OSError:
            pass

    for name in FORWARDED:
        sig = getattr(signal, name)
        if signal.getsignal(sig) is not signal.SIG_IGN:
            signal.signal(sig, forward)


def wait_status(sock):
    """The child's wait status from the server (b"W"), else its exit code as
    the child itself reported it (b"X", when the server died first), else
    None.  Reads until the connection closes."""
    status = code = None
    buf = b""
    sock.settimeout(None)
    while True:
        try:
            chunk = sock.recv(64)
        except InterruptedError:
            continue
        except OSError:
            break
        if not chunk:
            break
        buf += chunk
        while len(buf) >= 5:
            kind, value = buf[:1], int.from_bytes(buf[1:5], "little", signed=True)
            buf = buf[5:]
            if kind == b"W":
                status = value
            elif kind == b"X":
                code = value
    if status is not None:
        return ("status", status)
    if code is not None:
        return ("code", code)
    return None


def main(argv: list) -> None:
    args = argv[1:]
    timeout = HANDSHAKE_SECONDS
    if args and args[0].startswith("--handshake="):
        timeout = float(args.pop(0).partition("=")[2])
    if len(args) < 2 or (args[1] == "-m" and len(args) < 3):
        sys.stderr.write("usage: fetchc_client.py [--handshake=SECONDS] SOCKET (FETCHC | -m MODULE) [ARGS...]\n")
        os._exit(2)
    path = args[0]
    if args[1] == "-m":  # python -m MODULE, with this interpreter
        command, args = [sys.executable, "-m", args[2]], args[3:]
    else:
        command, args = [args[1]], args[2:]
    # Signals that arrive before the child runs wait (blocked) until they can
    # be forwarded, or until the real command is exec'd.
    forwarded = [getattr(signal, name) for name in FORWARDED]
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, forwarded)
    got = handshake(path, command, args, mask, timeout) if path else None
    if got is None:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        exec_real(command, args)
        return
    sock, pid = got
    forward_signals(pid)
    try:
        go(sock)
    except OSError:
        pass  # the child is gone: its status (or the server's death) follows
    signal.pthread_sigmask(signal.SIG_SETMASK, mask)
    result = wait_status(sock)
    if result is None:
        sys.stderr.write("fetchc_client: the fetchc test server died while running the command\n")
        os._exit(125)
    kind, value = result
    if kind == "code":
        os._exit(value & 0xFF)
    if os.WIFSIGNALED(value):
        sig = os.WTERMSIG(value)
        signal.signal(sig, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, [sig])
        os.kill(os.getpid(), sig)
    os._exit(os.waitstatus_to_exitcode(value) & 0xFF if os.WIFEXITED(value) else 1)


if __name__ == "__main__":
    main(sys.argv)

"""The process fetchc runs in: its address-space limit, memory budget,
stack, and the loading of numpy under a limit.

Everything the command line (:mod:`fetchc.cli`) and the simulator's memory
budget (:mod:`fetchc.golden.sim`) need to know about, or set up in, the
process: ``ulimit -v`` (``RLIMIT_AS``), glibc's malloc arenas, a large
stack for deeply nested IR, and loading numpy / ml_dtypes with a clear error
when memory is short.  Spec: none (docs/robustness.md, resources).
"""

from __future__ import annotations

import _thread
import contextlib
import gc
import os
import sys
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

from fetchc.wording import a_or_an

__all__ = [
    "DEEP_RECURSION_LIMIT",
    "DEEP_STACK_BYTES",
    "NUMPY_HEADROOM_BYTES",
    "ResourceExhausted",
    "address_space_limit",
    "call_with_deep_stack",
    "gc_is_paused",
    "gc_paused",
    "is_memory_message",
    "memory_failure",
    "limit_malloc_arenas",
    "limit_text",
    "load_numpy",
    "memory_budget",
    "owns_process",
    "recursion_limit_for",
    "stack_text",
]

T = TypeVar("T")


class ResourceExhausted(Exception):
    """A resource ran out (memory, address space, threads): ``main`` prints
    ``error: <message>`` and exits 1."""


NUMPY_HEADROOM_BYTES = 96 << 20
"""Address space that must be free before numpy is imported under an
address-space limit (numpy, its OpenBLAS with one thread and ml_dtypes map
about 90 MiB)."""


def address_space_limit() -> int | None:
    """The soft ``RLIMIT_AS`` (``ulimit -v``) in bytes, or None when there is
    none (or the platform has no ``resource`` module)."""
    try:
        import resource

        soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    except (ImportError, ValueError, OSError, AttributeError):
        return None
    return None if soft == resource.RLIM_INFINITY or soft < 0 else int(soft)


def limit_text() -> str:
    limit = address_space_limit()
    return f" (the address-space limit, ulimit -v, is {limit >> 20} MiB)" if limit is not None else ""


def is_memory_message(text: str) -> bool:
    t = text.lower()
    return any(
        k in t
        for k in (
            "failed to map segment",
            "cannot allocate memory",
            "memoryerror",
            "out of memory",
            "memory allocation",
            "cannot map zero-fill pages",
            "can't start new thread",
        )
    )


def memory_failure(err: BaseException) -> bool:
    """Whether ``err`` means the process ran out of memory rather than a bug:
    ``MemoryError``; an ``OSError`` ``ENOMEM`` (a thread, a mapping); and,
    under an address-space limit, CPython's ``SystemError`` for a C function
    that failed without setting an exception (``error return without
    exception set``: an allocation failed inside it).  Callers that turn
    exceptions into diagnostics re-raise these as ``MemoryError``, which the
    command line words as ``out of memory``."""
    if isinstance(err, MemoryError):
        return True
    if isinstance(err, OSError):
        import errno

        return err.errno == errno.ENOMEM
    if isinstance(err, SystemError) and address_space_limit() is not None:
        text = str(err)
        return "without exception set" in text or "without setting an exception" in text
    return False


def load_numpy() -> None:
    """Import numpy and ml_dtypes (``fetchc dis``, ``sim`` and ``run`` need
    them; compiling does not), turning a failure into a clear error.

    Under an address-space limit, OpenBLAS (numpy's BLAS) is limited to one
    thread unless ``OPENBLAS_NUM_THREADS`` / ``OMP_NUM_THREADS`` say
    otherwise (each of its threads maps a 32-64 MiB buffer, and when that
    fails it exits the process with no way to catch it), and
    :data:`NUMPY_HEADROOM_BYTES` of address space are probed first.  Raises
    :class:`ResourceExhausted` (``not enough memory to load numpy ...``) or
    ``ImportError`` for a broken installation."""
    if "numpy" in sys.modules and "ml_dtypes" in sys.modules:
        return
    if "numpy" not in sys.modules and address_space_limit() is not None:
        if not any(v in os.environ for v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "GOTO_NUM_THREADS")):
            os.environ["OPENBLAS_NUM_THREADS"] = "1"
        import mmap

        try:
            probe = mmap.mmap(-1, NUMPY_HEADROOM_BYTES)
            probe.close()
        except (OSError, MemoryError, ValueError):
            raise ResourceExhausted(
                f"not enough memory to load numpy: less than {NUMPY_HEADROOM_BYTES >> 20} MiB of address space "
                f"is left{limit_text()}"
            ) from None
    try:
        import ml_dtypes  # noqa: F401  (imported to load it under the limit)
        import numpy  # noqa: F401  (first: ml_dtypes' C import of numpy prints its failure)
    except MemoryError:
        raise ResourceExhausted(f"not enough memory to load numpy{limit_text()}") from None
    except ImportError as e:
        chain = f"{e} {e.__cause__ or ''} {e.__context__ or ''}"
        if is_memory_message(chain):
            raise ResourceExhausted(f"not enough memory to load numpy{limit_text()}") from None
        raise


DEEP_STACK_BYTES = 256 << 20
"""Stack of the thread that runs a command: xDSL's parser and printer
recurse once per nesting level (about ten Python frames each), so deeply
nested IR needs more than the default recursion limit and C stack."""
DEEP_RECURSION_LIMIT = 50_000
"""Python recursion limit while a command runs on a :data:`DEEP_STACK_BYTES`
stack (about 5000 nesting levels); beyond it the input is reported as
nested too deeply.  A smaller stack gets a proportionally smaller limit."""
MIN_STACK_BYTES = 8 << 20
"""The smallest worker stack tried before falling back to the main thread."""

STACK_IN_USE: tuple[int, int] | None = None
"""``(stack bytes, recursion limit)`` of the last command run by
:func:`call_with_deep_stack`; stack 0 means the main thread."""


_ARENAS_LIMITED = False


def limit_malloc_arenas() -> None:
    """Under an address-space limit, make glibc's ``malloc`` use a single
    arena (``mallopt(M_ARENA_MAX, 1)``): by default every thread that
    allocates reserves a 64 MiB arena of address space, which a ``ulimit -v``
    of a few hundred MiB cannot afford.  Nothing happens without a limit or
    where ``mallopt`` is not available."""
    global _ARENAS_LIMITED
    if _ARENAS_LIMITED or address_space_limit() is None or not sys.platform.startswith("linux"):
        return
    _ARENAS_LIMITED = True
    try:
        import ctypes

        ctypes.CDLL(None).mallopt(-8, 1)  # M_ARENA_MAX (malloc.h)
    except (ImportError, OSError, AttributeError):
        pass


def stack_plan() -> list[int]:
    """Worker stack sizes to try, largest first: :data:`DEEP_STACK_BYTES`, or
    an eighth of an address-space limit (``ulimit -v``) when that is
    smaller, so the stack's reservation leaves room for the heap (and numpy);
    then quarters of it down to :data:`MIN_STACK_BYTES`."""
    top = DEEP_STACK_BYTES
    limit = address_space_limit()
    if limit is not None:
        top = min(top, max(MIN_STACK_BYTES, (limit // 8) & ~0xFFFFF))
    sizes = [top]
    while sizes[-1] // 4 >= MIN_STACK_BYTES:
        sizes.append(sizes[-1] // 4)
    return sizes


def recursion_limit_for(stack_bytes: int) -> int:
    """The recursion limit used on a worker thread with ``stack_bytes`` of
    stack: :data:`DEEP_RECURSION_LIMIT` scaled down in proportion, never
    below Python's default of 1000."""
    return max(1000, DEEP_RECURSION_LIMIT * stack_bytes // DEEP_STACK_BYTES)


def call_with_deep_stack(fn: Callable[..., T], *args: Any) -> T:
    """``fn(*args)`` on a thread with a large stack (:func:`stack_plan`) and
    a recursion limit to match (:func:`recursion_limit_for`); returns its
    result or re-raises its exception.  When no such thread can be started
    (an address-space limit, a thread limit: ``can't start new thread``),
    smaller stacks are tried, then ``fn`` runs on the calling thread with
    the current recursion limit: deep inputs then fail with ``nesting too
    deep`` sooner, and nothing else changes."""
    import threading

    global STACK_IN_USE
    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            outcome["value"] = fn(*args)
        except BaseException as e:  # noqa: BLE001 - re-raised in the caller
            outcome["error"] = e

    old_limit = sys.getrecursionlimit()
    worker = None
    for size in stack_plan():
        try:
            old_stack = threading.stack_size(size)
        except (ValueError, RuntimeError):
            break  # the platform refuses to set a stack size
        limit = recursion_limit_for(size)
        sys.setrecursionlimit(max(old_limit, limit))
        try:
            worker = threading.Thread(target=run, name="fetchc", daemon=True)
            worker.start()
        except (RuntimeError, MemoryError):  # can't start new thread
            worker = None
            sys.setrecursionlimit(old_limit)
            continue
        finally:
            threading.stack_size(old_stack)
        STACK_IN_USE = (size, max(old_limit, limit))
        break
    if worker is None:
        STACK_IN_USE = (0, old_limit)
        return fn(*args)
    try:
        # An interrupted caller (Ctrl-C) leaves the daemon worker to die with
        # the process; in-process callers get the exception.
        worker.join()
    finally:
        if worker.is_alive():
            # Lowering the limit under a still-deep worker would abort the
            # interpreter ("Cannot recover from stack overflow"): restore it
            # once the worker has unwound.
            threading.Thread(target=_restore_limit_after, args=(worker, old_limit), daemon=True).start()
        else:
            sys.setrecursionlimit(old_limit)
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


def _restore_limit_after(worker, limit: int) -> None:
    worker.join()
    sys.setrecursionlimit(limit)


def memory_budget(env_var: str | None) -> tuple[int, bool]:
    """``(limit, from_free_space)``: the most memory, in bytes, a command may
    allocate for data sized by its input, and whether that is what is left
    under ``RLIMIT_AS`` (which already excludes the memory in use).

    The limit is the environment variable ``env_var`` (None: none) when set (a whole
    number of bytes), else the machine's physical memory (``os.sysconf``,
    else 2^34), capped, when an address-space limit (``ulimit -v``) is set,
    at three quarters of the address space the process has left under it.
    Raises ``ValueError`` naming ``env_var`` when its value is not a whole
    number."""
    env = os.environ.get(env_var) if env_var else None
    if env:
        try:
            return max(0, int(env)), False
        except ValueError:
            raise ValueError(f"{env_var} must be a whole number of bytes, not {env!r}") from None
    try:
        limit = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        limit = 1 << 34
    try:
        import resource

        soft, _ = resource.getrlimit(resource.RLIMIT_AS)
        if soft != resource.RLIM_INFINITY:
            # three quarters of what is left: the rest is for temporaries
            # (the worker threads' stacks, chunk buffers)
            free = max(0, soft - address_space_in_use()) * 3 // 4
            if free < limit:
                return free, True
    except (ImportError, ValueError, OSError):
        pass
    return limit, False


def address_space_in_use() -> int:
    """The process's virtual memory size in bytes (``/proc/self/statm``), or
    0 where that is not available."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError, AttributeError):
        return 0


def stack_text() -> str:
    """How deep the last command could nest: its stack and recursion limit
    (for ``nesting too deep`` messages)."""
    if STACK_IN_USE is None:
        return f"Python's recursion limit of {sys.getrecursionlimit()}"
    size, limit = STACK_IN_USE
    if size == 0:
        return f"the recursion limit of {limit} on the main thread (no larger stack could be reserved{limit_text()})"
    if size < DEEP_STACK_BYTES:
        return f"{a_or_an(str(size >> 20))} MiB stack with a recursion limit of {limit}{limit_text()}"
    return f"{a_or_an(str(size >> 20))} MiB stack with a recursion limit of {limit}"


_GC_PAUSED_THRESHOLD = (1 << 31) - 1
"""Generation 0's collection threshold while a compile runs: a number of
net allocations no compile reaches, so no automatic collection starts."""
_gc_lock = _thread.allocate_lock()  # _thread: no import of threading at start-up
_gc_pauses = 0  # active gc_paused contexts, all threads together
_gc_saved_threshold = 0  # generation 0's threshold before the first of them


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """A context in which Python's cyclic garbage collector starts no
    automatic collection.

    A compile allocates hundreds of thousands of long-lived objects (the IR)
    and little cyclic garbage, so the collector's periodic full scans are
    pure overhead there (13–26% of a large compile, measured by
    ``tools/bench_compile.py``); reference counting still frees everything
    acyclic at once.

    The rule (a library call must leave the host's collector exactly as the
    host leaves it, whatever its threads do): the pause never calls
    ``gc.disable()`` or ``gc.enable()``.  A ``gc.disable()`` made while the
    collector is already disabled changes nothing that can be observed, so a
    pause that disabled the collector could not tell, when it ends, whether
    the host disabled it too meanwhile (a host's ``gc.disable()`` on another
    thread was undone), and two pauses reading ``gc.isenabled()`` could each
    take the other's state for the host's.  Instead the first pause of the
    process (counted under a lock, across threads and nesting) raises
    generation 0's threshold to :data:`_GC_PAUSED_THRESHOLD`, and the last
    one to end puts the host's threshold back, unless the threshold is no
    longer the pause's (the host called ``gc.set_threshold`` meanwhile: its
    setting stays).  ``gc.isenabled()``, ``gc.enable()``, ``gc.disable()``
    and ``gc.collect()`` stay the host's alone.  Nothing is raised."""
    global _gc_pauses, _gc_saved_threshold
    with _gc_lock:
        if _gc_pauses == 0:
            threshold = gc.get_threshold()
            _gc_saved_threshold = threshold[0]
            gc.set_threshold(_GC_PAUSED_THRESHOLD, *threshold[1:])
        _gc_pauses += 1
    try:
        yield
    finally:
        with _gc_lock:
            _gc_pauses -= 1
            if _gc_pauses == 0:
                threshold = gc.get_threshold()
                if threshold[0] == _GC_PAUSED_THRESHOLD:  # else the host set its own meanwhile
                    gc.set_threshold(_gc_saved_threshold, *threshold[1:])


def gc_is_paused() -> bool:
    """Whether no automatic collection runs now: inside :func:`gc_paused`
    (any thread's), or with the collector disabled or its threshold 0."""
    return _gc_pauses > 0 or not gc.isenabled() or gc.get_threshold()[0] == 0


_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


def _fetchc_code(frame: Any) -> bool:
    return os.path.abspath(frame.f_code.co_filename).startswith(_PACKAGE_DIR + os.sep)


def owns_process() -> bool:
    """Whether the ``fetchc`` command is the whole program, so that nothing
    runs after it but the interpreter's exit (and :func:`fetchc.cli.entry`
    may end it with ``os._exit``, skipping the finalisation).

    True exactly when the caller's stack holds only fetchc's own code below
    either the main program's top level being fetchc's console script (the
    ``__main__`` module that imported ``fetchc.command.entry`` as ``entry``,
    as pip writes ``bin/fetchc``), or the interpreter's ``python -m
    fetchc.cli`` / ``-m fetchc.command`` (``runpy._run_module_as_main``, the
    outermost frame, running a fetchc module).  False under any other
    ``__main__``: ``python -m cProfile``, ``runpy.run_path`` from a host, a
    test harness, ``python -c`` calling ``fetchc.cli.entry()``: their code
    runs after the command (cProfile writes its profile then).  False too
    when a ``sitecustomize`` or ``usercustomize`` from outside Python's
    standard library directory (the installation's own, such as Debian's,
    do not count) is loaded: its objects (a buffered log file) may need the
    interpreter's finalisation."""
    stdlib = os.path.dirname(os.path.abspath(os.__file__)) + os.sep
    for name in ("sitecustomize", "usercustomize"):
        module = sys.modules.get(name)
        path = getattr(module, "__file__", None)
        if module is not None and not (isinstance(path, str) and os.path.abspath(path).startswith(stdlib)):
            return False

    frame = sys._getframe(1)
    while frame.f_back is not None:
        if not _fetchc_code(frame):
            outer = frame.f_back
            return (  # runpy may be frozen ("<frozen runpy>"): known by its module name
                frame.f_code.co_name == "_run_code"
                and frame.f_globals.get("__name__") == "runpy"
                and outer.f_back is None
                and outer.f_code.co_name == "_run_module_as_main"
                and outer.f_globals.get("__name__") == "runpy"
            )
        frame = frame.f_back
    if frame.f_code.co_name != "<module>" or frame.f_globals.get("__name__") != "__main__":
        return False
    if _fetchc_code(frame):
        return True  # python fetchc/cli.py
    command = sys.modules.get("fetchc.command")
    return command is not None and frame.f_globals.get("entry") is getattr(command, "entry", None)

"""The ``fetchc`` command's process entry (the console script): as little as
possible before a guard, so that even loading fetchc under a tight ``ulimit
-v`` ends in one ``error:`` line and exit status 1, never a traceback.

:func:`entry` loads :mod:`fetchc.cli` and runs it; :func:`last_words` is how
the command ends when its usual reporting cannot (loading failed, or
reporting an error ran out of memory again).  This module imports only what
the interpreter has loaded already (``os``) and ``resource``.
Below about 16 MiB of address space the interpreter itself cannot start
(its ``site`` module fails): that is Python's message, not fetchc's.
"""

from __future__ import annotations

import os

__all__ = ["entry", "last_words"]

try:  # first: later, under a tight ulimit -v, even this may fail, and the error line names the limit
    import resource

    _soft = resource.getrlimit(resource.RLIMIT_AS)[0]
    AS_LIMIT: int | None = None if _soft == resource.RLIM_INFINITY else _soft
except BaseException:  # noqa: BLE001 - no resource module, or no memory to load it
    AS_LIMIT = None

_MEMORY_WORDS = ("memory", "failed to map segment", "cannot allocate")


def last_words(e: BaseException) -> None:
    """End the command after ``e``, which the usual reporting could not
    handle: one line on stderr (``error: interrupted``, ``error: out of
    memory while starting fetchc (the address-space limit, ulimit -v, is N
    MiB)`` when ``e`` is a lack of memory or happened under an address-space
    limit, else ``error: cannot start fetchc (broken installation?): ...``),
    written with ``os.write``; exit status 1 through ``os._exit`` (no atexit
    handler runs: they would need memory too).  Never returns.  Finalizers
    that run out of memory meanwhile (an allocation here can trigger a
    collection) report nothing: the collector is stopped and unraisable
    exceptions are dropped first, since the process is ending."""
    try:
        import gc
        import sys

        gc.disable()
        sys.unraisablehook = _ignore_unraisable
    except BaseException:  # noqa: BLE001, S110 - out of memory already: say what we can below
        pass
    try:
        if isinstance(e, KeyboardInterrupt):
            text = "error: interrupted"
        elif (
            isinstance(e, (MemoryError, SystemError))
            or any(w in str(e).lower() for w in _MEMORY_WORDS)
            or (AS_LIMIT is not None and not isinstance(e, ModuleNotFoundError))
        ):
            text = "error: out of memory while starting fetchc"
            if AS_LIMIT is not None:
                text += f" (the address-space limit, ulimit -v, is {AS_LIMIT >> 20} MiB)"
        else:
            first = (str(e).splitlines() or [""])[0]
            text = f"error: cannot start fetchc (broken installation?): {type(e).__name__}: {first}"
        os.write(2, text.encode("ascii", "backslashreplace") + b"\n")
    except BaseException:  # noqa: BLE001 - out of memory even for that
        try:
            os.write(2, b"error: out of memory\n")
        except BaseException:  # noqa: BLE001, S110 - nowhere left to say it
            pass
    os._exit(1)


def _ignore_unraisable(unraisable: object) -> None:
    """``sys.unraisablehook`` while :func:`last_words` ends the process."""


def entry() -> None:
    """The ``fetchc`` console script: :func:`fetchc.cli.entry`, loaded under
    the guard of :func:`last_words`.  Exits with the command's status."""
    try:
        from fetchc import cli
    except BaseException as e:  # noqa: BLE001 - the command shows no traceback, not even here
        last_words(e)
    cli.entry()


if __name__ == "__main__":
    entry()

"""Start-up cost of the ``fetchc`` command: a code cache for ``dataclasses``.

About half of importing xDSL is Python compiling the ``__init__``,
``__eq__``, ``__repr__``... that :mod:`dataclasses` generates for its
several hundred attribute and op classes: each is source text handed to
``exec``, compiled anew at every start.  :func:`install` gives the
``dataclasses`` module an ``exec`` that looks the compiled code up by its
source text in a cache file, like ``__pycache__`` does for modules: the same
text always compiles to the same code, so behaviour is unchanged.

* The cache is one :mod:`marshal` file per Python version and subcommand,
  ``$XDG_CACHE_HOME/fetchc/dataclasses-<cache_tag>-<command>.marshal``
  (default ``~/.cache``; ``FETCHC_CACHE_DIR`` overrides the directory; an
  empty value disables the cache), so a compile loads only the code a
  compile uses (about 750 entries) and not ``sim``'s or ``run``'s too.  It
  is written, atomically, when a run compiled something new (the entries
  loaded plus the new ones) or when it holds more than twice the entries
  the run used (then only those, if it used at least ``_MIN_USED``: stale code from an older fetchc or xDSL
  goes), and only by the ``fetchc`` command (:mod:`fetchc.cli`); a library
  user of fetchc is never affected.
* Any problem (unreadable, corrupt, unwritable) silently falls back to
  compiling, as Python itself does with ``__pycache__``.

Measured by ``tools/bench_compile.py`` (cold start).  Upstream (CPython
3.13 batches the generated methods into one ``exec`` per class) makes this
smaller, not wrong.
"""

from __future__ import annotations

import atexit
import builtins
import marshal
import os
import sys

__all__ = ["install", "cache_path"]

_cache: dict[str, object] = {}
_used: set[str] = set()
_dirty = False
# A run that used fewer entries (``--help``, a usage error) never prunes.
_MIN_USED = 100


def cache_path(command: str = "compile") -> str | None:
    """The cache file of this Python and ``command`` (``compile``, ``dis``,
    ``sim``, ``run``), or None when caching is disabled."""
    root = os.environ.get("FETCHC_CACHE_DIR")
    if root is None:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        root = os.path.join(base, "fetchc")
    if not root:
        return None
    return os.path.join(root, f"dataclasses-{sys.implementation.cache_tag}-{command}.marshal")


def _exec(source, globals=None, locals=None, /):  # noqa: A002 - exec's own parameter names
    global _dirty
    if isinstance(source, str):
        _used.add(source)
        code = _cache.get(source)
        if code is None:
            code = compile(source, "<string>", "exec")
            _cache[source] = code
            _dirty = True
        source = code
    return builtins.exec(source, globals, locals)


def _save(path: str) -> None:
    stale = len(_used) >= _MIN_USED and len(_cache) > 2 * len(_used)
    if not (_dirty or stale):
        return
    keep = {k: _cache[k] for k in _used if k in _cache} if stale else _cache
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "wb") as f:
            marshal.dump(keep, f)
        os.replace(tmp, path)
    except (OSError, ValueError):
        pass


def install(command: str = "compile") -> None:
    """Give :mod:`dataclasses` the caching ``exec`` (before xDSL is imported;
    idempotent), with the cache of ``command``.  Never raises."""
    import dataclasses

    if getattr(dataclasses, "exec", None) is _exec:
        return
    path = cache_path(command)
    if path is None:
        return
    try:
        with open(path, "rb") as f:
            loaded = marshal.load(f)
        if isinstance(loaded, dict):
            _cache.update(loaded)
    except (OSError, EOFError, ValueError, TypeError):
        pass
    dataclasses.exec = _exec  # type: ignore[attr-defined]
    atexit.register(_save, path)

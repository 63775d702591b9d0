"""Start-up cost of the ``fetchc`` command: a code cache for ``dataclasses``.

About half of importing xDSL is Python compiling the ``__init__``,
``__eq__``, ``__repr__``... that :mod:`dataclasses` generates for its
several hundred attribute and op classes: each is source text handed to
``exec``, compiled anew at every start.  :func:`install` gives the
``dataclasses`` module an ``exec`` that looks the compiled code up by its
source text in a cache file, like ``__pycache__`` does for modules: the same
text always compiles to the same code (``compile(..., dont_inherit=True)``,
so nothing of this module's compiler flags leaks into it), and behaviour is
unchanged.

* The cache is one file per Python bytecode version and subcommand,
  ``dataclasses-<cache_tag>-<command>.marshal`` in fetchc's cache directory
  (:mod:`fetchc.cachedir`: ``FETCHC_CACHE_DIR``, else
  ``$XDG_CACHE_HOME/fetchc`` or ``~/.cache/fetchc``; an empty
  ``FETCHC_CACHE_DIR`` disables it).  A compile loads only the code a compile
  uses (about 750 entries), not ``sim``'s or ``run``'s too.
* **Safety.** Code objects are only ever loaded from an entry that
  :func:`fetchc.cachedir.read_entry` accepts: a regular file owned by the
  user and writable by nobody else, whose SHA-256 matches (a corrupt or
  truncated file is never handed to ``marshal``, which can crash on bad
  bytes), and whose header names this Python's bytecode magic number.  A file
  placed by someone else is ignored.  The payload is a ``marshal``-ed
  ``{source text: code}`` dict whose keys are checked to be strings and
  values code objects.
* It is written (atomically, :func:`fetchc.cachedir.write_entry`) when a run
  compiled something new or when it holds more than twice the entries the
  run used (then only those, if it used at least ``_MIN_USED``: stale code
  from an older fetchc or xDSL goes), and only by the ``fetchc`` command
  (:mod:`fetchc.cli`); a library user of fetchc is never affected.  Writing
  happens at exit and never raises (a full disk, ``ulimit -v``).

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
from importlib.util import MAGIC_NUMBER
from types import CodeType

from fetchc import cachedir

__all__ = ["install", "cache_path"]

_cache: dict[str, object] = {}
_used: set[str] = set()
_dirty = False
# A run that used fewer entries (``--help``, a usage error) never prunes.
_MIN_USED = 100


_MAGIC = b"FETCHC-DATACLASSES-1\0" + MAGIC_NUMBER


def cache_path(command: str = "compile") -> str | None:
    """The cache file of this Python and ``command`` (``compile``, ``dis``,
    ``sim``, ``run``), or None when caching is disabled."""
    root = cachedir.cache_dir()
    if root is None:
        return None
    return os.path.join(root, f"dataclasses-{sys.implementation.cache_tag}-{command}.marshal")


def _exec(source, globals=None, locals=None, /):  # noqa: A002 - exec's own parameter names
    global _dirty
    if isinstance(source, str):
        _used.add(source)
        code = _cache.get(source)
        if code is None:
            code = compile(source, "<string>", "exec", dont_inherit=True)
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
        payload = marshal.dumps(keep)
    except (ValueError, MemoryError):
        return
    cachedir.write_entry(path, _MAGIC, payload)


def _load(path: str) -> dict[str, CodeType]:
    """The entries of the cache file at ``path``; empty when there is none
    or :func:`fetchc.cachedir.read_entry` refuses it."""
    payload = cachedir.read_entry(path, _MAGIC)
    if payload is None:
        return {}
    try:
        loaded = marshal.loads(payload)
    except (EOFError, ValueError, TypeError, MemoryError):
        return {}
    if not isinstance(loaded, dict):
        return {}
    return {k: v for k, v in loaded.items() if isinstance(k, str) and isinstance(v, CodeType)}


def install(command: str = "compile") -> None:
    """Give :mod:`dataclasses` the caching ``exec`` (before xDSL is imported;
    idempotent), with the cache of ``command``.  Never raises."""
    import dataclasses

    if getattr(dataclasses, "exec", None) is _exec:
        return
    path = cache_path(command)
    if path is None:
        return
    _cache.update(_load(path))
    dataclasses.exec = _exec  # type: ignore[attr-defined]  # shadows the builtin for dataclasses' generated code
    atexit.register(_save, path)

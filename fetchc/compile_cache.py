"""The kernel compile cache: compile each distinct kernel once.

A ``seq.bin`` is the concatenation of per-kernel parts: each ``func.func``'s
Fetch Unit programs, the tables they use and its MANIFEST kernel.  What a
kernel compiles to depends only on its own IR (placement, sequencer
configurations, tables and the MANIFEST are per kernel; ir.md §2a), except
for its names (function, tensors, programs) and its source locations.  The
cache keeps each kernel's part with those replaced by placeholders (a
*fragment*), keyed by the kernel with names taken out, and re-stamps the
names and locations of the kernel being compiled:

* **Key.**  :attr:`fetchc.textlayout.FuncText.key` (the function's tokens
  with SSA names numbered by first appearance, its own name blanked, the
  aliases it uses appended), the pipeline with its options, and
  :func:`salt`: fetchc's and xDSL's versions, the Python version and a
  fingerprint of fetchc's own source files (so an edited checkout never
  reuses an old result).  Only inputs whose layout :func:`fetchc.textlayout.layout`
  reads, and pipelines made only of fetchc's passes, are cached.
* **Fragment.**  The kernel's ``seq.bin`` part as a :class:`SeqBin` whose
  program names are their index in the function, whose kernel and tensor
  names are placeholders and whose program ``loc`` is ``"<token>#<k>"``: the
  ``k``-th token ``<token>`` of the function (the op the location points
  at).  On disk a fragment is a whole ``seq.bin`` file, read back by the
  validating reader: data only, never code.
* **Stamping.**  Names and locations come from the input being compiled:
  function name, tensor names (``rngd.name``, else the SSA name), scratch
  names, ``file:line:col`` of the ``k``-th ``<token>``.
* **Merging.**  :func:`merge` concatenates fragments in function order,
  storing each distinct table once in order of first use, exactly as the
  emitter does.
* **Verified on the way in.**  A compile that missed stores its fragments
  only if stamping them back and merging gives exactly the ``SeqBin`` the
  compile produced (and only if it produced no warning); otherwise nothing is
  stored.  So a hit can only reproduce bytes that an uncached compile gave.
* **Remarks are replayed** (as ccache replays a compiler's messages).  A
  pass's remarks (``fetch-split-scaling`` says when it fetches block scales
  in lockstep) do not keep a kernel out of the cache: each is stored with its
  fragment as ``(token, k, message)``, its location the ``k``-th token
  ``token`` of the function (each a remark without notes, at a token of its
  function; a remark's text names no SSA value or tensor, which the key
  erases), and :meth:`KernelCache.compile` returns them stamped with the
  ``file:line:col`` of the input being compiled, in function order.

Where: in process, a bounded LRU (:data:`MEMORY_ENTRIES` fragments and
:data:`MEMORY_INPUTS` whole inputs), for :func:`fetchc.compile`; on disk, for
the ``fetchc`` command, under ``kernels/`` of the cache directory
(:mod:`fetchc.cachedir`: owner and permission checks, checksums, atomic
writes), and under ``inputs/`` the bytes of whole inputs compiled before
(:func:`whole_get`: the command answers an exact repeat without importing
xDSL), each at most :data:`DISK_BYTES` (oldest entries go first).
``FETCHC_NO_CACHE=1`` (or ``--no-cache``) turns the kernel cache off;
``FETCHC_CACHE_DIR=""`` turns every on-disk cache off.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import struct
import sys
from collections import OrderedDict
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, fields, replace
from typing import TYPE_CHECKING, Any

from fetchc import __version__, cachedir
from fetchc.textlayout import FuncText, Layout, layout

if TYPE_CHECKING:
    from fetchc.seqbin import SeqBin

__all__ = [
    "DISK_BYTES",
    "MEMORY_ENTRIES",
    "MEMORY_INPUTS",
    "NO_CACHE_ENV",
    "KernelCache",
    "enabled",
    "merge",
    "salt",
    "whole_get",
    "whole_put",
]

NO_CACHE_ENV = "FETCHC_NO_CACHE"
"""Environment variable: set (not ``0``) to turn the kernel cache off."""
MEMORY_ENTRIES = 4096
"""Fragments kept in process (least recently used go first)."""
MEMORY_INPUTS = 256
"""Whole inputs (text, file name, pipeline → bytes) kept in process."""
DISK_BYTES = 256 << 20
"""Most bytes of fragments kept on disk."""
_MAGIC = b"FETCHC-KERNEL-2\0"
"""A disk fragment: ``key NUL``, a u32 byte count and that many bytes of
JSON (its remarks, ``[[token, k, message], ...]``), then the ``seq.bin``."""
_PLACEHOLDER = "_"


def enabled() -> bool:
    """Whether the kernel cache is on (``FETCHC_NO_CACHE`` unset or ``0``)."""
    return os.environ.get(NO_CACHE_ENV, "") in ("", "0")


_SALT: str | None = None


def salt() -> str:
    """What every key includes: fetchc's version, xDSL's, Python's, and a
    fingerprint of fetchc's source files (path, size, modification time)."""
    global _SALT
    if _SALT is None:
        root = os.path.dirname(os.path.abspath(__file__))
        h = hashlib.sha256(f"{__version__}\0{sys.version}\0".encode())
        for dirpath, dirnames, filenames in os.walk(root, followlinks=True):
            dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
            for name in sorted(filenames):
                if name.endswith(".py"):
                    st = os.stat(os.path.join(dirpath, name))
                    h.update(f"{os.path.relpath(dirpath, root)}/{name}\0{st.st_size}\0{st.st_mtime_ns}\0".encode())
        h.update(_xdsl_version().encode())
        _SALT = h.hexdigest()
    return _SALT


def _xdsl_version() -> str:
    """The installed xDSL's distribution directory name (``xdsl-0.75.0.dist-info``),
    found without importing xDSL (the whole-input cache answers before any
    import of it)."""
    import importlib.util

    spec = importlib.util.find_spec("xdsl")
    origin = spec.origin if spec is not None else None
    if not origin:
        return "xdsl ?"
    site = os.path.dirname(os.path.dirname(origin))
    try:
        found = sorted(n for n in os.listdir(site) if n.startswith("xdsl-") and n.endswith(".dist-info"))
    except OSError:
        found = []
    return ",".join(found) or origin


def _digest(*parts: str) -> str:
    return hashlib.sha256("\0".join(parts).encode("utf-8", "surrogatepass")).hexdigest()


# --------------------------------------------------------------------------
# Fragments: a kernel's part of a seq.bin, names and locations as placeholders
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class _Stamp:
    """What stamping needs of the input: the function, where it is, and the
    file name locations carry."""

    func: FuncText
    layout: Layout
    filename: str


def renamed(obj, **changes):
    """``dataclasses.replace(obj, **changes)`` for the ``seq.bin`` model's
    frozen dataclasses (:class:`~fetchc.seqbin.Program`, the MANIFEST's
    ``Kernel``, ``KernelProgram``, ``Tensor``, ``Scalar``), without
    re-running their generated ``__init__``: the fields are copied and
    ``changes`` set.  Only for a class with no ``__post_init__``, no slots and
    only init fields, and an object holding nothing but its fields (else this
    is ``replace``).  About a third of ``replace``'s cost; stamping a
    224-kernel model makes ~3000 of them.  Raises ``TypeError`` for a name
    that is not a field, as ``replace`` does."""
    cls = type(obj)
    n = _PLAIN.get(cls)
    if n is None:
        n = _PLAIN[cls] = _plain_fields(cls)
    if not n or len(obj.__dict__) != n:
        return replace(obj, **changes)
    new = object.__new__(cls)
    d = new.__dict__
    d.update(obj.__dict__)
    for k, v in changes.items():
        if k not in d:
            raise TypeError(f"{cls.__name__} has no field {k!r}")
        d[k] = v
    return new


_PLAIN: dict[type, int] = {}


def _plain_fields(cls: type) -> int:
    """How many fields ``cls`` has when :func:`renamed` may copy them, else 0."""
    fs = fields(cls)
    plain = (
        not hasattr(cls, "__post_init__")
        and "__slots__" not in vars(cls)
        and all(f.init for f in fs)
        and len(getattr(cls, "__dataclass_fields__", {})) == len(fs)
    )
    return len(fs) if plain else 0


def _tensor_names(stamp: _Stamp, tensors, scalars) -> tuple[list[str], list[str]]:
    arg_names = [n or f"arg{i}" for i, n in enumerate(stamp.func.arg_names)]
    taken = set(arg_names)
    names, k = [], 0
    for t in tensors:
        if t.arg is not None:
            names.append(arg_names[t.arg])
            continue
        while f"scratch{k}" in taken:  # fetchc.kernel.scratch_names
            k += 1
        names.append(f"scratch{k}")
        k += 1
    return names, [arg_names[s.arg] for s in scalars]


def _stamp(fragment, stamp: _Stamp):
    """The fragment with the names and locations of ``stamp``'s function.
    Raises ``LookupError`` when a location token is not in the function."""
    from fetchc.seqbin import SeqBin
    from fetchc.seqbin.manifest import Manifest

    fname = stamp.func.name
    programs = tuple(renamed(p, name=f"{fname}/{p.name}") for p in fragment.programs)
    if fragment.manifest is None or not fragment.manifest.kernels:
        return SeqBin(fragment.tables, programs, Manifest(()))
    (kernel,) = fragment.manifest.kernels
    names, scalar_names = _tensor_names(stamp, kernel.tensors, kernel.scalars)
    entries = []
    for kp in kernel.programs:
        token, _, k = kp.loc.rpartition("#")
        offset = stamp.func.offset_of(token, int(k))
        if offset is None:
            raise LookupError(kp.loc)
        line, col = stamp.layout.line_col(offset)
        entries.append(renamed(kp, loc=f"{stamp.filename}:{line}:{col}"))
    kernel = renamed(
        kernel,
        name=fname,
        tensors=tuple(renamed(t, name=n) for t, n in zip(kernel.tensors, names, strict=False)),
        scalars=tuple(renamed(s, name=n) for s, n in zip(kernel.scalars, scalar_names, strict=False)),
        programs=tuple(entries),
    )
    return SeqBin(fragment.tables, programs, Manifest((kernel,)))


def _unstamp(part, stamp: _Stamp):
    """The fragment of ``part`` (one function's part of a compiled seq.bin),
    or None when a location is not at a token of the function."""
    from fetchc.seqbin import SeqBin
    from fetchc.seqbin.manifest import Manifest

    prefix = f"{stamp.func.name}/"
    if any(p.name is None or not p.name.startswith(prefix) for p in part.programs):
        return None
    programs = tuple(renamed(p, name=p.name[len(prefix) :]) for p in part.programs)
    if not part.manifest.kernels:
        return SeqBin(part.tables, programs, Manifest(()))
    (kernel,) = part.manifest.kernels
    entries = []
    for kp in kernel.programs:
        where = _token_at(stamp, kp.loc)
        if where is None:
            return None
        entries.append(renamed(kp, loc=f"{where[0]}#{where[1]}"))
    kernel = renamed(
        kernel,
        name=_PLACEHOLDER,
        tensors=tuple(renamed(t, name=f"{_PLACEHOLDER}t{i}") for i, t in enumerate(kernel.tensors)),
        scalars=tuple(renamed(s, name=f"{_PLACEHOLDER}s{i}") for i, s in enumerate(kernel.scalars)),
        programs=tuple(entries),
    )
    return SeqBin(part.tables, programs, Manifest((kernel,)))


def _token_at(stamp: _Stamp, loc: str) -> tuple[str, int] | None:
    prefix = f"{stamp.filename}:"
    if not loc.startswith(prefix):
        return None
    try:
        line, col = (int(x) for x in loc[len(prefix) :].split(":"))
    except ValueError:
        return None
    if not 1 <= line <= len(stamp.layout.line_starts):
        return None
    return stamp.func.occurrence(stamp.layout.line_starts[line - 1] + col - 1)


def _unstamp_remarks(diagnostics: Sequence, stamps: Sequence[_Stamp]) -> list[list[tuple[str, int, str]]] | None:
    """The remarks among ``diagnostics`` per function of ``stamps`` (in
    order), each as ``(token, k, message)``; None when a diagnostic is not a
    remark without notes located at a token of one of those functions."""
    out: list[list[tuple[str, int, str]]] = [[] for _ in stamps]
    for d in diagnostics:
        if d.severity != "remark" or d.notes or d.loc is None:
            return None
        loc = f"{d.loc[0]}:{d.loc[1]}:{d.loc[2]}"
        for i, stamp in enumerate(stamps):
            where = _token_at(stamp, loc)
            if where is not None:
                out[i].append((where[0], where[1], d.message))
                break
        else:
            return None
    return out


def _stamp_remarks(remarks: Sequence[tuple[str, int, str]], stamp: _Stamp) -> list:
    """Remark diagnostics at the ``file:line:col`` of ``stamp``'s function.
    Raises ``LookupError`` when a token is not in the function."""
    from fetchc.diagnostics import Diagnostic

    out = []
    for token, k, message in remarks:
        offset = stamp.func.offset_of(token, k)
        if offset is None:
            raise LookupError(token)
        line, col = stamp.layout.line_col(offset)
        out.append(Diagnostic("remark", message, (stamp.filename, line, col)))
    return out


def _remarks_from_json(data: bytes) -> list[tuple[str, int, str]]:
    """A disk fragment's remarks (``[[token, k, message], ...]``).  Raises
    ``ValueError`` for anything else."""
    items = json.loads(data.decode("utf-8"))
    if not isinstance(items, list) or not all(
        isinstance(r, list)
        and len(r) == 3
        and isinstance(r[0], str)
        and isinstance(r[1], int)
        and isinstance(r[2], str)
        for r in items
    ):
        raise ValueError("not a list of remarks")
    return [(r[0], r[1], r[2]) for r in items]


def merge(parts: Sequence) -> SeqBin:
    """One :class:`~fetchc.seqbin.SeqBin` of per-function parts, in order:
    programs concatenated (MANIFEST program indices shifted), each distinct
    table stored once in order of first use (program ``table`` fields
    renumbered), kernels concatenated."""
    from fetchc.seqbin import SeqBin
    from fetchc.seqbin.manifest import Manifest

    tables: list = []
    index_of: dict = {}
    programs: list[Any] = []
    kernels: list[Any] = []
    for part in parts:
        base = len(programs)
        for p in part.programs:
            if p.table is not None:
                t = part.tables[p.table]
                if t not in index_of:
                    index_of[t] = len(tables)
                    tables.append(t)
                p = renamed(p, table=index_of[t])
            programs.append(p)
        for k in part.manifest.kernels:
            kernels.append(renamed(k, programs=tuple(renamed(kp, index=kp.index + base) for kp in k.programs)))
    return SeqBin(tuple(tables), tuple(programs), Manifest(tuple(kernels)))


def _split(sb, functions: Sequence[FuncText]) -> list | None:
    """The compiled ``sb`` cut into one part per function of ``functions``
    (their programs are named ``function/index``; a function with no
    program has an empty part), or None when it does not cut cleanly."""
    from fetchc.seqbin import SeqBin
    from fetchc.seqbin.manifest import Manifest

    if sb.manifest is None:
        return None
    kernel_of = {k.name: k for k in sb.manifest.kernels}
    parts = []
    for f in functions:
        idx = [i for i, p in enumerate(sb.programs) if p.name is not None and p.name.rpartition("/")[0] == f.name]
        tables: list[Any] = []
        index_of: dict[Any, int] = {}
        progs: list[Any] = []
        for p in (sb.programs[i] for i in idx):
            if p.table is not None:
                if p.table not in index_of:
                    index_of[p.table] = len(tables)
                    tables.append(sb.tables[p.table])
                p = renamed(p, table=index_of[p.table])
            progs.append(p)
        k = kernel_of.get(f.name)
        if k is None and idx:
            return None
        kernels = (
            ()
            if k is None
            else (renamed(k, programs=tuple(renamed(kp, index=idx.index(kp.index)) for kp in k.programs)),)
        )
        parts.append(SeqBin(tuple(tables), tuple(progs), Manifest(kernels)))
    return parts


# --------------------------------------------------------------------------
# Whole inputs on disk: the command line's exact repeat
# --------------------------------------------------------------------------

_WHOLE_MAGIC = b"FETCHC-SEQBIN-1\0"


def _whole_key(data: bytes, filename: str, pipeline: str) -> tuple[str, str] | None:
    root = cachedir.cache_dir()
    if root is None:
        return None
    parts = [salt().encode(), pipeline.encode(), filename.encode("utf-8", "surrogateescape"), data]
    key = hashlib.sha256(b"\0".join(parts)).hexdigest()
    return os.path.join(root, "inputs", key[:2], key + ".bin"), key


def whole_get(data: bytes, filename: str, pipeline: str) -> bytes | None:
    """The ``seq.bin`` bytes a compile of exactly these input bytes, file
    name and pipeline gave before, from disk, if the validating reader
    (:func:`fetchc.seqbin.read`) accepts them; None if there are none or it
    refuses them.  Imports nothing of xDSL.  ``pipeline`` may name the default pipeline
    symbolically: the salt covers fetchc's source."""
    where = _whole_key(data, filename, pipeline)
    found = None if where is None else cachedir.read_entry(where[0], _WHOLE_MAGIC)
    prefix = b"" if where is None else where[1].encode() + b"\0"
    if found is None or not found.startswith(prefix):
        return None
    seq_bin = found[len(prefix) :]
    from fetchc.seqbin import SeqBinError, read  # the validating reader; imports nothing of xDSL

    try:
        read(seq_bin)
    except SeqBinError:
        return None  # damaged, or written by another fetchc: a miss
    return seq_bin


def whole_put(data: bytes, filename: str, pipeline: str, seq_bin: bytes) -> None:
    """Remember ``seq_bin`` for :func:`whole_get` (only for a compile that
    succeeded without any diagnostic)."""
    where = _whole_key(data, filename, pipeline)
    if where is not None and cachedir.write_entry(where[0], _WHOLE_MAGIC, where[1].encode() + b"\0" + seq_bin):
        _prune(os.path.dirname(os.path.dirname(where[0])))


# --------------------------------------------------------------------------
# The cache
# --------------------------------------------------------------------------


class KernelCache:
    """Fragments by key: a bounded in-process LRU, backed by the cache
    directory's ``kernels/`` when ``disk`` is true.  Thread-unsafe (one per
    process, used by one compile at a time)."""

    def __init__(self, disk: bool = False) -> None:
        self.disk = disk
        self._memory: OrderedDict[str, object] = OrderedDict()
        self._inputs: OrderedDict[str, tuple[SeqBin, bytes, list]] = OrderedDict()
        self.hits = self.misses = 0

    # -- storage -----------------------------------------------------------

    def _path(self, key: str) -> str | None:
        root = cachedir.cache_dir() if self.disk else None
        return None if root is None else os.path.join(root, "kernels", key[:2], key + ".fsq")

    def get(self, key: str):
        """The fragment stored under ``key`` with its remarks
        (``(fragment, [(token, k, message), ...])``), or None."""
        found = self._memory.get(key)
        if found is not None:
            self._memory.move_to_end(key)
            return found
        path = self._path(key)
        data = None if path is None else cachedir.read_entry(path, _MAGIC)
        if data is None or not data.startswith(key.encode() + b"\0"):
            return None  # none, or an entry of another key under this name
        from fetchc.seqbin import SeqBinError, read

        start = len(key) + 1
        try:
            (n,) = struct.unpack_from("<I", data, start)
            remarks = _remarks_from_json(data[start + 4 : start + 4 + n])
            found = (read(data[start + 4 + n :]), remarks)
        except (SeqBinError, struct.error, ValueError):
            return None  # written by another fetchc, or damaged: a miss
        self._remember(key, found)
        return found

    def put(self, key: str, fragment, remarks: Sequence[tuple[str, int, str]] = ()) -> None:
        """Store ``fragment`` and its ``remarks`` under ``key`` (in process;
        on disk too when ``disk``)."""
        entry = (fragment, list(remarks))
        self._remember(key, entry)
        path = self._path(key)
        if path is not None:
            from fetchc.seqbin import write

            text = json.dumps(entry[1], ensure_ascii=True).encode()
            payload = key.encode() + b"\0" + struct.pack("<I", len(text)) + text + write(fragment)
            if cachedir.write_entry(path, _MAGIC, payload):
                _prune(os.path.dirname(os.path.dirname(path)))

    def _remember(self, key: str, fragment) -> None:
        self._memory[key] = fragment
        self._memory.move_to_end(key)
        while len(self._memory) > MEMORY_ENTRIES:
            self._memory.popitem(last=False)

    # -- compiling ---------------------------------------------------------

    def compile(self, text: str, filename: str, pipeline: str, uncached: Callable[[str], tuple]) -> tuple | None:
        """``(SeqBin, bytes, remarks)`` of ``text``, from the cache where it
        can; ``remarks``: the passes' remark diagnostics, located in ``text``
        (module docstring), which the caller reports.

        ``uncached(text)`` compiles a text with ``pipeline`` for real and
        returns ``(SeqBin, bytes, diagnostics)``, raising
        :class:`~fetchc.diagnostics.DiagnosticError` for bad input.
        Functions whose fragments are cached are not compiled at all; the
        others are compiled from a copy of the input where the cached ones are
        blanked out (same lines and columns), and their fragments stored.
        Returns None when the input or the pipeline is not one the cache
        handles, or when that compile fails or warns: the caller then
        compiles the whole input normally, so every diagnostic is exactly a
        normal compile's."""
        whole = _digest(salt(), pipeline, filename, text)
        if whole in self._inputs:
            self._inputs.move_to_end(whole)
            self.hits += 1
            return self._inputs[whole]
        lay = layout(text)
        if lay is None or not _cacheable_pipeline(pipeline):
            return None
        stamps = [_Stamp(f, lay, filename) for f in lay.functions]
        keys = [_digest(salt(), pipeline, f.key) for f in lay.functions]
        fragments = {k: self.get(k) for k in dict.fromkeys(keys)}
        missing = [k for k, frag in fragments.items() if frag is None]
        self.hits += len(fragments) - len(missing)
        self.misses += len(missing)
        if missing and not self._compile_missing(text, lay, stamps, keys, missing, fragments, uncached):
            return None
        from fetchc.seqbin import SeqBinError, write

        try:
            sb = merge([_stamp(fragments[k][0], s) for k, s in zip(keys, stamps, strict=True)])
            remarks = [r for k, s in zip(keys, stamps, strict=True) for r in _stamp_remarks(fragments[k][1], s)]
            result = (sb, write(sb), remarks)
        except (SeqBinError, LookupError, ValueError):
            return None  # e.g. two tensors stamped with one name: the normal compile says why
        self._inputs[whole] = result
        while len(self._inputs) > MEMORY_INPUTS:
            self._inputs.popitem(last=False)
        return result

    def _compile_missing(self, text, lay, stamps, keys, missing, fragments, uncached) -> bool:
        """Compile one function of each key in ``missing`` (the input with
        every other function blanked out), store their fragments in
        ``fragments`` and the cache.  False when that compile fails or
        warns, or a fragment does not stamp back to what was compiled."""
        from fetchc.diagnostics import DiagnosticError

        first = [keys.index(k) for k in missing]
        keep = set(first)
        try:
            compiled = uncached(_only(text, lay, keep))
        except DiagnosticError:
            return False
        remarks = _unstamp_remarks(compiled[2], [stamps[i] for i in first])
        parts = None if remarks is None else _split(compiled[0], [lay.functions[i] for i in first])
        if parts is None or remarks is None:  # warnings, or a part that does not cut cleanly
            return False
        for k, i, part, rs in zip(missing, first, parts, remarks, strict=False):
            fragment = _unstamp(part, stamps[i])
            if fragment is None or _stamp(fragment, stamps[i]) != part:
                return False
            fragments[k] = (fragment, rs)
            self.put(k, fragment, rs)
        return True


def _cacheable_pipeline(pipeline: str) -> bool:
    """Only pipelines of fetchc's own passes (which work per kernel);
    ``<default>`` is the command line's name of the default pipeline."""
    if pipeline == "<default>":
        return True
    from fetchc.driver import parse_pipeline

    try:
        return all(p.name.startswith("fetch-") for p in parse_pipeline(pipeline))
    except Exception:  # noqa: BLE001 - a bad pipeline: the normal path reports it
        return False


def _only(text: str, lay: Layout, keep: Collection[int]) -> str:
    """``text`` with every function but those at ``keep`` replaced by
    spaces (line breaks kept), so the kept ones keep their lines, columns and
    aliases."""
    pieces, pos = [], 0
    for i, f in enumerate(lay.functions):
        if i in keep:
            continue
        pieces.append(text[pos : f.start])
        pieces.append(_NOT_A_BREAK.sub(" ", text[f.start : f.end]))
        pos = f.end
    pieces.append(text[pos:])
    return "".join(pieces)


_NOT_A_BREAK = re.compile(r"[^\r\n]")


def _prune(root: str, always: bool = False) -> None:
    """Remove the oldest entries under ``root`` until at most
    :data:`DISK_BYTES` remain (checked on one write in 64, or ``always``)."""
    if not always and os.urandom(1)[0] >= 4:
        return
    entries = []
    try:
        for dirpath, _, files in os.walk(root):
            for name in files:
                path = os.path.join(dirpath, name)
                st = os.lstat(path)
                entries.append((st.st_mtime, st.st_size, path))
    except OSError:
        return
    total = sum(size for _, size, _ in entries)
    for _, size, path in sorted(entries):
        if total <= DISK_BYTES:
            break
        try:
            os.unlink(path)
            total -= size
        except OSError:
            pass

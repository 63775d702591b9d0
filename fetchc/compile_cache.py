"""The kernel compile cache: compile each distinct kernel once.

A ``seq.bin`` is the concatenation of per-kernel parts: each ``func.func``'s
Fetch Unit programs, the tables they use and its MANIFEST kernel.  What a
kernel compiles to depends only on its own IR (placement, sequencer
configurations, tables and the MANIFEST are per kernel; ir.md §2a), except
for its names (function, tensors, programs) and its source locations.  The
cache keeps each kernel's part with those replaced by placeholders (a
*fragment*), keyed by the kernel's IR with names and locations erased, and
stamps the names and locations of the kernel being compiled.  It reads the
input only through the parser: everything below works on the parsed IR.

* **One reading.**  The input is parsed (the fast front end, as always) and
  checked (:func:`fetchc.driver.check_module`, every verifier) exactly as an
  uncached compile does; anything to report sends it down the uncached path,
  so every diagnostic is an uncached compile's.
* **Key.**  Per kernel, :func:`fetchc.irkey.kernel_key` of its
  ``func.func`` (an injective writing of the IR up to the function's name,
  SSA names, the arguments' ``rngd.name`` strings and the file positions of
  locations), with the pipeline text, the values of :data:`RESULT_ENV` and
  :func:`salt`.  Only inputs whose top level is kernels and nothing else
  (no module attributes, no other op), and pipelines of fetchc's own passes
  (:func:`cacheable_pipeline`), are cached.
* **Fragment.**  The kernel's ``seq.bin`` part as a :class:`SeqBin` whose
  program names are their index in the kernel, whose kernel, tensor and
  scalar names are placeholders and whose program ``loc`` is ``#k``: the
  location of the ``k``-th op of the key's walk.  On disk a fragment is a
  whole ``seq.bin`` file, read back by the validating reader: data only,
  never code.  With it the module-level symbols the kernel's compiled form
  refers to (its tables' ``@f8E5M2_to_bf16``...): a hit is refused when a
  kernel of the input is named like one of them.
* **Stamping** uses the emitter's own functions on the parsed IR: the
  function's name, :func:`fetchc.kernel.program_name`,
  :func:`fetchc.kernel.tensor_names`, :func:`fetchc.kernel.scratch_name_sequence`
  and :func:`fetchc.frontend.locations.loc_text` of the ``k``-th op.
* **Merging.**  :func:`merge` concatenates parts in function order,
  storing each distinct table once in order of first use, as the emitter
  does.
* **Checked on the way in.**  Only the kernels no fragment answers are
  compiled (one of each key; the module with every other function erased);
  their fragments are stored only if the compile reported nothing but
  remarks (below) and stamping each fragment back onto its own kernel gives
  exactly the part compiled.  Anything else, and any other diagnostic,
  makes the input compile uncached from a fresh parse.
* **Remarks are replayed.**  A pass's remarks (``fetch-split-scaling``'s
  lockstep fallback) do not keep a kernel out: each is stored with its
  entry as the index of the op it is at (the one op of the key's walk at
  its file position, with that op's location, as for a program's ``loc``)
  and its text, which must name nothing the key erases; a hit makes it
  again at this input's op (:meth:`_Kernel.remark`: its ``file:line:col``
  and location attribute, so rendering adds the same notes).  The driver
  reports remarks kernel by kernel (:func:`fetchc.driver.run_pipeline`),
  so a hit's diagnostics are an uncached compile's, line for line.  A
  compile that reports one is never stored as a whole input (the
  in-process memo, the command's ``inputs/``).

Where: in process, a bounded LRU (:data:`MEMORY_ENTRIES` fragments and
:data:`MEMORY_INPUTS` whole inputs), for :func:`fetchc.compile`; on disk, for
the ``fetchc`` command, under ``kernels/`` of the cache directory, and under
``inputs/`` the bytes of whole inputs compiled before (:func:`whole_get`:
the command answers an exact repeat without importing xDSL), each at most
:data:`DISK_BYTES` (:func:`fetchc.cachedir.prune`: only the cache's own
entries, oldest first).  ``FETCHC_NO_CACHE=1`` (or ``--no-cache``) turns
both off; ``FETCHC_CACHE_DIR=""`` turns every on-disk cache off.
"""

from __future__ import annotations

import hashlib
import os
import re
import struct
import sys
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, fields, replace
from typing import TYPE_CHECKING, Any

from fetchc import __version__, cachedir

if TYPE_CHECKING:
    from xdsl.dialects.builtin import ModuleOp
    from xdsl.dialects.func import FuncOp
    from xdsl.ir import Attribute, Operation
    from xdsl.passes import ModulePass

    from fetchc.diagnostics import Diagnostic
    from fetchc.seqbin import SeqBin

__all__ = [
    "DISK_BYTES",
    "MEMORY_ENTRIES",
    "MEMORY_INPUTS",
    "NO_CACHE_ENV",
    "RESULT_ENV",
    "Compiled",
    "KernelCache",
    "cacheable_pipeline",
    "enabled",
    "merge",
    "salt",
    "whole_get",
    "whole_put",
]

NO_CACHE_ENV = "FETCHC_NO_CACHE"
"""Environment variable: set (not ``0``) to turn the kernel cache off."""
RESULT_ENV = ("FETCHC_VERIFY_EACH", "FETCHC_PARSER")
"""The environment variables a compile reads that can change its result or
its diagnostics (``--verify-each``'s default, the parser choice; their
homes are :data:`fetchc.driver.VERIFY_EACH_ENV` and
:data:`fetchc.frontend.parsing.PARSER_ENV`): their values are part of every
key, so a compile under other values never reuses a result.
``test_compile_cache.py`` checks that every variable fetchc reads on the
compile path is here or changes neither."""
MEMORY_ENTRIES = 4096
"""Fragments kept in process (least recently used go first)."""
MEMORY_INPUTS = 256
"""Whole inputs (text, file name, pipeline, environment → bytes) kept in process."""
DISK_BYTES = 256 << 20
"""Most bytes of entries kept on disk, per kind (``kernels/``, ``inputs/``)."""
_MAGIC = b"FETCHC-KERNEL-3\0"
_WHOLE_MAGIC = b"FETCHC-SEQBIN-2\0"
_PLACEHOLDER = "_"
_KERNELS, _INPUTS = "kernels", "inputs"
_ENTRY_NAME = {_KERNELS: re.compile(r"[0-9a-f]{64}\.fsq"), _INPUTS: re.compile(r"[0-9a-f]{64}\.bin")}
_MAGIC_PREFIX = {_KERNELS: b"FETCHC-KERNEL-", _INPUTS: b"FETCHC-SEQBIN-"}


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


def _environment() -> bytes:
    """The values of :data:`RESULT_ENV`, written so that no two settings
    (unset included) give the same bytes."""
    out = []
    for name in RESULT_ENV:
        value = os.environ.get(name)
        out.append(b"-" if value is None else b"=" + _field(value.encode("utf-8", "surrogateescape")))
    return b"".join(out)


def _field(data: bytes) -> bytes:
    """``data`` with its length in front (a prefix-free field of a key)."""
    return b"%d:" % len(data) + data


def _digest(*parts: bytes) -> str:
    """The SHA-256 of ``parts``, each with its length in front (so no two
    lists of parts hash the same bytes)."""
    h = hashlib.sha256()
    for p in parts:
        h.update(b"%d:" % len(p))
        h.update(p)
    return h.hexdigest()


def cacheable_pipeline(passes: Sequence[ModulePass]) -> bool:
    """Whether a compile with ``passes`` may be answered from a cache:
    every pass is one of fetchc's own (:func:`fetchc.frontend.context.fetchc_passes`:
    ``fetch-route-sub-decode``, ``fetch-place-dm``, ``fetch-legalize-convert``,
    ``fetch-split-scaling``, ``fetch-to-seq``), which work per kernel and
    print nothing.  xDSL's passes may print (``eqsat-serialize-egraph``) or
    work across functions, so a pipeline with one is always compiled."""
    from fetchc.frontend.context import fetchc_passes

    ours = fetchc_passes()
    return all(type(p).name in ours and isinstance(p, ours[type(p).name]()) for p in passes)


# --------------------------------------------------------------------------
# Fragments: a kernel's part of a seq.bin, names and locations as placeholders
# --------------------------------------------------------------------------


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


@dataclass
class _Kernel:
    """One kernel of the input, read from the parsed IR before any pass
    runs: its ``func.func``, key, the ops of the key's walk, and what
    stamping takes from it."""

    func: FuncOp
    key: str
    ops: list[Operation]
    name: str
    arg_names: list[str]
    _locs: list[str | None] = field(default_factory=list)
    _arg_locs: set[str] = field(default_factory=set)
    _loc_attrs: list[Attribute] = field(default_factory=list)

    def loc(self, k: int) -> str | None:
        """The MANIFEST ``loc`` of an op at the ``k``-th op's location
        (:func:`~fetchc.frontend.locations.loc_text`, as the emitter
        writes it), or None when that op has no ``file:line:col`` (the
        emitter would write the program op's path, which is no op's of the
        input)."""
        if not self._locs:
            self._read_locations()
        return self._locs[k] if 0 <= k < len(self._locs) else None

    def _read_locations(self) -> None:
        """Every op's location text, and the set of the block arguments'
        (a program located where an argument is too is not known to come
        from the op)."""
        from fetchc.frontend.locations import file_line_col, loc_text, location_of, op_location

        self._locs = [loc_text(op) if op_location(op) is not None else None for op in self.ops]
        self._loc_attrs = [op.location for op in self.ops]
        for op in self.ops:
            for region in op.regions:
                for block in region.blocks:
                    for arg in block.args:
                        if (at := location_of(arg.location)) is not None:
                            self._arg_locs.add(file_line_col(at))

    def op_at(self, loc: str) -> int | None:
        """The index of the one op whose location text is ``loc``; None when
        no op, or more than one op or block argument, is there."""
        if not self._locs:
            self._read_locations()
        if loc in self._arg_locs:
            return None
        found = [i for i, text in enumerate(self._locs) if text == loc]
        return found[0] if len(found) == 1 else None

    def remark(self, remark: _Remark) -> Diagnostic:
        """The diagnostic of a stored remark at this kernel's op ``remark.op``,
        as :func:`~fetchc.frontend.locations.op_error` makes a pass's remark
        (the op's first file position, and its location attribute for the
        ``called from`` / ``fused with`` notes rendering adds).  Raises
        ``LookupError`` when that op has no file position."""
        from fetchc.diagnostics import Diagnostic
        from fetchc.frontend.locations import location_of

        if self.loc(remark.op) is None:
            raise LookupError(remark.op)
        attr = self._loc_attrs[remark.op]
        return Diagnostic("remark", remark.message, location_of(attr), location=attr)

    def remark_of(self, d: Diagnostic) -> _Remark | None:
        """``d`` as a remark to store: None unless it is a remark without
        notes at the file position of exactly one op of the kernel (and no
        block argument), with that op's location, whose text names nothing
        the key erases (:func:`_names_something`), so that :meth:`remark`
        gives it back for this kernel and, for another kernel of the same
        key, the remark its compile makes."""
        from fetchc.frontend.locations import file_line_col

        if d.severity != "remark" or d.notes or d.loc is None or _names_something(d.message, self):
            return None
        k = self.op_at(file_line_col(d.loc))
        if k is None or self._loc_attrs[k] != d.location:
            return None
        found = _Remark(k, d.message)
        return found if self.remark(found) == d else None


def _names_something(message: str, kernel: _Kernel) -> bool:
    """Whether a remark's text may name what the key erases (so that a hit
    could not print it as this input's compile would): an SSA value or a
    symbol (``%``, ``@``), a file position (``file:line:col``), or the
    kernel's function or tensor names quoted (``'w'``, ``"w"``).  A remark
    of fetchc's passes names none (``fetch-split-scaling``'s says what the
    scales cost in reads and bytes)."""
    if "%" in message or "@" in message or re.search(r":\d+:\d+", message):
        return True
    return any(f"'{n}'" in message or f'"{n}"' in message for n in (kernel.name, *kernel.arg_names))


@dataclass(frozen=True)
class _Remark:
    """A remark a cached kernel's compile made (a pass's, ``rngd.remarks``
    of ``fetch-split-scaling``'s lockstep fallback): at the ``op``-th op of
    the key's walk, its text ``message`` (``'fetch.dequant' op ...``)."""

    op: int
    message: str


@dataclass(frozen=True)
class _Entry:
    """A cached kernel: its fragment, the module-level symbols its compiled
    form refers to, and the remarks its compile made, in order (a hit
    replays them, :meth:`_Kernel.remark`)."""

    fragment: SeqBin
    symbols: tuple[str, ...]
    remarks: tuple[_Remark, ...] = ()


def _stamp(fragment: SeqBin, kernel: _Kernel) -> SeqBin:
    """The fragment with the names and locations of ``kernel``.  Raises
    ``LookupError`` when a location index is not an op with a file
    location, ``ValueError`` for a malformed fragment."""
    from fetchc.kernel import program_name, scratch_name_sequence
    from fetchc.seqbin import SeqBin
    from fetchc.seqbin.manifest import Manifest

    programs = tuple(renamed(p, name=program_name(kernel.name, i)) for i, p in enumerate(fragment.programs))
    if fragment.manifest is None or len(fragment.manifest.kernels) != 1:
        raise ValueError("a fragment holds one kernel")
    (k,) = fragment.manifest.kernels
    scratch = scratch_name_sequence(kernel.arg_names)
    tensors = tuple(renamed(t, name=kernel.arg_names[t.arg] if t.arg is not None else next(scratch)) for t in k.tensors)
    scalars = tuple(renamed(s, name=kernel.arg_names[s.arg]) for s in k.scalars)
    entries = []
    for kp in k.programs:
        loc = kernel.loc(int(kp.loc[1:])) if re.fullmatch(r"#\d{1,9}", kp.loc) else None
        if loc is None:
            raise LookupError(kp.loc)
        entries.append(renamed(kp, loc=loc))
    stamped = renamed(k, name=kernel.name, tensors=tensors, scalars=scalars, programs=tuple(entries))
    return SeqBin(fragment.tables, programs, Manifest((stamped,)))


def _unstamp(part: SeqBin, kernel: _Kernel) -> SeqBin | None:
    """The fragment of ``part`` (one kernel's part of a compiled seq.bin),
    or None when a program's location is not the file location of exactly
    one op of the kernel (then which op it came from is not known)."""
    from fetchc.seqbin import SeqBin
    from fetchc.seqbin.manifest import Manifest

    if part.manifest is None or len(part.manifest.kernels) != 1:
        return None
    (k,) = part.manifest.kernels
    entries = []
    for kp in k.programs:
        i = kernel.op_at(kp.loc)
        if i is None:
            return None
        entries.append(renamed(kp, loc=f"#{i}"))
    programs = tuple(renamed(p, name=str(i)) for i, p in enumerate(part.programs))
    blank = renamed(
        k,
        name=_PLACEHOLDER,
        tensors=tuple(renamed(t, name=f"{_PLACEHOLDER}t{i}") for i, t in enumerate(k.tensors)),
        scalars=tuple(renamed(s, name=f"{_PLACEHOLDER}s{i}") for i, s in enumerate(k.scalars)),
        programs=tuple(entries),
    )
    return SeqBin(part.tables, programs, Manifest((blank,)))


def merge(parts: Sequence[SeqBin]) -> SeqBin:
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
        assert part.manifest is not None
        for k in part.manifest.kernels:
            kernels.append(renamed(k, programs=tuple(renamed(kp, index=kp.index + base) for kp in k.programs)))
    return SeqBin(tuple(tables), tuple(programs), Manifest(tuple(kernels)))


def _split(sb: SeqBin, names: Sequence[str]) -> list[SeqBin] | None:
    """The compiled ``sb`` cut into one part per kernel named in ``names``
    (its MANIFEST kernel, the programs that lists, the tables they use in
    order of first use), or None when the MANIFEST does not cover every
    program exactly once in kernel order."""
    from fetchc.seqbin import SeqBin
    from fetchc.seqbin.manifest import Manifest

    if sb.manifest is None or [k.name for k in sb.manifest.kernels] != list(names):
        return None
    parts, expected = [], 0
    for k in sb.manifest.kernels:
        idx = sorted(kp.index for kp in k.programs)
        if idx != list(range(expected, expected + len(idx))):
            return None
        expected += len(idx)
        tables: list[Any] = []
        index_of: dict[int, int] = {}
        progs: list[Any] = []
        for p in (sb.programs[i] for i in idx):
            if p.table is not None:
                if p.table not in index_of:
                    index_of[p.table] = len(tables)
                    tables.append(sb.tables[p.table])
                p = renamed(p, table=index_of[p.table])
            progs.append(p)
        local = renamed(k, programs=tuple(renamed(kp, index=kp.index - idx[0]) for kp in k.programs))
        parts.append(SeqBin(tuple(tables), tuple(progs), Manifest((local,))))
    return parts if expected == len(sb.programs) else None


def _symbols_referenced(func: Operation, created: set[str]) -> tuple[str, ...]:
    """The names in ``created`` (module-level symbols the compile made) that
    an op of the compiled ``func`` refers to (a ``SymbolRefAttr`` property
    or attribute, or one in an array of them), sorted."""
    from xdsl.dialects.builtin import ArrayAttr, SymbolRefAttr

    from fetchc.rewriting import walk

    found: set[str] = set()
    for op in walk(func):
        for value in (*op.properties.values(), *op.attributes.values()):
            for a in value.data if isinstance(value, ArrayAttr) else (value,):
                if isinstance(a, SymbolRefAttr) and a.root_reference.data in created:
                    found.add(a.root_reference.data)
    return tuple(sorted(found))


# --------------------------------------------------------------------------
# The cache
# --------------------------------------------------------------------------


@dataclass
class Compiled:
    """The outcome of compiling one parsed input to ``seq.bin``: every
    diagnostic the compile reports (errors stop it), the ``SeqBin`` and its
    bytes when it succeeded, and the residual module when it was compiled
    for real (None when it was answered, wholly or partly, from the cache)."""

    diagnostics: list[Diagnostic]
    seqbin: SeqBin | None = None
    data: bytes | None = None
    module: ModuleOp | None = None

    @property
    def ok(self) -> bool:
        return self.data is not None and not any(d.severity == "error" for d in self.diagnostics)


Run = Callable[["ModuleOp", bool], Compiled]
"""An uncached compile of a parsed module: ``run(module, checked)`` runs the
pipeline (``checked``: :func:`fetchc.driver.check_module` found nothing
already) and emits; its diagnostics are what the caller reports."""


class KernelCache:
    """Fragments by key: a bounded in-process LRU, backed by the cache
    directory's ``kernels/`` when ``disk`` is true, and an in-process memo
    of whole inputs.  Compiles on several threads may share one: its tables
    are changed under a lock (``hits`` and ``misses`` are counts for
    tests and benchmarks, not exact then)."""

    def __init__(self, disk: bool = False) -> None:
        self.disk = disk
        self._memory: OrderedDict[str, _Entry] = OrderedDict()
        self._inputs: OrderedDict[str, tuple[SeqBin, bytes]] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = self.misses = 0

    # -- storage -----------------------------------------------------------

    def get(self, key: str) -> _Entry | None:
        """The entry stored under ``key``, or None."""
        with self._lock:
            found = self._memory.get(key)
            if found is not None:
                self._memory.move_to_end(key)
                return found
        root = cachedir.cache_dir() if self.disk else None
        data = None if root is None else cachedir.read_entry_at(root, (_KERNELS, key[:2]), key + ".fsq", _MAGIC)
        found = None if data is None else _decode_entry(key, data)
        if found is not None:
            self._remember(key, found)
        return found

    def put(self, key: str, entry: _Entry) -> None:
        """Store ``entry`` under ``key`` (in process; on disk too when
        ``disk``)."""
        self._remember(key, entry)
        root = cachedir.cache_dir() if self.disk else None
        if root is not None:
            payload = _encode_entry(key, entry)
            if cachedir.write_entry_at(root, (_KERNELS, key[:2]), key + ".fsq", _MAGIC, payload):
                _maybe_prune(root, _KERNELS)

    def _remember(self, key: str, entry: _Entry) -> None:
        with self._lock:
            self._memory[key] = entry
            self._memory.move_to_end(key)
            while len(self._memory) > MEMORY_ENTRIES:
                self._memory.popitem(last=False)

    def memo_get(self, text: str, filename: str, pipeline: str) -> tuple[SeqBin, bytes] | None:
        """``(SeqBin, bytes)`` of a compile of exactly this text, file name,
        pipeline and environment (:data:`RESULT_ENV`) that succeeded without
        any diagnostic in this process, or None."""
        key = self._memo_key(text, filename, pipeline)
        with self._lock:
            found = self._inputs.get(key)
            if found is not None:
                self._inputs.move_to_end(key)
            return found

    def memo_put(self, text: str, filename: str, pipeline: str, result: tuple[SeqBin, bytes]) -> None:
        """Remember ``result`` for :meth:`memo_get` (only for a compile that
        reported no diagnostic)."""
        key = self._memo_key(text, filename, pipeline)
        with self._lock:
            self._inputs[key] = result
            while len(self._inputs) > MEMORY_INPUTS:
                self._inputs.popitem(last=False)

    @staticmethod
    def _memo_key(text: str, filename: str, pipeline: str) -> str:
        enc = [s.encode("utf-8", "surrogatepass") for s in (salt(), pipeline, filename, text)]
        return _digest(*enc[:3], _environment(), enc[3])

    # -- compiling ---------------------------------------------------------

    def compile_module(
        self, module: ModuleOp, pipeline: str, passes: Sequence[ModulePass], run: Run, fresh: Callable[[], ModuleOp]
    ) -> Compiled:
        """Compile the just-parsed ``module`` with ``passes`` (whose text is
        ``pipeline``), from the cache where it can: exactly what
        ``run(module, False)`` (the caller's uncached compile) gives, bytes
        and diagnostics.  ``fresh()`` parses the input again (for the rare
        input that must be compiled whole after part of it was erased).
        See the module docstring."""
        from fetchc.driver import check_module

        if not cacheable_pipeline(passes) or check_module(module):
            return run(module, False)  # checked again there: the same diagnostics
        kernels = self._kernels(module, pipeline)
        if kernels is None:
            return run(module, True)
        entries: dict[str, _Entry | None] = {k.key: self.get(k.key) for k in kernels}
        missing = [key for key, e in entries.items() if e is None]
        self.hits += len(entries) - len(missing)
        self.misses += len(missing)
        if not missing:
            return self._answer(kernels, entries) or run(fresh(), False)
        first: dict[str, _Kernel] = {}
        for k in kernels:
            first.setdefault(k.key, k)
        compile_these = [first[key] for key in missing]
        if len(compile_these) == len(kernels):  # every kernel new and distinct: compile the input as it is
            return self._compile_missing(module, compile_these, run)[0]
        for k in kernels:
            k.loc(0)  # every location read before functions are erased and the passes rewrite the rest
        keep = {id(k.func) for k in compile_these}
        for op in list(module.ops):
            if id(op) not in keep:
                op.detach()
                op.erase()
        compiled, new = self._compile_missing(module, compile_these, run)
        if new is None:
            return run(fresh(), False)
        entries.update(new)
        return self._answer(kernels, entries) or run(fresh(), False)

    def _kernels(self, module: ModuleOp, pipeline: str) -> list[_Kernel] | None:
        """Each top-level function of ``module`` read for the cache, or None
        when the module is not one it handles: attributes on the module, an
        op at the top level that is not a kernel, no kernel, something the
        key cannot write (:class:`~fetchc.irkey.Unkeyable`)."""
        from xdsl.dialects.func import FuncOp

        from fetchc.irkey import Memo, Unkeyable, kernel_key
        from fetchc.kernel import is_kernel, tensor_names

        if module.attributes or any(v is not None for v in module.properties.values()):
            return None
        out = []
        common = [s.encode("utf-8", "surrogatepass") for s in (salt(), pipeline)] + [_environment()]
        memo = Memo()
        for op in module.ops:
            if not isinstance(op, FuncOp) or not is_kernel(op):
                return None
            try:
                key, ops = kernel_key(op, memo)
            except (Unkeyable, RecursionError):
                return None
            out.append(_Kernel(op, _digest(*common, key), ops, op.sym_name.data, tensor_names(op)))
        return out or None

    def _compile_missing(
        self, module: ModuleOp, kernels: list[_Kernel], run: Run
    ) -> tuple[Compiled, dict[str, _Entry] | None]:
        """Compile ``module``, whose top level is ``kernels`` (one of each
        key), and store their entries.  Returns the compile and the new
        entries by key; None instead of the entries (and nothing stored)
        when the compile reported anything but remarks it can replay
        (:func:`_remarks_by_kernel`) or a fragment does not stamp back to
        exactly what was compiled."""
        for k in kernels:
            k.loc(0)  # read every location before the passes rewrite the ops
        compiled = run(module, True)
        if not compiled.ok or compiled.seqbin is None or compiled.module is None:
            return compiled, None
        remarks = _remarks_by_kernel(compiled.diagnostics, kernels)
        if remarks is None:
            return compiled, None
        from xdsl.dialects.builtin import StringAttr

        parts = _split(compiled.seqbin, [k.name for k in kernels])
        if parts is None:
            return compiled, None
        names = {k.name for k in kernels}
        created = {
            s.data for op in compiled.module.ops if isinstance(s := op.properties.get("sym_name"), StringAttr)
        } - names  # fmt: skip
        new: dict[str, _Entry] = {}
        for k, part, rs in zip(kernels, parts, remarks, strict=True):
            fragment = _unstamp(part, k)
            try:
                if fragment is None or _stamp(fragment, k) != part:
                    return compiled, None
            except (LookupError, ValueError):
                return compiled, None
            new[k.key] = _Entry(fragment, _symbols_referenced(k.func, created), rs)
        for key, entry in new.items():
            self.put(key, entry)
        return compiled, new

    def _answer(self, kernels: list[_Kernel], entries: dict) -> Compiled | None:
        """The input's ``seq.bin`` stamped and merged from ``entries``, with
        their remarks at this input's ops, kernel by kernel (the order
        :func:`fetchc.driver.run_pipeline` reports them in); or None when a
        kernel is named like a symbol an entry's compiled form refers to
        (the uncached compile must say what that does) or the result does
        not serialise."""
        from fetchc.seqbin import SeqBinError, write

        names = {k.name for k in kernels}
        if any(names.intersection(entries[k.key].symbols) for k in kernels):
            return None
        try:
            sb = merge([_stamp(entries[k.key].fragment, k) for k in kernels])
            remarks = [k.remark(r) for k in kernels for r in entries[k.key].remarks]
            return Compiled(remarks, sb, write(sb))
        except (SeqBinError, LookupError, ValueError):
            return None


def _remarks_by_kernel(diagnostics: Sequence[Diagnostic], kernels: list[_Kernel]) -> list[tuple[_Remark, ...]] | None:
    """The remarks among a compile's ``diagnostics``, per kernel of
    ``kernels`` (the compiled module's top level, in order), to store with
    each; None when a diagnostic is not a remark the cache can replay
    exactly (:meth:`_Kernel.remark_of`: at an op of exactly one kernel) or
    they are not in kernel order, as the driver reports them."""
    out: list[list[_Remark]] = [[] for _ in kernels]
    last = 0
    for d in diagnostics:
        found = [(i, r) for i, k in enumerate(kernels) if (r := k.remark_of(d)) is not None]
        if len(found) != 1 or found[0][0] < last:
            return None
        last, remark = found[0]
        out[last].append(remark)
    return [tuple(rs) for rs in out]


def _encode_entry(key: str, entry: _Entry) -> bytes:
    """A ``kernels/`` payload: the key, NUL, the symbols (a u32 count, each
    a u32 byte count and UTF-8), the remarks (a u32 count, each a u32 op
    index and its text as a symbol is), then the fragment's ``seq.bin``."""
    from fetchc.seqbin import write

    out = [key.encode() + b"\0", struct.pack("<I", len(entry.symbols))]
    out += [_encode_text(s) for s in entry.symbols]
    out.append(struct.pack("<I", len(entry.remarks)))
    out += [struct.pack("<I", r.op) + _encode_text(r.message) for r in entry.remarks]
    return b"".join(out) + write(entry.fragment)


def _encode_text(text: str) -> bytes:
    data = text.encode("utf-8", "surrogatepass")
    return struct.pack("<I", len(data)) + data


def _decode_entry(key: str, data: bytes) -> _Entry | None:
    """The entry of a ``kernels/`` payload (:func:`_encode_entry`), or None
    when it is another key's, malformed, or a ``seq.bin`` the validating
    reader refuses."""
    from fetchc.seqbin import SeqBinError, read

    prefix = key.encode() + b"\0"
    if not data.startswith(prefix):
        return None  # an entry of another key under this name
    try:
        symbols, pos = _decode_list(data, len(prefix), indexed=False)
        remarks, pos = _decode_list(data, pos, indexed=True)
        fragment = read(data[pos:])
    except (ValueError, struct.error, SeqBinError):  # UnicodeDecodeError is a ValueError
        return None  # written by another fetchc, or damaged: a miss
    if fragment.manifest is None or len(fragment.manifest.kernels) != 1:
        return None
    return _Entry(fragment, tuple(t for _, t in symbols), tuple(_Remark(k, t) for k, t in remarks))


def _decode_list(data: bytes, pos: int, indexed: bool) -> tuple[list[tuple[int, str]], int]:
    """A count, then that many texts (each after a u32 index when
    ``indexed``) from ``pos``: ``([(index or 0, text), ...], end)``.  Raises
    ``ValueError`` (or ``struct.error``) when the bytes do not hold them."""
    (n,) = struct.unpack_from("<I", data, pos)
    pos += 4
    if n > (len(data) - pos) // 4:
        raise ValueError("more items than the entry has bytes for")
    out = []
    for _ in range(n):
        k = 0
        if indexed:
            (k,) = struct.unpack_from("<I", data, pos)
            pos += 4
        (size,) = struct.unpack_from("<I", data, pos)
        pos += 4
        if pos + size > len(data):
            raise ValueError("a text runs past the entry")
        out.append((k, data[pos : pos + size].decode("utf-8", "surrogatepass")))
        pos += size
    return out, pos


# --------------------------------------------------------------------------
# Whole inputs on disk: the command line's exact repeat
# --------------------------------------------------------------------------


def _whole_key(data: bytes, filename: str, pipeline: str | None) -> str:
    """The key of a whole input: :func:`salt`, the pipeline (``None``: the
    default, which no ``-p`` text can spell), the file name, the values of
    :data:`RESULT_ENV`, the bytes."""
    spelled = b"D" if pipeline is None else b"P" + pipeline.encode("utf-8", "surrogateescape")
    return _digest(salt().encode(), spelled, filename.encode("utf-8", "surrogateescape"), _environment(), data)


def whole_get(data: bytes, filename: str, pipeline: str | None) -> bytes | None:
    """The ``seq.bin`` bytes a compile of exactly these input bytes, file
    name, pipeline (None: the default) and environment gave before, from
    disk, if the validating reader (:func:`fetchc.seqbin.read`) accepts
    them; None if there are none or it refuses them.  Imports nothing of
    xDSL."""
    root = cachedir.cache_dir()
    if root is None:
        return None
    key = _whole_key(data, filename, pipeline)
    found = cachedir.read_entry_at(root, (_INPUTS, key[:2]), key + ".bin", _WHOLE_MAGIC)
    prefix = key.encode() + b"\0"
    if found is None or not found.startswith(prefix):
        return None
    seq_bin = found[len(prefix) :]
    from fetchc.seqbin import SeqBinError, read  # the validating reader; imports nothing of xDSL

    try:
        read(seq_bin)
    except SeqBinError:
        return None  # damaged, or written by another fetchc: a miss
    return seq_bin


def whole_put(data: bytes, filename: str, pipeline: str | None, seq_bin: bytes) -> None:
    """Remember ``seq_bin`` for :func:`whole_get`: only for a compile with
    a :func:`cacheable_pipeline` that reported no diagnostic (the caller's
    duty: the key cannot tell)."""
    root = cachedir.cache_dir()
    if root is None:
        return
    key = _whole_key(data, filename, pipeline)
    if cachedir.write_entry_at(root, (_INPUTS, key[:2]), key + ".bin", _WHOLE_MAGIC, key.encode() + b"\0" + seq_bin):
        _maybe_prune(root, _INPUTS)


def _maybe_prune(root: str, kind: str) -> None:
    """After one write in 64: :func:`prune` ``kind``."""
    if os.urandom(1)[0] < 4:
        prune(root, kind)


def prune(root: str, kind: str) -> None:
    """Remove the oldest entries of ``kind`` (``kernels`` or ``inputs``)
    under the cache directory ``root`` until at most :data:`DISK_BYTES`
    remain: only files the cache wrote (:func:`fetchc.cachedir.prune`: their
    name, owner, mode, magic, in directories the cache made)."""
    cachedir.prune(root, kind, _ENTRY_NAME[kind], _MAGIC_PREFIX[kind], DISK_BYTES)

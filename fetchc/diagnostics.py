"""fetchc's error model: diagnostics and the exceptions that carry them.

The bottom of fetchc: every layer (target rules, dialect verifiers, passes,
the seq.bin reader, the golden model, the command line) raises or returns
these.  This module imports nothing of fetchc but :mod:`fetchc.escape`, and of xDSL only the
``VerifyException`` and ``PassFailedException`` base classes.

* :class:`Diagnostic` is one ``error:`` / ``warning:`` / ``remark:`` /
  ``note:`` message with an optional ``(filename, line, column)`` location
  (:data:`Loc`, 1-based; the column counts characters) and attached notes.
  :class:`DiagnosticError` is the exception that carries diagnostics out of
  the parser, the verifier, the passes and the API.
* :class:`OpError` is what op verifiers raise: an error at the op being
  verified plus ``(op, message)`` notes.  :class:`PassError` is what passes
  raise: the same, at any op of the module.
* :func:`op_path` names an op that has no file location (an op built in
  memory): ``func @k, op 3 'fetch.cast'``.

Making a diagnostic from an op and its MLIR location
(:func:`fetchc.frontend.locations.op_error`) and printing diagnostics like
``mlir-opt`` (:func:`fetchc.frontend.render.render_all`) live above this
module.  The documented API names ``render``, ``render_all``,
``SourceManager``, ``op_error``, ``location_of``, ``verify_module`` and
``check_expected`` can still be imported from here: they are loaded on first
use.

Op paths.  The path starts at the nearest enclosing symbol op (``func @k``;
another symbol op as ``<op name> @sym``), else at ``module`` (a
``builtin.module`` root), the root op's quoted name, or ``block`` (a block in
no region), then gives, for each nesting level below it, ``op N``: the
0-based index of the op in its block (``list(block.ops)[N]``), preceded by
``region R, `` when the parent op has more than one region and ``block B, ``
when the region has more than one block; it ends with the op's quoted name.
An op nested in a region of op 2 of ``@k`` is ``func @k, op 2, op 0
'fetch.cast'``; a function itself is ``func @k``; an op in no block at all is
``detached op 'fetch.cast'``.  A location without a file position that is not
``UnknownLoc`` (a bare ``NameLoc``) is appended: ``func @k, op 3
'fetch.cast' at loc("w")``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from xdsl.utils.exceptions import PassFailedException, VerifyException

from fetchc.escape import printable

if TYPE_CHECKING:
    from xdsl.ir import Attribute, Block, Operation, Region

__all__ = [
    "SEVERITIES",
    "Diagnostic",
    "DiagnosticError",
    "DiagnosticWarning",
    "Loc",
    "OpError",
    "PassError",
    "PathCache",
    "display_name",
    "flatten",
    "header",
    "op_path",
    "printable",
]

Loc = tuple[str, int, int]
"""``(filename, line, column)``, 1-based."""

SEVERITIES = ("error", "warning", "remark", "note")


class OpError(VerifyException):
    """A verifier error at the op being verified, with optional notes.

    ``notes`` is a list of ``(op, message)``: each becomes a ``note:`` at that
    op's location, in order, after the error.  Raised from ``verify_`` of the
    fetch/rngd/fetch_seq ops and from passes (``fetch-legalize-convert``...).
    """

    def __init__(self, message: str, notes: list[tuple[Operation, str]] | None = None):
        super().__init__(message)
        self.message = message
        self.notes = list(notes or [])


class PassError(OpError, PassFailedException):
    """An error a pass raises at ``op`` (any op of the module, not only the
    one being rewritten), with optional ``(op, message)`` notes.  The driver
    renders it like a verifier error: ``'fetch.convert' op <message>`` at
    ``op``'s location.  It is also xDSL's ``PassFailedException``: under
    ``xdsl-opt`` (:meth:`fetchc.rewriting.FetchcPass.apply`) it is reported
    as xDSL reports the failures of its own passes."""

    def __init__(self, op: Operation, message: str, notes: list[tuple[Operation, str]] | None = None):
        super().__init__(message, notes)
        self.op = op


@dataclass
class Diagnostic:
    """One diagnostic: ``severity`` is ``"error"``, ``"warning"``, ``"remark"``
    or ``"note"``; ``loc`` is ``(filename, line, column)`` (1-based) or ``None``
    when unknown; ``notes`` are printed after it, in order.

    ``op`` is the op the diagnostic is about (``None`` for parse errors and
    other diagnostics not about one op); ``location`` is the op's MLIR
    location attribute as it was when the diagnostic was made (``loc`` is
    its first file location, see :func:`location_of`).  Both are set by
    :func:`op_error`, for the diagnostic and each of its notes; rendering
    uses them for the op path of an unlocated op and for the ``called
    from`` / ``fused with this location`` context notes.  They take no part
    in ``==`` or ``repr``."""

    severity: str
    message: str
    loc: Loc | None = None
    notes: list[Diagnostic] = field(default_factory=lambda: [])
    op: Operation | None = field(default=None, compare=False, repr=False)
    location: Attribute | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.severity not in SEVERITIES:
            raise ValueError(f"unknown diagnostic severity {self.severity!r}")

    @staticmethod
    def error(message: str, loc: Loc | None = None, notes: Iterable[Diagnostic] = ()) -> Diagnostic:
        """Return an ``error`` diagnostic (convenience constructor)."""
        return Diagnostic("error", message, loc, list(notes))

    @staticmethod
    def note(message: str, loc: Loc | None = None) -> Diagnostic:
        """Return a ``note`` diagnostic (convenience constructor)."""
        return Diagnostic("note", message, loc, [])


class DiagnosticError(Exception):
    """Raised when an input cannot be processed; ``.diagnostics`` holds the
    diagnostics (at least one, normally an ``error``) that explain why.

    ``str()`` of the exception is the messages without source lines, so an
    uncaught one is still readable; the CLI renders them with :func:`render`.
    """

    def __init__(self, diagnostics: Diagnostic | Sequence[Diagnostic]):
        if isinstance(diagnostics, Diagnostic):
            diagnostics = [diagnostics]
        self.diagnostics: list[Diagnostic] = list(diagnostics)
        paths = PathCache()
        super().__init__("\n".join(header(d, paths) for d in flatten(self.diagnostics)))


class DiagnosticWarning(UserWarning):
    """A warning about an input that is still processed (``warnings.warn``
    category of ``fetchc.run``: an argument no program reads, a value fetchc
    can only approximate, a committed tensor it leaves out because it depends
    on ``rngd.contract_outer``); ``.diagnostic`` holds it as a ``warning``
    diagnostic, located where it can be, which the command line renders
    like its other diagnostics.  ``str()`` is its header line.  Made from
    that text alone (as tools that copy a warning between processes do,
    ``pytest-xdist`` among them), it holds an unlocated ``warning`` with
    that message."""

    def __init__(self, diagnostic: Diagnostic | str):
        if isinstance(diagnostic, str):  # the text of str(), kept as it is
            self.diagnostic = Diagnostic("warning", diagnostic)
            super().__init__(diagnostic)
            return
        self.diagnostic = diagnostic
        super().__init__("\n".join(header(d) for d in flatten([diagnostic])))


def flatten(diagnostics: Iterable[Diagnostic]) -> Iterator[Diagnostic]:
    """Yield every diagnostic followed by its notes (recursively), in the
    order they are printed.  Raises nothing."""
    for diag in diagnostics:
        yield diag
        yield from flatten(diag.notes)


class PathCache:
    """Index of each op in its block, computed once per block, so that the
    paths of many ops of one block cost linear time."""

    def __init__(self) -> None:
        self._index: dict[int, dict[int, int]] = {}
        self._blocks: dict[int, dict[int, int]] = {}

    def op_index(self, block: Block, op: Operation) -> int:
        table = self._index.get(id(block))
        if table is None:
            table = {id(o): i for i, o in enumerate(block.ops)}
            self._index[id(block)] = table
        return table.get(id(op), -1)

    def block_index(self, region: Region, block: Block) -> int:
        table = self._blocks.get(id(region))
        if table is None:
            table = {id(b): i for i, b in enumerate(region.blocks)}
            self._blocks[id(region)] = table
        return table.get(id(block), -1)


def _symbol_of(op: Operation) -> str | None:
    try:
        sym = op.get_attr_or_prop("sym_name")
    except Exception:  # noqa: BLE001 - an op without properties has no symbol
        return None
    data = getattr(sym, "data", None)
    return data if isinstance(data, str) else None


def _anchor_text(op: Operation, sym: str) -> str:
    return f"func @{sym}" if op.name == "func.func" else f"{op.name} @{sym}"


def op_path(op: Operation, cache: PathCache | None = None) -> str:
    """Return the op path of ``op`` (format in the module docstring), e.g.
    ``func @k, op 3 'fetch.cast'``.  ``cache`` (internal) shares block
    indices between calls.  Raises nothing."""
    cache = cache or PathCache()
    steps: list[str] = []
    current = op
    anchor: str | None = None
    while True:
        sym = _symbol_of(current)
        if sym is not None:
            anchor = _anchor_text(current, sym)
            break
        block = current.parent_block()
        if block is None:
            if current is op:
                return f"detached op '{op.name}'"
            anchor = "module" if current.name == "builtin.module" else f"'{current.name}'"
            break
        region = block.parent_region()
        parent = region.parent_op() if region is not None else None
        step = f"op {cache.op_index(block, current)}"
        if region is not None and len(region.blocks) > 1:
            step = f"block {cache.block_index(region, block)}, {step}"
        if parent is not None and len(parent.regions) > 1:
            index = next(i for i, r in enumerate(parent.regions) if r is region)
            step = f"region {index}, {step}"
        steps.append(step)
        if parent is None:
            anchor = "block"
            break
        current = parent
    if not steps:
        return anchor
    return ", ".join([anchor, *reversed(steps)]) + f" '{op.name}'"


def display_name(filename: str) -> str:
    """How a file name is shown: ``-`` is ``<stdin>``."""
    return "<stdin>" if filename == "-" else filename


def header(diag: Diagnostic, paths: PathCache | None = None) -> str:
    """``file:line:col: severity: message`` (LLVM ``SMDiagnostic`` style);
    an unlocated diagnostic about an op starts with the op path instead.
    The line is :func:`fetchc.escape.printable`: a file, symbol or tensor
    name taken from the input cannot drive the terminal (ir.md §5)."""
    prefix = ""
    if diag.loc is not None:
        filename, line, col = diag.loc
        prefix = display_name(filename)
        if line > 0:
            prefix += f":{line}"
            if col > 0:
                prefix += f":{col}"
        prefix += ": "
    elif diag.op is not None:
        prefix = op_path(diag.op, paths)
        if diag.location is not None and getattr(diag.location, "name", None) != "unknown_loc":  # not UnknownLoc
            prefix += f" at {diag.location}"
        prefix += ": "
    return printable(f"{prefix}{diag.severity}: {diag.message}")


_ABOVE = {
    "render": "fetchc.frontend.render",
    "render_all": "fetchc.frontend.render",
    "SourceManager": "fetchc.frontend.render",
    "op_error": "fetchc.frontend.locations",
    "op_location": "fetchc.frontend.locations",
    "location_of": "fetchc.frontend.locations",
    "location_notes": "fetchc.frontend.locations",
    "LineIndex": "fetchc.frontend.locations",
    "verify_module": "fetchc.frontend.verify",
    "check_expected": "fetchc.frontend.verify_diagnostics",
}


def __getattr__(name: str) -> Any:
    """The documented API names that live above this module, loaded on
    first use (importing the error types loads nothing else)."""
    module = _ABOVE.get(name)
    if module is None:
        raise AttributeError(f"module 'fetchc.diagnostics' has no attribute '{name}'")
    import importlib

    return getattr(importlib.import_module(module), name)

"""Every patch fetchc makes to xDSL internals, in one place.

fetchc pins xDSL (``pyproject.toml``); importing this module checks that the
installed xDSL is the version the patches were written against
(:data:`XDSL_VERSION`, else ``ImportError``) and applies them.  Each patch
names what to offer upstream:

* **Lexer: linear string literals.**  xDSL 0.75's string-literal regex nests
  quantifiers (``(?:[^"\\...]+|...)*``), so an unterminated string or a bad
  escape late on a long line backtracks exponentially.  The same language
  without the inner ``+`` matches in linear time.  Upstream: the one-character
  regex fix in ``MLIRLexer._unescaped_characters_regex``.
* **Lexer: a ``//`` comment ends at ``\\r`` too.**  xDSL 0.75's whitespace
  regex runs a comment up to ``\\n`` only, so in a file whose lines end in a
  lone ``\\r`` the first comment swallows the rest of the file (the module
  silently comes out empty).  MLIR's lexer ends a comment at ``\\n`` or
  ``\\r``.  Upstream: ``//[^\\n\\r]*`` in ``MLIRLexer._whitespace_regex``.
* **Parser: a block label defined twice after a forward reference**
  (:class:`PatchedParser`).  xDSL 0.75's ``Parser._parse_block`` records no
  definition span for a block that was referenced before it was defined
  (``cf.br ^bb1`` then ``^bb1:``), so a second ``^bb1:`` pops the forward
  reference again and fails with ``KeyError``.  The override records the
  span, and the second label gets xDSL's own ``re-declaration of block``
  error.  Upstream: ``self.blocks[name] = (block, name_token.span)`` after
  the ``pop``.
* :func:`verify_op_alone`: ``op.verify(verify_nested_ops=False)`` without
  xDSL's ``emit_error`` decoration, which prints the whole enclosing IR into
  every verifier exception (quadratic when many ops fail).  Upstream: a
  ``verify`` flag that skips the IR dump.  For fetchc's own ops it also
  skips xDSL's generic IRDL walk once a specialised predicate
  (:mod:`fetchc.frontend.structural`) has accepted the op, which needs the
  op definition and custom verifier that ``irdl_op_definition`` keeps in a
  closure (:func:`irdl_parts`).  Upstream: keep them on the class.
* **Name hints: never the empty name.**  xDSL 0.75 keeps an SSA value's or
  block's name without a trailing ``_<digits>`` (``%a_1`` is ``a``), so
  ``%_1``, legal MLIR, leaves the name ``""``, which the same setter refuses
  when a rewrite copies it to another value (every pass that replaces an op:
  ``ValueError: Invalid OpResult name format``).  Patched in
  ``IRWithName.extract_valid_name``: a name that is nothing but its suffix
  is no name (``None``), as the printer already shows it (``%0``).
  Upstream: ``return name[: match.start()] or None``.
* :func:`release_erased`: an erased op's ``results`` are dropped, so that
  the op and its results (a reference cycle) are freed without the cyclic
  collector, which fetchc pauses during a compile.  Upstream:
  ``Operation.erase`` could drop them.

fetchc's located parser (:mod:`fetchc.frontend.located_parser`) is a feature,
not a patch: it extends :class:`PatchedParser` through xDSL's parser methods
and lives in its own module.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any, NoReturn

from xdsl.ir import Block, BlockArgument, ErasedSSAValue, IRWithName, Operation, OpResult, SSAValues
from xdsl.parser import Parser
from xdsl.traits import IsTerminator, NoTerminator
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.mlir_lexer import MLIRLexer, MLIRTokenKind

from fetchc.frontend.structural import structural_check

__all__ = [
    "XDSL_VERSION",
    "PatchedParser",
    "release_erased",
    "verify_op_alone",
]

XDSL_VERSION = "0.75.0"
"""The xDSL release these patches were written against (pyproject pins it)."""


def _installed_xdsl_version() -> str | None:
    """xDSL's version from its ``dist-info`` directory name (``importlib.metadata``
    would cost 20 ms of imports at every start), or ``None`` for a source tree."""
    import os

    import xdsl

    site = os.path.dirname(os.path.dirname(os.path.abspath(xdsl.__file__)))
    try:
        names = os.listdir(site)
    except OSError:  # pragma: no cover
        return None
    found = [n[len("xdsl-") : -len(".dist-info")] for n in names if n.startswith("xdsl-") and n.endswith(".dist-info")]
    return found[0] if len(found) == 1 else None


def _check_version() -> None:
    found = _installed_xdsl_version()
    if found is not None and found != XDSL_VERSION:
        raise ImportError(
            f"fetchc's xDSL patches (fetchc/frontend/xdsl_compat.py) are written for xDSL {XDSL_VERSION}, "
            f"but xDSL {found} is installed; install fetchc's pinned version (pip install xdsl=={XDSL_VERSION})"
        )


_check_version()

# xDSL 0.75's string-literal regex nests quantifiers (`(?:[^"\\...]+|...)*`),
# so an unterminated string or a bad escape late on a long line backtracks
# exponentially: the lexer hangs.  The same language without the inner `+`
# matches in linear time.  Patched on the class, because xDSL lexes the first
# token while constructing the parser.
_LINEAR_STRING_RE = re.compile(r'"(?:[^"\\\n\v\f]|\\(?:["nt\\]|[0-9A-Fa-f]{2}))*"')
if getattr(MLIRLexer, "_unescaped_characters_regex", None) is not None and (
    MLIRLexer._unescaped_characters_regex.pattern == r'"(?:[^"\\\n\v\f]+|\\(?:["nt\\]|[0-9A-Fa-f]{2}))*"'
):
    MLIRLexer._unescaped_characters_regex = _LINEAR_STRING_RE

# xDSL 0.75 ends a `//` comment at `\n` only; MLIR's lexer at `\n` or `\r`.
# With lone-`\r` line endings the first comment would swallow the file.
_XDSL_WHITESPACE_PATTERN = r"((//[^\n]*(\n)?)|(\s+))*"
_MLIR_WHITESPACE_RE = re.compile(r"((//[^\n\r]*)|(\s+))*", re.ASCII)
if getattr(MLIRLexer, "_whitespace_regex", None) is not None and (
    MLIRLexer._whitespace_regex.pattern == _XDSL_WHITESPACE_PATTERN
):
    MLIRLexer._whitespace_regex = _MLIR_WHITESPACE_RE


# xDSL 0.75 strips a trailing `_<digits>` from a name hint, so `%_1` (legal
# MLIR) leaves "", which its own setter then refuses when a rewrite copies the
# hint to another value.  A name that is only a suffix is no name.
_xdsl_extract_valid_name = IRWithName.__dict__["extract_valid_name"].__func__


def _extract_valid_name(cls: type[IRWithName], name: str | None) -> str | None:
    """xDSL's ``extract_valid_name``, but ``None`` where it would keep ``""``."""
    return _xdsl_extract_valid_name(cls, name) or None


if getattr(_xdsl_extract_valid_name, "__qualname__", "") == "IRWithName.extract_valid_name":
    IRWithName.extract_valid_name = classmethod(_extract_valid_name)  # type: ignore[assignment]  # overloads of the original


class PatchedParser(Parser):
    """xDSL's :class:`~xdsl.parser.Parser` with the block re-declaration fix
    (see the module docstring)."""

    def _parse_block(self) -> Block:
        token = self._current_token
        name = token.text[1:] if token.kind == MLIRTokenKind.CARET_IDENT else None
        block = super()._parse_block()
        if name is not None:  # a forward-referenced block's definition span
            entry = self.blocks.get(name)
            if entry is not None and entry[0] is block and entry[1] is None:
                self.blocks[name] = (block, token.span)
        return block


def _raise_underlying(message: str, underlying_error: Exception) -> NoReturn:
    raise underlying_error


def irdl_parts(cls: type) -> tuple[Any, Any] | None:
    """``(op_def, custom_verify)`` of an op class decorated with xDSL 0.75's
    ``irdl_op_definition``, which hides both in the closure of the
    ``verify_`` it installs; ``None`` for any other class."""
    wrapper = cls.__dict__.get("verify_")
    code = getattr(wrapper, "__code__", None)
    if code is None or wrapper is None or wrapper.__closure__ is None or "op_def" not in code.co_freevars:
        return None
    cells = dict(zip(code.co_freevars, (c.cell_contents for c in wrapper.__closure__), strict=True))
    return cells["op_def"], cells.get("custom_verify")


class _Plan:
    """How to verify one of fetchc's op classes without xDSL's generic IRDL
    walk: the structural predicate, the traits, the custom verifier."""

    def __init__(self, check: Callable[[Operation], bool], traits: tuple[Any, ...], custom: Any):
        self.check, self.traits, self.custom = check, traits, custom


def _plan(cls: type) -> _Plan | None:
    """The :class:`_Plan` of ``cls`` (memoised per class), or ``None`` (run
    xDSL's ``verify``) for ops outside fetchc's dialects and classes the
    predicate of :mod:`fetchc.frontend.structural` does not cover."""
    if cls in _PLANS:
        return _PLANS[cls]
    plan = None
    parts = irdl_parts(cls) if cls.__module__.startswith("fetchc.dialects.") else None
    if parts is not None:
        op_def, custom = parts
        check = structural_check(op_def, cls)
        if check is not None:
            plan = _Plan(check, tuple(op_def.traits), custom)
    _PLANS[cls] = plan
    return plan


_PLANS: dict[type, _Plan | None] = {}


_LIVE_VALUES = (OpResult, BlockArgument)


def _verify_placement(op: Operation) -> None:
    """What xDSL 0.75's ``Operation.verify`` checks of an op without
    successors or regions before its ``verify_``, with its messages: no
    erased operand, and an op that ends a block of a region is a terminator
    (unless the region's op has ``NoTerminator``)."""
    for operand in op.operands:
        # OpResult and BlockArgument are not ErasedSSAValues: no ABC check for them
        if type(operand) not in _LIVE_VALUES and isinstance(operand, ErasedSSAValue):
            raise ValueError("Erased SSA value is used by the operation")
    block = op.parent
    region = None if block is None else block.parent
    if block is None or region is None or block.last_op is not op:
        return
    if len(region.blocks) == 1:
        parent_op = region.parent
        if parent_op is not None and not parent_op.has_trait(NoTerminator) and not op.has_trait(IsTerminator):
            raise VerifyException(
                f"Operation {op.name} terminates block in single-block region but is not a terminator"
            )
    elif len(region.blocks) > 1 and not op.has_trait(IsTerminator):
        raise VerifyException(f"Operation {op.name} terminates block in multi-block region but is not a terminator")


def release_erased(ops: Iterable[Operation]) -> None:
    """Let reference counting free the erased ops among ``ops`` (those no
    longer in a block) at once.  An erased op and its results point at each
    other (``OpResult.op``), so while the cyclic collector is paused
    (:func:`fetchc.process.gc_paused`) they would wait for a collection;
    dropping the erased op's ``results`` breaks the cycle.  Nothing reads an
    erased op's results.  Upstream: ``Operation.erase`` could drop them."""
    for op in ops:
        if op.parent is None and op.results:
            op.results = SSAValues()


def verify_op_alone(op: Operation) -> None:
    """``op.verify(verify_nested_ops=False)`` without xDSL's error decoration.

    On a verifier failure xDSL's ``Operation.emit_error`` prints the whole
    enclosing IR into the exception's ``__notes__`` before re-raising it;
    with many failing ops that is quadratic (seconds on a few thousand ops)
    and fetchc ignores those notes anyway.  So, for the duration of the call,
    the op's ``emit_error`` is shadowed by an instance attribute that just
    re-raises the original exception (ops without ``__dict__`` keep xDSL's).
    fetchc's own ops (no successors, no regions) whose IRDL structure the
    specialised predicate of :mod:`fetchc.frontend.structural` accepts are
    verified directly: what ``Operation.verify`` checks first
    (:func:`_verify_placement`), the op's traits, its custom verifier; xDSL's
    generic ``OpDef.verify`` would re-check what the predicate checked.
    Raises what the verifier raises."""
    plan = _PLANS[type(op)] if type(op) in _PLANS else _plan(type(op))
    if plan is not None and not op.successors and not op.regions and plan.check(op):
        _verify_placement(op)
        for trait in plan.traits:
            trait.verify(op)
        if plan.custom is not None:
            plan.custom(op)
        return
    try:
        op.emit_error = _raise_underlying  # type: ignore[method-assign]  # on this op only, undone below
        shadowed = True
    except (AttributeError, TypeError):
        shadowed = False
    try:
        op.verify(verify_nested_ops=False)
    finally:
        if shadowed:
            try:
                del op.emit_error
            except AttributeError:
                pass

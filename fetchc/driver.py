"""The compiler driver: parse → verify → passes (verifying after each) → emit.

:func:`run_pipeline` is the one place that runs passes and turns every kind
of failure (parse error, verifier error, :class:`PassError`, a pass crash)
into :class:`~fetchc.diagnostics.Diagnostic` objects.  The command line
(:mod:`fetchc.cli`) and the embedding API (:mod:`fetchc.api`) both call it.

Spec: ir.md §4 (default pipeline) and §5 (command line).
"""

from __future__ import annotations

import gc
import io
import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass, PassPipeline
from xdsl.printer import Printer
from xdsl.utils.exceptions import ArgSpecParseError, DiagnosticException

from fetchc.diagnostics import Diagnostic, DiagnosticError, PassError
from fetchc.frontend.context import all_passes, closest_name, fetchc_passes
from fetchc.frontend.locations import location_of, op_error, op_location
from fetchc.frontend.verify import verify_module
from fetchc.frontend.xdsl_compat import release_erased
from fetchc.process import memory_failure
from fetchc.rewriting import ChangeTracker, FetchcPass

DEFAULT_PIPELINE: tuple[str, ...] = (
    "fetch-route-sub-decode",
    "fetch-place-dm",
    "fetch-legalize-convert",
    "fetch-split-scaling",
    "fetch-to-seq",
)
"""ir.md §4: what ``fetchc in.mlir -o seq.bin`` runs after parsing.
``fetch-route-sub-decode`` comes before ``fetch-place-dm`` so that the
placement sees the scratch buffers it creates (and places them after the
arguments)."""

MLIR_PIPELINE: tuple[str, ...] = DEFAULT_PIPELINE[:-1]
"""What ``--emit=mlir`` runs without ``-p``: the target-level IR (legal
adapter stages plus the downstream Vector Engine ops), before register
blocks."""


_PARSED_PIPELINES: dict[str, tuple[ModulePass, ...]] = {}


def _is_frozen(p: ModulePass) -> bool:
    params = getattr(type(p), "__dataclass_params__", None)
    return bool(params and params.frozen)


def parse_pipeline(spec: str) -> list[ModulePass]:
    """Parse a pass pipeline against fetchc's and xDSL's passes, in either
    spelling (ir.md §5): ``xdsl-opt``'s ``a,b{opt=v}`` or ``mlir-opt``'s
    ``builtin.module(a,b{opt=v})`` (:func:`xdsl_pipeline_text`).  Raises
    :class:`DiagnosticError` for unknown passes or bad syntax.  A pipeline of
    frozen (stateless) passes is parsed once per process: a compile of many
    small kernels pays for it once."""
    cached = _PARSED_PIPELINES.get(spec)
    if cached is not None:
        return list(cached)
    text, columns = xdsl_pipeline(spec)
    if not text.strip():
        return []
    try:
        passes = tuple(PassPipeline.parse_spec(all_passes(), text).passes)
        if all(_is_frozen(p) for p in passes):
            _PARSED_PIPELINES[spec] = passes
        return list(passes)
    except (ValueError, ArgSpecParseError) as e:  # unknown pass / bad syntax or options
        text = _option_text(_one_line(str(e), columns) or type(e).__name__)
        if "Unrecognized passes" in text:
            known = ", ".join(sorted(k for k in all_passes() if k.startswith("fetch")))
            text += f" (fetchc's passes: {known}; xDSL's built-in passes are available too)"
            text += _did_you_mean(text)
        raise DiagnosticError(Diagnostic.error(f"invalid pass pipeline '{spec}': {text}")) from None


_SPEC_AT = re.compile(r"pass-pipeline:(\d+):(\d+)")


def _one_line(message: str, columns: list[int]) -> str:
    """xDSL's pipeline syntax error (a header, ``pass-pipeline:L:C``, the
    pipeline, a caret line and the reason, on separate lines) as one line:
    ``column C: reason``, ``C`` mapped through ``columns`` to the user's
    text (:func:`xdsl_pipeline`); any other message with its lines joined by
    ``; ``."""
    lines = [line.strip() for line in message.strip().splitlines() if line.strip()]
    at = next((m for line in lines if (m := _SPEC_AT.fullmatch(line))), None)
    if at is not None and len(lines) >= 2:
        column = columns[min(int(at.group(2)), len(columns)) - 1]
        return f"column {column}: {lines[-1][:1].lower()}{lines[-1][1:]}"
    return "; ".join(lines)


def _did_you_mean(text: str) -> str:
    """``; did you mean 'X' for 'a'?`` for each unknown pass name in xDSL's
    ``Unrecognized passes: ['a', ...]`` with a close registered name
    (:func:`~fetchc.frontend.context.closest_name`); empty when none is."""
    m = re.search(r"Unrecognized passes: \[([^\]]*)\]", text)
    names = re.findall(r"'([^']*)'", m.group(1)) if m else []
    hints = []
    for name in names:
        close = closest_name(name, all_passes())
        if close:
            hints.append(f"did you mean '{close}' for '{name}'?")
    return f"; {'; '.join(hints)}" if hints else ""


_ANCHOR = re.compile(r"\s*([A-Za-z_][\w.$-]*)\s*\(")
_PASS_NAME = re.compile(r"[A-Za-z_][\w.$-]*")


def xdsl_pipeline_text(spec: str) -> str:
    """A pipeline in ``xdsl-opt``'s spelling (:func:`xdsl_pipeline`, without
    the columns)."""
    return xdsl_pipeline(spec)[0]


def xdsl_pipeline(spec: str) -> tuple[str, list[int]]:
    """A pipeline in ``xdsl-opt``'s spelling, and for each of its characters
    (and one past the end) the 1-based column in ``spec`` it comes from, so
    that xDSL's syntax errors point into the user's text.

    ``mlir-opt``'s ``builtin.module(a, b{ opt=v })`` is read as mlir-opt 19
    reads it: passes separated by ``,``, whitespace around a name or an
    option list ignored, an option list's ``{...}`` kept with its options
    separated by single spaces (``a,b{opt=v}``); ``builtin.module()`` is no
    pass, and an empty element (``builtin.module(a,)``, ``(a,,b)``,
    ``( )``) is an error.  Anything not starting with ``NAME(`` is
    ``xdsl-opt``'s spelling, returned unchanged.  fetchc's input is one
    ``builtin.module`` and every pass runs on the whole module, so a pipeline
    anchored on another op, or a nested one (``builtin.module(func.func(cse))``),
    is an error.  Raises :class:`DiagnosticError` (``invalid pass pipeline
    '...': ...``, with a column in ``spec`` where one applies) for those, for
    a missing ``)`` or ``}`` and for text after them."""
    m = _ANCHOR.match(spec)
    if m is None:
        return spec, list(range(1, len(spec) + 2))

    def bad(why: str, at: int | None = None) -> DiagnosticError:
        where = f"column {at + 1}: " if at is not None else ""
        return DiagnosticError(Diagnostic.error(f"invalid pass pipeline '{spec}': {where}{why}"))

    if m.group(1) != "builtin.module":
        raise bad(
            f"the pipeline is anchored on '{m.group(1)}', but fetchc compiles a builtin.module and its "
            "passes run on the whole module: write builtin.module(PASS,PASS{option=value})"
        )
    elements, i = _pipeline_elements(spec, m.end(), bad)
    if i >= len(spec):
        raise bad("missing ')' at the end of builtin.module(...)")
    if spec[i + 1 :].strip():
        raise bad(f"unexpected text after builtin.module(...): '{spec[i + 1 :].strip()}'", i + 1)
    if i == m.end():
        return "", [1]  # builtin.module(): no pass
    text, cols = _pipeline_text(spec, elements, bad)
    cols.append(i + 1)  # one past the end: the ')'
    return "".join(text), cols


def _pipeline_elements(spec: str, begin: int, bad) -> tuple[list[tuple[int, int]], int]:
    """The elements of ``builtin.module(...)`` whose first character is at
    ``begin``: (start, end) of each, split at the commas outside braces and
    quotes, and the index of the closing ``)`` (``len(spec)`` when there is
    none).  ``bad(why, at)`` makes the error of a nested pipeline."""
    # the elements: (start, end) of each, split at the commas outside braces and quotes
    elements: list[tuple[int, int]] = []
    depth, quote, start, i = 0, False, begin, begin
    while i < len(spec):
        c = spec[i]
        if quote:
            quote = c != '"' or spec[i - 1] == "\\"
        elif c == '"':
            quote = True
        elif c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
        elif depth == 0 and c in ",)":
            elements.append((start, i))
            start = i + 1
            if c == ")":
                break
        elif depth == 0 and c == "(":
            inner = spec[start:i].strip()
            raise bad(
                f"'{inner}(...)' nests a pipeline, but fetchc's passes run on the whole module: list the "
                "passes directly inside builtin.module(...)",
                i,
            )
        i += 1
    return elements, i


def _pipeline_text(spec: str, elements: list[tuple[int, int]], bad) -> tuple[list[str], list[int]]:
    """The ``xdsl-opt`` spelling of the ``elements`` of a ``builtin.module(...)``
    pipeline, in pieces, and the 1-based column in ``spec`` of each of its
    characters (:func:`xdsl_pipeline`)."""
    text: list[str] = []
    cols: list[int] = []
    for k, (first, last) in enumerate(elements):
        if k:
            text.append(",")
            cols.append(first)  # the comma's column
        brace = spec.find("{", first, last)
        head = spec[first : brace if brace >= 0 else last]
        name_at = first + len(head) - len(head.lstrip())
        name = head.strip()
        if not name:
            raise bad("expected a pass name (an empty element: a ',' too many?)", name_at)
        if not _PASS_NAME.fullmatch(name):
            raise bad(f"'{name}' is not a pass name (passes are separated by ',')", name_at)
        text.append(name)
        cols.extend(range(name_at + 1, name_at + len(name) + 1))
        if brace < 0:
            continue
        close = _closing_brace(spec, brace, last)
        if close is None:
            raise bad("missing closing '}' while processing pass options", brace)
        if spec[close + 1 : last].strip():
            raise bad(f"expected ',' or ')' after the options of '{name}'", close + 1 + _leading_space(spec, close + 1))
        text.append("{")
        cols.append(brace + 1)
        for word_at, word in _option_words(spec, brace + 1, close):
            if text[-1] != "{":
                text.append(" ")
                cols.append(word_at)
            text.append(word)
            cols.extend(range(word_at + 1, word_at + len(word) + 1))
        text.append("}")
        cols.append(close + 1)
    return text, cols


def _leading_space(text: str, at: int) -> int:
    return len(text[at:]) - len(text[at:].lstrip())


def _closing_brace(spec: str, brace: int, end: int) -> int | None:
    """The index of the ``}`` that closes the ``{`` at ``brace`` (quotes and
    nested braces skipped), before ``end``; ``None`` if there is none."""
    depth, quote = 0, False
    for j in range(brace, end):
        c = spec[j]
        if quote:
            quote = c != '"' or spec[j - 1] == "\\"
        elif c == '"':
            quote = True
        elif c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                return j
    return None


def _option_words(spec: str, start: int, end: int) -> list[tuple[int, str]]:
    """The whitespace-separated words of ``spec[start:end]`` (an option
    list), quotes and braces kept whole, each with its index in ``spec``."""
    words: list[tuple[int, str]] = []
    depth, quote, word_at = 0, False, -1
    for j in range(start, end + 1):
        c = spec[j] if j < end else " "
        if quote:
            quote = c != '"' or spec[j - 1] == "\\"
        elif c == '"':
            quote = True
        elif c in "{[":
            depth += 1
        elif c in "}]":
            depth -= 1
        if c.isspace() and not quote and depth == 0 or j == end:
            if word_at >= 0:
                words.append((word_at, spec[word_at:j]))
                word_at = -1
        elif word_at < 0:
            word_at = j
    return words


def pass_help(width: int = 100) -> str:
    """The passes as ``fetchc --help`` lists them (as ``mlir-opt --help``
    does), derived from the pass classes: each of fetchc's passes with its
    ``summary`` and its options (the dataclass fields: ``name=<type>``, the
    field's ``metadata["help"]``, its default), the default pipeline in both
    spellings, then the names of xDSL's built-in passes."""
    import dataclasses
    import textwrap
    import typing

    lines = ["passes (-p / --pass-pipeline, in xdsl-opt's or mlir-opt's spelling):"]
    col = 30

    def entry(head: str, text: str, indent: int) -> None:
        first = " " * indent + head
        body = textwrap.wrap(text, width - col, break_on_hyphens=False) or [""]
        if len(first) >= col - 1:
            lines.append(first)
            first = ""
        lines.append(first.ljust(col) + body[0])
        lines.extend(" " * col + b for b in body[1:])

    for name, factory in fetchc_passes().items():
        cls = factory()
        entry(name, getattr(cls, "summary", ""), 2)
        hints = typing.get_type_hints(cls)
        for f in dataclasses.fields(cls):
            if f.name == "name" or not f.init:
                continue
            kind = getattr(hints.get(f.name), "__name__", "value")
            default = "" if f.default is dataclasses.MISSING else f" (default {f.default})"
            entry(f"{f.name.replace('_', '-')}=<{kind}>", f"{f.metadata.get('help', '')}{default}", 6)
    lines.append("")
    lines.append(f"default pipeline: -p {','.join(DEFAULT_PIPELINE)}")
    lines.append(f"  or --pass-pipeline='builtin.module({','.join(DEFAULT_PIPELINE)})'")
    lines.append("  (--emit=mlir stops before fetch-to-seq; -p '' runs no pass)")
    from xdsl.transforms import get_all_passes

    others = ", ".join(sorted(n for n in get_all_passes() if n not in fetchc_passes()))
    lines.append("")
    text = f"xDSL's built-in passes run too (their options: xdsl-opt --help): {others}"
    lines.extend(textwrap.wrap(text, width, break_on_hyphens=False))
    return "\n".join(lines) + "\n"


_TYPE_NAMES = {"int": "an integer", "float": "a number", "str": "a string", "bool": "true or false"}


def _option_text(text: str) -> str:
    """xDSL's pass-option messages in the spelling users write: option
    names with ``-`` (``dm-size``, not ``dm_size``), and the expected value
    instead of a Python type (``<class 'int'>``)."""
    m = re.fullmatch(r"Incompatible types: given \((.*?),?\), expected <class '(\w+)'>", text)
    if m:
        want = _TYPE_NAMES.get(m.group(2), m.group(2))
        given = m.group(1).strip()
        return f"option value {given} is not {want}" if given else f"an option has no value (expected {want})"
    m = re.fullmatch(r"Provided arguments \[(.*)\] not found in expected arguments \[(.*)\]", text)
    if m:
        given, known = (re.findall(r'"([^"]*)"', g) for g in m.groups())
        return (
            f"unknown option {', '.join(given)} (options: {', '.join(k.replace('_', '-') for k in known)})"
            if known
            else f"unknown option {', '.join(given)} (this pass takes none)"
        )
    return text


def print_module(module: ModuleOp, generic: bool = False, debuginfo: bool = False) -> str:
    """The module as MLIR text (custom form, or generic with ``generic``),
    with every op's location (``loc(...)``) when ``debuginfo``, as
    ``mlir-opt --mlir-print-debuginfo`` writes them."""
    out = io.StringIO()
    Printer(stream=out, print_generic_format=generic, print_debuginfo=debuginfo).print_op(module)
    out.write("\n")
    return out.getvalue()


def pass_diagnostic(p: ModulePass, err: BaseException, module: ModuleOp) -> Diagnostic:
    """The diagnostic for an exception the pass ``p`` raised on ``module``.

    * fetchc's :class:`PassError` / :class:`DiagnosticError`: their own
      located diagnostics.
    * ``MemoryError``: ``out of memory while running pass 'x'``.
    * Any other exception from one of fetchc's own passes is a fetchc bug:
      ``pass 'x' failed with TypeError: ...`` (what the fuzzer looks for).
    * An exception from one of xDSL's passes (``-p canonicalize,...``):
      ``pass 'x' failed: <its message>`` for xDSL's deliberate diagnostics
      (``DiagnosticException``, ``PassFailedException``), else ``pass 'x'
      failed (xDSL AssertionError: ...): it does not support this input``;
      located at the innermost op in the traceback's frames that has a file
      location, with the op named, when there is one."""
    if isinstance(err, PassError):
        return op_error(err.op, err.message, err.notes)
    if isinstance(err, DiagnosticError):
        return err.diagnostics[0]
    if memory_failure(err):
        return Diagnostic.error(f"out of memory while running pass '{p.name}'")
    text = _exception_summary(err)
    if p.name in fetchc_passes():
        return Diagnostic.error(f"pass '{p.name}' failed with {type(err).__name__}: {text}".rstrip(": "))
    if isinstance(err, DiagnosticException) and text:
        msg = f"pass '{p.name}' failed: {text}"
    else:
        what = f"xDSL {type(err).__name__}" + (f": {text}" if text else "")
        msg = f"pass '{p.name}' failed ({what}): it does not support this input"
    op = _failing_op(err)
    if op is not None:
        return Diagnostic.error(f"{msg} (at '{op.name}')", op_location(op))
    return Diagnostic.error(msg)


def _exception_summary(err: BaseException) -> str:
    """An exception's message on one line, at most about 240 characters
    (xDSL messages may embed a whole printed module)."""
    raw = re.sub(r"(?s)\b[A-Z]\w*Op\(\n.*?\n\)", "the module", str(err))  # xDSL's repr of an op
    lines = [ln.strip() for ln in raw.strip().splitlines() if ln.strip()]
    if not lines:
        return ""
    text = lines[0] if len(lines[0]) > 20 and not lines[0].endswith(("(", "{", "[")) else " ".join(lines)
    text = " ".join(text.split())
    if len(text) > 240:
        text = text[:100] + " ... " + text[-120:]
    return text


def _failing_op(err: BaseException) -> Operation | None:
    """The innermost op with a file location that a frame of the traceback
    was working on (its parameter ``op`` or ``operation``, or ``self`` in
    an op's method; not a loop variable), not a module."""
    frames = []
    tb = err.__traceback__
    while tb is not None:
        frames.append(tb.tb_frame)
        tb = tb.tb_next
    for frame in reversed(frames):
        try:
            code = frame.f_code
            params = code.co_varnames[: code.co_argcount + code.co_kwonlyargcount]
            local = frame.f_locals
            candidates = [local[k] for k in ("op", "operation", "self") if k in params and k in local]
        except Exception:  # noqa: BLE001 - a frame without readable locals
            continue
        for v in candidates:
            if isinstance(v, Operation) and not isinstance(v, ModuleOp) and op_location(v) is not None:
                return v
    return None


def kernel_name_errors(module: Operation) -> list[Diagnostic]:
    """ir.md §2a: an error at each kernel whose programs' names cannot leave
    fetchc (:func:`fetchc.kernel.program_path_error`: ``@".."``, ``@""``),
    and at each kernel argument whose ``rngd.name`` is malformed, whose name
    cannot leave fetchc, or whose name an earlier tensor or scalar of its
    kernel already has (located at the argument, with a note at the first),
    :func:`fetchc.kernel.name_errors`."""
    from fetchc.kernel import kernels, name_errors, program_path_error

    out = []
    for func in kernels(module):
        bad_path = program_path_error(func, module)
        if bad_path is not None:
            out.append(op_error(func, bad_path))
        for arg, message, first in name_errors(func):
            notes = [(func, "the first is here")] if first is not None else []
            d = op_error(func, message, notes)
            d.loc = location_of(arg.location) or d.loc
            if first is not None:
                d.notes[0].loc = location_of(first.location) or d.notes[0].loc
            out.append(d)
    return out


def check_module(module: ModuleOp) -> list[Diagnostic]:
    """Everything :func:`run_pipeline` checks before the first pass (ir.md
    §3, §2a): every op's verifier (:func:`~fetchc.frontend.verify.verify_module`),
    then, if they found nothing, the rules that span a function's signature
    (:func:`~fetchc.dialects.fetch_chain.signature_errors`) and the kernels'
    tensor names (:func:`kernel_name_errors`).  Returns the diagnostics
    (empty: the module is valid); raises nothing for bad input."""
    diags = verify_module(module)
    if not diags:
        from fetchc.dialects.fetch_chain import signature_errors

        diags = [op_error(op, msg) for op, msg in signature_errors(module)] + kernel_name_errors(module)
    return diags


@dataclass
class PipelineResult:
    """What :func:`run_pipeline` produced: the module (as far as the
    pipeline got), every diagnostic, and ``ok`` (no error)."""

    module: ModuleOp
    diagnostics: list[Diagnostic] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not any(d.severity == "error" for d in self.diagnostics)


VERIFY_EACH_ENV = "FETCHC_VERIFY_EACH"
"""Environment variable: when set (and not ``0``), :func:`run_pipeline`
verifies the whole module after every pass by default, as ``--verify-each``
does.  The test suite sets it, so that every compile in the tests checks
that the passes produce valid IR."""


def verify_each_default() -> bool:
    """``--verify-each``'s default: on when :data:`VERIFY_EACH_ENV` is set."""
    return os.environ.get(VERIFY_EACH_ENV, "") not in ("", "0")


def release_garbage(untracked_passes: int) -> None:
    """While the cyclic garbage collector is paused (:func:`fetchc.process.gc_paused`),
    collect once after the passes when one of them was xDSL's: the ops a
    pass erases are cyclic garbage (an op and its results point at each
    other).  fetchc's own passes need no collection: the driver releases
    what they erase as they go (:func:`~fetchc.frontend.xdsl_compat.release_erased`),
    which saves the collection (0.28 s on 5000 distinct chains,
    ``tools/bench_compile.py --only phases``) and lowers the peak memory
    (149 to 142 MB there)."""
    from fetchc.process import gc_is_paused

    if untracked_passes and gc_is_paused():
        gc.collect()


def run_pipeline(
    module: ModuleOp,
    ctx: Context,
    passes: Sequence[ModulePass],
    after_pass: Callable[[ModulePass, ModuleOp], None] | None = None,
    *,
    before_pass: Callable[[ModulePass, ModuleOp], None] | None = None,
    verify_each: bool | None = None,
    checked: bool = False,
) -> PipelineResult:
    """Verify ``module`` completely, then run ``passes`` in order.  Stops at
    the first failure.  Never raises for bad input: every failure is a
    diagnostic in the result.  ``before_pass`` is called before each pass
    (``--mlir-print-ir-before-all``), ``after_pass`` after each successful
    one (``--mlir-print-ir-after-all``).

    Verification happens once (ir.md §4): after a fetchc pass only the ops
    it created are verified (the passes rewrite verified IR into legal
    stages; the ``fetch_seq`` ops fetch-to-seq creates and the ``seq.bin``
    writer's record checks guard the output); after any other pass (xDSL's)
    the whole module.  ``verify_each`` (``--verify-each``; default
    :func:`verify_each_default`) verifies the whole module after every pass,
    as ``mlir-opt`` does.  ``checked``: :func:`check_module` has already
    found nothing to report on ``module`` (the kernel compile cache checks
    before deciding what to compile), so it is not checked again."""
    if verify_each is None:
        verify_each = verify_each_default()
    diags = [] if checked else check_module(module)
    if diags:
        return PipelineResult(module, diags)
    untracked = 0
    remarks: list[tuple[Diagnostic, Operation]] = []  # the passes' remarks; kept whatever happens next
    for p in passes:
        if before_pass is not None:
            before_pass(p, module)
        tracker = ChangeTracker() if isinstance(p, FetchcPass) else None
        try:
            if tracker is not None and isinstance(p, FetchcPass):
                p.apply_tracked(ctx, module, tracker.listener)
            else:
                p.apply(ctx, module)
        except RecursionError:
            error = Diagnostic.error(f"pass '{p.name}': the IR is nested too deeply")
            return PipelineResult(module, _by_kernel(module, remarks) + [error])
        except Exception as err:  # noqa: BLE001 - bad input is a diagnostic, never a traceback
            remarks += [] if tracker is None else tracker.remarks
            return PipelineResult(module, _by_kernel(module, remarks) + [pass_diagnostic(p, err, module)])
        if tracker is not None:
            release_erased(tracker.erased)
            remarks += tracker.remarks
        diags = verify_module(module, None if verify_each or tracker is None else tracker.created)
        if diags:
            for d in diags:
                d.message += f" (after pass '{p.name}')"
            return PipelineResult(module, _by_kernel(module, remarks) + diags)
        if after_pass is not None:
            after_pass(p, module)
        untracked += tracker is None
    release_garbage(untracked)
    return PipelineResult(module, _by_kernel(module, remarks))


def _by_kernel(module: ModuleOp, remarks: list[tuple[Diagnostic, Operation]]) -> list[Diagnostic]:
    """The passes' remarks (:func:`fetchc.rewriting.emit_remark`, each with
    the top-level op it was made in) kernel by kernel, in the order of the
    module's top level, each kernel's in the order the passes made them (as
    MLIR orders the diagnostics of function passes run in parallel).  So a
    kernel's remarks do not depend on the other kernels of its module, which
    the kernel compile cache relies on when it replays them."""
    position = {op: i for i, op in enumerate(module.ops)}
    order = sorted(range(len(remarks)), key=lambda i: (position.get(remarks[i][1], len(position)), i))
    return [remarks[i][0] for i in order]

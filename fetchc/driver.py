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
    text = xdsl_pipeline_text(spec)
    if not text.strip():
        return []
    try:
        passes = tuple(PassPipeline.parse_spec(all_passes(), text).passes)
        if all(_is_frozen(p) for p in passes):
            _PARSED_PIPELINES[spec] = passes
        return list(passes)
    except (ValueError, ArgSpecParseError) as e:  # unknown pass / bad syntax or options
        text = _option_text(_one_line(str(e)) or type(e).__name__)
        if "Unrecognized passes" in text:
            known = ", ".join(sorted(k for k in all_passes() if k.startswith("fetch")))
            text += f" (fetchc's passes: {known}; xDSL's built-in passes are available too)"
            text += _did_you_mean(text)
        raise DiagnosticError(Diagnostic.error(f"invalid pass pipeline '{spec}': {text}")) from None


_SPEC_AT = re.compile(r"pass-pipeline:(\d+):(\d+)")


def _one_line(message: str) -> str:
    """xDSL's pipeline syntax error (a header, ``pass-pipeline:L:C``, the
    pipeline, a caret line and the reason, on separate lines) as one line:
    ``column C: reason``; any other message with its lines joined by
    ``; ``."""
    lines = [line.strip() for line in message.strip().splitlines() if line.strip()]
    at = next((m for line in lines if (m := _SPEC_AT.fullmatch(line))), None)
    if at is not None and len(lines) >= 2:
        return f"column {at.group(2)}: {lines[-1][:1].lower()}{lines[-1][1:]}"
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


def xdsl_pipeline_text(spec: str) -> str:
    """A pipeline in ``xdsl-opt``'s spelling.  ``mlir-opt``'s
    ``builtin.module(a, b{opt=v})`` becomes ``a,b{opt=v}`` (whitespace
    between passes dropped, option lists kept as written); anything not
    starting with ``NAME(`` is returned unchanged.  fetchc's input is one
    ``builtin.module`` and every pass runs on the whole module, so a pipeline
    anchored on another op, or a nested one (``builtin.module(func.func(cse))``),
    is an error.  Raises :class:`DiagnosticError` (``invalid pass pipeline
    '...': ...``) for those, for a missing ``)`` and for text after it."""
    m = _ANCHOR.match(spec)
    if m is None:
        return spec

    def bad(why: str) -> DiagnosticError:
        return DiagnosticError(Diagnostic.error(f"invalid pass pipeline '{spec}': {why}"))

    if m.group(1) != "builtin.module":
        raise bad(
            f"the pipeline is anchored on '{m.group(1)}', but fetchc compiles a builtin.module and its "
            "passes run on the whole module: write builtin.module(PASS,PASS{option=value})"
        )
    out: list[str] = []
    depth, quote, i = 0, False, m.end()
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
        elif depth == 0 and c == ")":
            break
        elif depth == 0 and c == "(":
            inner = "".join(out).rsplit(",", 1)[-1]
            raise bad(
                f"'{inner}(...)' nests a pipeline, but fetchc's passes run on the whole module: list the "
                "passes directly inside builtin.module(...)"
            )
        elif depth == 0 and c.isspace():
            i += 1
            continue
        out.append(c)
        i += 1
    if i >= len(spec):
        raise bad("missing ')' at the end of builtin.module(...)")
    if spec[i + 1 :].strip():
        raise bad(f"unexpected text after builtin.module(...): '{spec[i + 1 :].strip()}'")
    return "".join(out)


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
    """ir.md §2a: an error at each kernel argument whose ``rngd.name`` is
    malformed or whose name an earlier tensor or scalar of its kernel
    already has (located at the argument, with a note at the first),
    :func:`fetchc.kernel.name_errors`."""
    from fetchc.kernel import kernels, name_errors

    out = []
    for func in kernels(module):
        for arg, message, first in name_errors(func):
            notes = [(func, "the first is here")] if first is not None else []
            d = op_error(func, message, notes)
            d.loc = location_of(arg.location) or d.loc
            if first is not None:
                d.notes[0].loc = location_of(first.location) or d.notes[0].loc
            out.append(d)
    return out


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
    if untracked_passes and not gc.isenabled():
        gc.collect()


def run_pipeline(
    module: ModuleOp,
    ctx: Context,
    passes: Sequence[ModulePass],
    after_pass: Callable[[ModulePass, ModuleOp], None] | None = None,
    *,
    before_pass: Callable[[ModulePass, ModuleOp], None] | None = None,
    verify_each: bool | None = None,
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
    as ``mlir-opt`` does."""
    if verify_each is None:
        verify_each = verify_each_default()
    diags = verify_module(module)
    if not diags:
        from fetchc.dialects.fetch_chain import signature_errors

        diags = [op_error(op, msg) for op, msg in signature_errors(module)] + kernel_name_errors(module)
    if diags:
        return PipelineResult(module, diags)
    untracked = 0
    remarks: list[Diagnostic] = []  # the passes' remarks, in order; kept whatever happens next
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
            return PipelineResult(module, remarks + [Diagnostic.error(f"pass '{p.name}': the IR is nested too deeply")])
        except Exception as err:  # noqa: BLE001 - bad input is a diagnostic, never a traceback
            return PipelineResult(module, remarks + _remarks(tracker) + [pass_diagnostic(p, err, module)])
        if tracker is not None:
            release_erased(tracker.erased)
            remarks += _remarks(tracker)
        diags = verify_module(module, None if verify_each or tracker is None else tracker.created)
        if diags:
            for d in diags:
                d.message += f" (after pass '{p.name}')"
            return PipelineResult(module, remarks + diags)
        if after_pass is not None:
            after_pass(p, module)
        untracked += tracker is None
    release_garbage(untracked)
    return PipelineResult(module, remarks)


def _remarks(tracker: ChangeTracker | None) -> list[Diagnostic]:
    """The remarks a fetchc pass made (:func:`fetchc.rewriting.emit_remark`),
    as located ``remark`` diagnostics."""
    return [] if tracker is None else tracker.remarks

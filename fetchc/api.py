"""The embedding API: compile MLIR text or an in-memory module to ``seq.bin``.

Example::

    import fetchc
    result = fetchc.compile(open("examples/nvfp4_dequant_f32.mlir").read())
    open("seq.bin", "wb").write(result.seq_bin)
    for p in result.programs:
        print(p.name, p.limits, p.strides)
    print(result.mlir)          # residual IR: fetch_seq programs + rngd downstream ops

or build the module in Python with :mod:`fetchc.builder` (stream types
inferred, each op verified as it is built), or with the op constructors (``FetchOp``,
``TableLookupOp``, ``CastOp``, ``ZpSubOp``, ``ConvertOp``, ``DequantOp`` of
:mod:`fetchc.dialects.fetch`, the ``rngd`` ops, ``func.FuncOp``) and pass
the ``ModuleOp``: the embedding use case (see ``test/pytest/test_api.py``).

Spec: ir.md §4 (the default pipeline), seqbin.md.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects.builtin import ModuleOp

from fetchc.frontend.diagnostics import DiagnosticError
from fetchc.seqbin import Program, SeqBin, Table


@dataclass(frozen=True)
class CompileResult:
    """The outcome of :func:`compile`.

    ``seq_bin``: the file's bytes (seqbin.md); ``seqbin``: the same, decoded;
    ``module``: the residual IR after the pipeline (``fetch_seq.table`` /
    ``fetch_seq.program`` ops and the downstream ``rngd`` ops)."""

    seq_bin: bytes
    seqbin: SeqBin
    module: ModuleOp

    @property
    def programs(self) -> tuple[Program, ...]:
        """The Fetch Unit programs, in program order."""
        return self.seqbin.programs

    @property
    def tables(self) -> tuple[Table, ...]:
        """The lookup tables, each distinct table once, in order of first
        use (a program's ``table`` field indexes this tuple)."""
        return self.seqbin.tables

    def program(self, name: str) -> Program:
        """The program named ``name`` (``function/index``).  Raises
        ``KeyError`` when there is none."""
        for p in self.programs:
            if p.name == name:
                return p
        raise KeyError(name)

    @property
    def mlir(self) -> str:
        """The residual IR as MLIR text."""
        from fetchc.driver import print_module

        return print_module(self.module)


def compile(module_or_text: ModuleOp | str, *, filename: str = "<input>", pipeline: str | None = None) -> CompileResult:
    """Compile MLIR text, or a ``builtin.module`` built in memory (which is
    modified in place), to ``seq.bin``.

    ``pipeline`` overrides the default ``fetch-route-sub-decode,
    fetch-place-dm, fetch-legalize-convert, fetch-split-scaling,
    fetch-to-seq`` (xdsl-opt syntax); it must reach the ``fetch_seq`` dialect.  Raises :class:`fetchc.diagnostics.DiagnosticError`
    whose ``.diagnostics`` explain any parse, verifier or pass error
    (render them with :func:`fetchc.diagnostics.render_all`)."""
    from fetchc.frontend.context import shared_context
    from fetchc.driver import DEFAULT_PIPELINE, parse_pipeline, run_pipeline
    from fetchc.seqbin.emit import emit_seqbin
    from fetchc.frontend.parsing import parse_module

    if not isinstance(module_or_text, (str, ModuleOp)):
        raise TypeError(
            f"fetchc.compile takes MLIR text (str) or a builtin.module (ModuleOp), not {type(module_or_text).__name__}"
        )
    ctx = shared_context()
    module = parse_module(ctx, module_or_text, filename) if isinstance(module_or_text, str) else module_or_text
    passes = parse_pipeline(",".join(DEFAULT_PIPELINE) if pipeline is None else pipeline)
    result = run_pipeline(module, ctx, passes)
    if not result.ok:
        raise DiagnosticError(result.diagnostics)
    sb, data = emit_seqbin(module)
    return CompileResult(seq_bin=data, seqbin=sb, module=module)

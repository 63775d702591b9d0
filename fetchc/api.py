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

:func:`run` runs a whole kernel on the golden model (ir.md §5)::

    out = fetchc.run(open("examples/nvfp4_dequant_f32.mlir").read(),
                     codes=packed_uint8, bscale=scales_uint8, gscale=0.5)
    out["out"]                  # (4096, 4096) float32, RNGD's arithmetic

Spec: ir.md §4 (the default pipeline), §5 (``fetchc run``), seqbin.md.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from xdsl.dialects.builtin import ModuleOp

from fetchc import compile_cache
from fetchc.compile_cache import Compiled, KernelCache
from fetchc.diagnostics import DiagnosticError
from fetchc.seqbin import Program, SeqBin, Table

if TYPE_CHECKING:
    import numpy


@dataclass(frozen=True)
class CompileResult:
    """The outcome of :func:`compile`.

    ``seq_bin`` is the result: the bytes of the ``seq.bin`` file
    (seqbin.md), what ``fetchc IN -o OUT`` writes.  ``seqbin`` is not a
    second copy of it under another spelling but its decoded model (a
    :class:`fetchc.seqbin.SeqBin`: tables, programs, MANIFEST), the one the
    emitter wrote the bytes from, equal to ``fetchc.seqbin.read(seq_bin)``;
    :attr:`programs`, :attr:`tables` and :meth:`program` read it.
    ``module``: the residual IR after the pipeline (``fetch_seq.table`` /
    ``fetch_seq.program`` ops and the downstream ``rngd`` ops); when the
    bytes came from the kernel compile cache it is computed on first use, by
    an uncached compile of the same input (which must give the same bytes,
    else ``RuntimeError``)."""

    seq_bin: bytes
    """The ``seq.bin`` file's bytes (seqbin.md): the primary result."""
    seqbin: SeqBin
    """The decoded model of :attr:`seq_bin` (``fetchc.seqbin.read(seq_bin)``)."""
    _module: ModuleOp | Callable[[], tuple[bytes, ModuleOp]] = field(repr=False)

    @property
    def module(self) -> ModuleOp:
        """The residual IR after the pipeline."""
        if isinstance(self._module, ModuleOp):
            return self._module
        data, module = self._module()
        if data != self.seq_bin:
            raise RuntimeError(
                "fetchc bug: the kernel compile cache gave other bytes than a compile (FETCHC_NO_CACHE=1 avoids it)"
            )
        object.__setattr__(self, "_module", module)
        return module

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


_CACHE: KernelCache | None = None


def compile(
    module_or_text: ModuleOp | str, *, filename: str = "<input>", pipeline: str | None = None, cache: bool | None = None
) -> CompileResult:
    """Compile MLIR text, or a ``builtin.module`` built in memory (which is
    modified in place), to ``seq.bin``.

    ``pipeline`` overrides the default ``fetch-route-sub-decode,
    fetch-place-dm, fetch-legalize-convert, fetch-split-scaling,
    fetch-to-seq`` (xdsl-opt syntax); it must reach the ``fetch_seq`` dialect.
    Text goes through the in-process kernel compile cache
    (:mod:`fetchc.compile_cache`: each distinct kernel is compiled once,
    bytes identical to an uncached compile) unless ``cache=False`` or
    ``FETCHC_NO_CACHE=1``.  Raises :class:`fetchc.diagnostics.DiagnosticError`
    whose ``.diagnostics`` explain any parse, verifier or pass error
    (render them with :func:`fetchc.diagnostics.render_all`).  A pass's
    remarks (``fetch-split-scaling`` fetching a dequant's block scales in
    lockstep) are not errors and are not raised: the command prints them;
    here each kernel's are in its function attribute ``rngd.remarks`` of
    :attr:`CompileResult.module` (``fetchc.driver.run_pipeline`` returns them
    as diagnostics)."""
    from fetchc.driver import DEFAULT_PIPELINE
    from fetchc.process import gc_paused

    if not isinstance(module_or_text, (str, ModuleOp)):
        raise TypeError(
            f"fetchc.compile takes MLIR text (str) or a builtin.module (ModuleOp), not {type(module_or_text).__name__}"
        )
    spec = ",".join(DEFAULT_PIPELINE) if pipeline is None else pipeline
    with gc_paused():  # a compile makes little cyclic garbage: see fetchc.process.gc_paused
        if isinstance(module_or_text, str) and (compile_cache.enabled() if cache is None else cache):
            return _compile_cached(module_or_text, filename, spec)
        sb, data, _, module = compile_uncached(module_or_text, filename, spec)
    return CompileResult(seq_bin=data, seqbin=sb, _module=module)


def _compile_cached(text: str, filename: str, spec: str) -> CompileResult:
    """:func:`compile` of MLIR text through the in-process kernel compile
    cache (:meth:`KernelCache.compile_module`): parsed and checked as
    :func:`compile_uncached` does, then only the kernels the cache does not
    know are compiled.  Raises :class:`DiagnosticError` as
    :func:`compile_uncached` does."""
    from fetchc.driver import parse_pipeline
    from fetchc.frontend.context import shared_context
    from fetchc.frontend.parsing import parse_module

    global _CACHE
    cache = _CACHE = _CACHE or KernelCache()

    def lazy() -> tuple:
        return compile_uncached(text, filename, spec)[1::2]

    known = cache.memo_get(text, filename, spec)
    if known is not None:
        return CompileResult(seq_bin=known[1], seqbin=known[0], _module=lazy)
    ctx = shared_context()
    module = parse_module(ctx, text, filename)
    passes = parse_pipeline(spec)
    compiled = cache.compile_module(
        module,
        spec,
        passes,
        lambda m, checked: compile_parsed(m, ctx, passes, checked=checked),
        lambda: parse_module(ctx, text, filename),
    )
    if not compiled.ok or compiled.seqbin is None or compiled.data is None:
        raise DiagnosticError(compiled.diagnostics)
    if not compiled.diagnostics:
        cache.memo_put(text, filename, spec, (compiled.seqbin, compiled.data))
    return CompileResult(seq_bin=compiled.data, seqbin=compiled.seqbin, _module=compiled.module or lazy)


def compile_uncached(
    module_or_text: ModuleOp | str, filename: str, pipeline: str
) -> tuple[SeqBin, bytes, list, ModuleOp]:
    """Parse (text), verify, run ``pipeline`` and serialise, without any
    cache: ``(SeqBin, bytes, warnings and remarks, residual module)``.
    Raises :class:`DiagnosticError` for any error."""
    from fetchc.driver import parse_pipeline
    from fetchc.frontend.context import shared_context
    from fetchc.frontend.parsing import parse_module

    ctx = shared_context()
    module = parse_module(ctx, module_or_text, filename) if isinstance(module_or_text, str) else module_or_text
    compiled = compile_parsed(module, ctx, parse_pipeline(pipeline))
    if not compiled.ok or compiled.seqbin is None or compiled.data is None:
        raise DiagnosticError(compiled.diagnostics)
    return compiled.seqbin, compiled.data, compiled.diagnostics, module


def compile_parsed(module: ModuleOp, ctx, passes, *, checked: bool = False) -> Compiled:
    """Verify (unless ``checked``: :func:`fetchc.driver.check_module` found
    nothing already), run ``passes`` and serialise a parsed ``module``,
    without any cache; the residual IR names every tensor (ir.md §2a, as
    ``--emit=seq`` prints it).  Returns the :class:`~fetchc.compile_cache.Compiled`
    outcome (every diagnostic; the ``SeqBin`` and bytes when it succeeded);
    raises nothing for bad input."""
    from fetchc.driver import run_pipeline
    from fetchc.kernel import write_names
    from fetchc.seqbin.emit import emit_seqbin

    result = run_pipeline(module, ctx, passes, checked=checked)
    if not result.ok:
        return Compiled(list(result.diagnostics), module=module)
    write_names(module)
    try:
        sb, data = emit_seqbin(module)
    except DiagnosticError as e:  # after the passes' remarks
        return Compiled(list(result.diagnostics) + e.diagnostics, module=module)
    return Compiled(list(result.diagnostics), sb, data, module)


def run(
    text_or_module: ModuleOp | str,
    /,
    entry: str | None = None,
    inputs: Mapping[str, Any] | None = None,
    **arrays: Any,
) -> dict[str, numpy.ndarray]:
    """Run one kernel on the golden model (ir.md §5, ``fetchc run``):
    compile with the default pipeline (a ``ModuleOp`` is cloned, not
    modified), lay the named inputs out in a DM image at their placements,
    run every Fetch Unit program from the emitted ``seq.bin`` bytes with the
    simulator, then the downstream ``rngd`` ops with RNGD numerics
    (hardware.md §2.2a, §4).

    ``entry``: the kernel's function name, needed when the input holds more
    than one kernel.  The inputs by name, as ``inputs={"w": codes, ...}``
    (any name, ``entry`` and ``inputs`` included) and/or as keyword
    arguments (``w=codes``): every input tensor (a tensor a program reads
    before anything commits to it) and every ``f32`` scalar argument;
    arrays in the memref's shape as ``ml_dtypes`` / numpy values, raw bits
    (``uint8`` for 8-bit floats, ``uint16`` for ``bf16``), the ``|V1``/``|V2``
    arrays ``np.save`` makes of ``ml_dtypes`` arrays, 4-bit codes one per
    element (``uint8`` 0-15, ``int8`` for ``i4``) or packed two per byte (last
    dim halved, even element in the low nibble); scalars as numbers.  A
    value for another argument of the kernel (an output, a tensor no program
    reads) is accepted and unused, with a
    :class:`~fetchc.diagnostics.DiagnosticWarning`; so is every
    ``rngd.transpose`` a committed tensor went through (computed as a
    row-major reshape), and every committed tensor whose value depends on
    ``rngd.contract_outer`` (ir.md §5, hardware.md §2.6: its arithmetic is
    outside the golden model), which is left out of the result: the
    warning's ``.diagnostic`` is located at its ``rngd.commit`` and names
    it and the programs to run with ``fetchc sim``.  When every committed
    tensor depends on a contraction the result is empty (no error).

    Returns ``{tensor name: array}`` for every committed tensor computed, in its
    memref shape: ``f32``, ``i32``, ``i8``, ``i16`` as themselves, ``bf16``
    and the 8-bit floats as ``ml_dtypes`` arrays (``ml_dtypes.bfloat16``,
    ``float8_e4m3fn``, ``float8_e5m2``, ``float8_e8m0fnu``; the same bits as
    the raw ``uint16`` / ``uint8`` that ``fetchc run`` writes to ``.npz``:
    ``.view(np.uint16)`` gives them), 4-bit codes as ``uint8``.

    Raises :class:`fetchc.golden.inputs.InputError` (a missing, unknown or
    scratch name, a name given twice, a wrong shape or dtype, a scalar that
    is not a number), :class:`fetchc.golden.run.RunError` (no kernel,
    unknown ``entry``, several kernels and no ``entry``),
    :class:`DiagnosticError` (compile errors, and a committed tensor that
    depends on an op fetchc has no semantics for), all ``ValueError`` or ``Exception`` subclasses
    with one-sentence messages; ``TypeError`` for an ``entry`` that is not a
    function name or ``inputs`` that is not a mapping."""
    if entry is not None and not isinstance(entry, str):
        raise TypeError(
            f"fetchc.run: entry is the kernel's function name (a str), not {type(entry).__name__}; a tensor named "
            "'entry' is given as inputs={'entry': ...}"
        )
    if inputs is not None and not isinstance(inputs, Mapping):
        raise TypeError(
            f"fetchc.run: inputs is a mapping {{name: value}}, not {type(inputs).__name__}; a tensor named "
            "'inputs' is given as inputs={'inputs': ...}"
        )
    both = sorted(set(inputs or ()) & set(arrays))
    if both:
        from fetchc.golden.inputs import InputError

        raise InputError("given twice (in inputs= and as a keyword argument): " + ", ".join(repr(n) for n in both))
    return run_kernel(text_or_module, entry, {**(inputs or {}), **arrays})


def run_kernel(
    module_or_text: ModuleOp | str,
    entry: str | None = None,
    values: Mapping[str, Any] | None = None,
    *,
    filename: str = "<input>",
    threads: int | None = None,
    progress: bool | None = None,
) -> dict[str, numpy.ndarray]:
    """The golden model of one kernel (:mod:`fetchc.golden.run`): compile
    ``module_or_text`` (MLIR text, or a ``builtin.module``, which is cloned,
    not modified), lay ``values`` out in DM, run every program from the
    emitted ``seq.bin`` bytes and the downstream ``rngd`` ops with RNGD
    numerics.

    * ``entry``: the kernel's function name (``"k"`` or ``"@k"``); ``None``
      when the input holds one kernel.
    * ``values``: ``{tensor or scalar name: value}``: arrays in any form of
      :mod:`fetchc.golden.inputs` (``ml_dtypes`` arrays, raw bits, ``|V``
      arrays, 4-bit codes or packed bytes), scalars as numbers or number
      strings.
    * ``threads``: simulator and Vector Engine worker threads (default: up to
      4); ``progress``: force the terminal progress line on or off.

    Returns ``{tensor name: numpy array}`` for every committed tensor, in its
    memref shape, ``bf16`` and the 8-bit floats as ``ml_dtypes`` arrays
    (:func:`run`).  Raises
    :class:`fetchc.golden.inputs.InputError`, :class:`fetchc.golden.run.RunError`,
    :class:`~fetchc.diagnostics.DiagnosticError` (compile errors;
    ops ``run`` cannot execute), :class:`fetchc.golden.sim.SimError`."""
    from fetchc.golden.run import run_seqbin

    if isinstance(module_or_text, ModuleOp):
        module_or_text = module_or_text.clone()
    elif not isinstance(module_or_text, str):
        raise TypeError(f"fetchc.run takes MLIR text (str) or a builtin.module, not {type(module_or_text).__name__}")
    result = compile(module_or_text, filename=filename)
    return run_seqbin(
        result.seq_bin, result.module, entry, dict(values or {}), threads=threads, progress=progress, typed=True
    )

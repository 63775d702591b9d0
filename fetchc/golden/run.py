"""The golden model of a whole kernel: ``fetchc run`` and ``fetchc.run``
(ir.md §2a, §5), and the MANIFEST-driven DM image of ``fetchc sim --arg``.

What :func:`run_seqbin` does
----------------------------

1. **Its input is compiled already**: :func:`fetchc.api.run` (and
   ``fetchc run``) compile with the default pipeline and pass the emitted
   ``seq.bin`` bytes and the residual module down; this module never
   compiles (it does not import :mod:`fetchc.api`).
2. **Read back** the emitted ``seq.bin`` **bytes** (:func:`fetchc.seqbin.read`):
   every program record, table and the MANIFEST used below come from those
   bytes, never from the IR.  The residual IR only says which downstream
   ``rngd`` op consumes which stream.
3. **Choose the kernel** (ir.md §2a: a ``func.func`` with at least one
   program): ``entry``, else the file's only kernel (an error listing them
   otherwise).
4. **Check the inputs** (:mod:`fetchc.golden.inputs`): the kernel's inputs
   are the tensors that a program reads before any ``rngd.commit`` writes
   them, and every ``f32`` scalar argument.  A tensor written before it is
   read (an output), a tensor no program reads and a compiler-created
   ``scratch`` tensor are not inputs; giving one is an error, as is a
   missing, unknown or duplicated name, a wrong shape or dtype, an unreadable
   ``.npy`` or a scalar that is not a number.
5. **Lay out the DM image**: a zeroed byte array covering every tensor of the
   kernel at its MANIFEST placement (``dm_base``, layout strides and offset;
   4-bit types two per byte, even element in the low nibble).  Scratch
   tensors start as zeros.
6. **Execute the function body in order** (straight-line, ir.md §2a):

   ======================== ==================================================
   op                       what ``run`` does
   ======================== ==================================================
   ``fetch_seq.program``    the simulator (:func:`fetchc.golden.sim.simulate_program`)
                            runs the PROGRAMS record from the bytes on the DM
                            image **as it is at that point**; the result is
                            reshaped to the MANIFEST's time then packet dims
   ``rngd.switch``          pass-through (the values are unchanged)
   ``rngd.collect``         the same elements in the same order, in the result
                            stream's shape (its input type, or the flit form
                            of hardware.md §2.5: a row-major reshape)
   ``rngd.to_trf``,         pass-through: the register file holds the stream
   ``rngd.to_vrf``
   ``rngd.transpose``       a **row-major reshape** of the elements to the result
                            stream's shape: the IR does not say which
                            permutation the Transpose Engine applies, so this
                            reinterprets, it moves no data; a tensor committed
                            from it gets a DiagnosticWarning at the op
   ``rngd.block_scale``     Vector Engine multiply by the block's scale, from
                            a lockstep stream or a VRF tensor (the stream
                            ``rngd.to_vrf`` stored, in the values' stream order)
                            (hardware.md §2.2a, §4: ``f32`` scales as they are,
                            ``f8E8M0FNU`` as ``2^(e-127)``; subnormal operands
                            read as zero, subnormal products flush, NaN is
                            ``0x7FC00000``)
   ``rngd.tensor_scale``    the same multiply by the ``f32`` scalar
   ``rngd.cast``            the Cast Engine's ``f32 → bf16`` (hardware.md §2.6:
                            the rule of the adapter's cast code 6)
   ``rngd.commit``          the stream's elements in row-major order become the
                            memref's elements in row-major order (the memref's
                            logical shape); the result is returned under the
                            tensor's name, and written into the DM image too
                            when a later program reads any of its bytes
   ``rngd.contract_outer``  outside the golden model (hardware.md §2.6): a
                            tensor committed from its result, or from anything
                            computed from it, is left out of the results with
                            a DiagnosticWarning at the commit naming the tensor
                            and the programs to run with ``fetchc sim`` (a
                            note at the contraction); its DM bytes become
                            unknown, so a later program that reads them, and
                            every tensor committed from that, is left out too
   ``arith.constant``       an ``f32`` constant is a scalar operand
   ``func.return``          ignored (returned register files are not outputs)
   ======================== ==================================================

   Any other op gets no value: committing something computed from it is a
   located error naming the op and the programs to run with ``fetchc sim``
   instead; an unknown op with a memref operand (it might write
   memory) or with ``rngd``/``fetch_seq`` ops in its regions is an error.
7. **Return** every committed tensor (not scratch ones, not those left out
   in step 6) by name, in its
   memref shape, in the ``fetchc sim`` encoding (ir.md §5): ``f32``,
   ``i32``, ``i8``, ``i16`` as themselves, ``bf16`` and the 8-bit floats as
   raw bits in ``uint16`` / ``uint8``, 4-bit types as their codes in
   ``uint8``.

Speed: programs run vectorised on up to 4 threads (the simulator), and the
Vector Engine ops of one stream are applied lazily, fused into one in-place
pass over the stream when it is committed
(:mod:`fetchc.golden.scale_chain`), skipping the flush
passes where bounds on the values prove them unnecessary.  A progress line
appears on a terminal for large programs and scale passes.

Errors: :class:`fetchc.golden.inputs.InputError` (bad inputs, ``ValueError``),
:class:`RunError` (no such kernel, several kernels and no ``entry``;
``ValueError``), :class:`fetchc.diagnostics.DiagnosticError` (a
compile error, or an op ``run`` cannot execute, located in the source),
:class:`fetchc.golden.sim.SimError` (a program the simulator refuses).

This module imports numpy; the compile path never imports it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import FloatAttr, MemRefType, ModuleOp
from xdsl.ir import BlockArgument, Operation, SSAValue

from fetchc.diagnostics import Diagnostic, DiagnosticError, DiagnosticWarning
from fetchc.dialects.fetch_seq import ProgramOp
from fetchc.dialects.rngd import (
    BlockScaleOp,
    CastEngineOp,
    CollectOp,
    CommitOp,
    ContractOuterOp,
    TensorScaleOp,
    TransposeOp,
    VrfType,
)
from fetchc.dialects.stream import StreamType
from fetchc.frontend.locations import loc_text, location_of, op_error
from fetchc.golden import engine, rngd_ops, sim
from fetchc.golden.inputs import (
    InputError,
    TensorSpec,
    check_names,
    check_value,
    file_bytes,
    image_size,
    place_slices,
    read_files,
    scalar_value,
    shared_bytes,
    slice_images,
    whole_spec,
)
from fetchc.golden.scale_chain import UNKNOWN, Magnitudes, ScaleChain, magnitudes_of, scale_chain_inplace
from fetchc.npyio import NpyFile
from fetchc.seqbin import Kernel, Program, SeqBin, Table
from fetchc.seqbin import Tensor as ManifestTensor
from fetchc.target import F32

__all__ = [
    "RunError",
    "run_seqbin",
    "tensor_spec",
    "kernel_image",
    "sim_images",
    "sim_kernels",
    "simulate_with_args",
]


class RunError(ValueError):
    """The kernel to run cannot be chosen (no kernel, an unknown ``entry``,
    several kernels without ``entry``), or a ``seq.bin`` without the
    MANIFEST that ``--arg`` needs.  One sentence naming what was asked and
    what exists."""


# --------------------------------------------------------------------------
# Tensors and DM images
# --------------------------------------------------------------------------


def tensor_spec(t: ManifestTensor) -> TensorSpec:
    """The :class:`~fetchc.golden.inputs.TensorSpec` of a MANIFEST tensor
    (its name, element type, shape, layout and ``dm_base``)."""
    return TensorSpec(t.name, t.dtype, tuple(t.shape), tuple(t.strides), t.offset, t.dm_base)


def given_spec(t: ManifestTensor, slices: int) -> TensorSpec:
    """The spec of the array a user gives for (or gets back as) tensor ``t``
    of a kernel on ``slices`` slices: the whole tensor (ir.md §2a, §5;
    :func:`~fetchc.golden.inputs.whole_spec`)."""
    return whole_spec(tensor_spec(t), slices, t.slice_dim)


def kernel_image(kernel: Kernel, values: Mapping[str, Any]) -> np.ndarray:
    """The DM images of ``kernel``'s slices, ``(slices, bytes)`` ``uint8``
    (:func:`~fetchc.golden.inputs.slice_images`; row ``s`` = slice ``s``'s
    DM, address 0 its first byte, up to the last byte of any tensor): each
    named tensor of ``values`` (the whole tensor, any form
    :func:`~fetchc.golden.inputs.canonical_values` accepts) split by its
    ``slice_dim`` (replicated without one) and placed at its MANIFEST
    placement, in the kernel's tensor order (tensors whose explicit
    placements alias must agree on the bytes they share).  Names that are
    not tensors of the kernel are ignored here (the callers check names first).  Raises
    :class:`InputError` for a value of the wrong shape or type, or aliased
    tensors whose values differ where they share bytes."""
    return slice_images(
        [(tensor_spec(t), values.get(t.name)) for t in kernel.tensors], kernel.slices,
        slice_dims=[t.slice_dim for t in kernel.tensors],
    )  # fmt: skip


def _check_given(
    expected: Sequence[TensorSpec],
    scalars: Sequence[str],
    given: Sequence[str],
    not_inputs: Mapping[str, str],
    optional: Iterable[str] = (),
) -> None:
    """Raise one :class:`InputError` for every naming problem: a given name
    in ``not_inputs`` (with its reason), then missing / unknown / duplicated
    names (:func:`~fetchc.golden.inputs.check_names`; names in ``optional``
    may be given or not)."""
    problems = [f"{n!r} {not_inputs[n]}" for n in dict.fromkeys(given) if n in not_inputs]
    optional = set(optional)
    rest = [n for n in given if n not in not_inputs]
    opt_given = [n for n in dict.fromkeys(rest) if n in optional]
    specs = {t.name: t for t in expected if t.name not in optional or t.name in opt_given}
    names = [s for s in scalars if s not in optional or s in opt_given]
    try:
        check_names(specs, names, rest)
    except InputError as e:
        problems.append(str(e))
    if problems:
        raise InputError("; ".join(problems))


# --------------------------------------------------------------------------
# fetchc sim --arg
# --------------------------------------------------------------------------


def sim_images(sb: SeqBin, values: Mapping[str, Any], program: str | None = None) -> list[tuple[Kernel, np.ndarray]]:
    """The DM images ``fetchc sim --arg`` runs on: one per kernel of the
    MANIFEST (only the kernel of ``program`` when given), each laid out from
    ``values`` by :func:`kernel_image`.  Names and values are checked as
    :func:`sim_kernels` checks them, memory as :func:`simulate_with_args`
    does."""
    kernels = sim_kernels(sb, values, program)
    values = _read_within_budget(sb, kernels, values, program)
    return [(k, kernel_image(k, values)) for k in kernels]


def _read_within_budget(
    sb: SeqBin, kernels: Sequence[Kernel], values: Mapping[str, Any], program: str | None
) -> Mapping[str, Any]:
    """Check the largest DM image of ``kernels``, the ``.npy`` data of
    ``values`` still to be read and every output against the memory budget
    (:func:`fetchc.golden.sim.check_memory`), then read the files and check
    their values as :func:`sim_kernels` checks in-memory arrays."""
    tensors = {t.name: given_spec(t, k.slices) for k in kernels for t in k.tensors}
    input_bytes = file_bytes(values, tensors)
    image = max((k.slices * image_size(tensor_spec(t) for t in k.tensors) for k in kernels), default=0)
    slices = max((k.slices for k in kernels), default=1)
    sim.check_memory(sb, image, program, input_bytes=input_bytes, slices=slices)
    if input_bytes == 0 and not any(isinstance(v, NpyFile) for v in values.values()):
        return values
    values = read_files(values)
    _check_values(kernels, values)
    return values


def sim_kernels(sb: SeqBin, values: Mapping[str, Any], program: str | None = None) -> list[Kernel]:
    """The kernels whose programs ``fetchc sim --arg`` runs (all, or the one
    holding ``program``), after checking the names in ``values``.

    Names: every tensor that one of the chosen programs reads must be given
    (scratch tensors never: they start as zeros); the kernel's other tensors
    and its ``f32`` scalars may be given (scalars are checked to be numbers
    and otherwise unused: no program reads them).  A name shared by two
    kernels gets the same value in both.  Raises :class:`RunError` for a file
    without MANIFEST and :class:`InputError` for bad names or values."""
    if sb.manifest is None:
        raise RunError("the seq.bin has no MANIFEST (a version 1.0 file), so --arg cannot place tensors: use --dm")
    keys = [sim.program_key(p, i) for i, p in enumerate(sb.programs)]
    kernels = list(sb.manifest.kernels)
    if program is not None:
        sim.check_program_name(sb, program)
        found = sb.manifest.program(keys.index(program))
        kernels = [found[0]] if found is not None else []
        chosen = {keys.index(program)}
    else:
        chosen = set(range(len(keys)))
    required: dict[str, TensorSpec] = {}
    optional: dict[str, TensorSpec] = {}
    scalars: list[str] = []
    not_inputs: dict[str, str] = {}
    for k in kernels:
        read = {p.tensor for p in k.programs if p.index in chosen}
        for i, t in enumerate(k.tensors):
            if t.scratch:
                not_inputs[t.name] = "is a scratch buffer fetchc created: it starts as zeros and is never given"
            elif i in read:
                required.setdefault(t.name, given_spec(t, k.slices))
            else:
                optional.setdefault(t.name, given_spec(t, k.slices))
        scalars += [s.name for s in k.scalars if s.name not in scalars]
    for name in required:
        optional.pop(name, None)
        not_inputs.pop(name, None)
    for name in optional:
        not_inputs.pop(name, None)
    for k in kernels:
        _check_ranks(k, 1 if k.slices > 1 else 0)
    _check_unambiguous(kernels, keys, chosen, values)
    expected = list(required.values()) + list(optional.values())
    _check_given(expected, scalars, list(values), not_inputs, optional=[*optional, *scalars])
    file_bytes(values, {spec.name: spec for spec in expected})  # .npy headers: shape and type
    _check_values(kernels, values)
    return kernels


def _check_unambiguous(
    kernels: Sequence[Kernel], keys: Sequence[str], chosen: set[int], values: Mapping[str, Any]
) -> None:
    """A name given to ``fetchc sim --arg`` that two of the chosen kernels
    use for tensors of different shapes or types (or a tensor in one and a
    scalar in another) is ambiguous: raise :class:`InputError` naming the
    kernels and how to choose one (``--program``).  A name whose tensors
    agree gets its value in every kernel."""
    for name in values:
        uses: dict[str, str] = {}
        for k in kernels:
            for t in k.tensors:
                if t.name == name and not t.scratch:
                    uses[k.name] = f"memref<{given_spec(t, k.slices).type_str}>"
            for sc in k.scalars:
                if sc.name == name:
                    uses[k.name] = "f32 scalar"
        if len(set(uses.values())) > 1:
            which = ", ".join(f"@{k} ({what})" for k, what in uses.items())
            progs = {k.name: [keys[p.index] for p in k.programs if p.index in chosen] for k in kernels}
            pick = " or ".join(f"--program {progs[k][0]}" for k in uses if progs.get(k))
            raise InputError(
                f"'{name}' is ambiguous: kernels {which} each have an argument of that name; run the programs of "
                f"one kernel, with {pick} (one program at a time), so that '{name}' names one tensor"
            )


def _check_values(kernels: Sequence[Kernel], values: Mapping[str, Any]) -> None:
    """Every given value checked before any work: scalars are numbers,
    arrays are the whole tensor in an accepted form (:func:`check_value`).
    ``.npy`` files not read yet are skipped (their headers were checked)."""
    tensors = {t.name: given_spec(t, k.slices) for k in kernels for t in k.tensors if not t.scratch}
    for name, value in values.items():
        if isinstance(value, NpyFile):
            continue
        if name in tensors:
            check_value(tensors[name], value)
        elif any(s.name == name for k in kernels for s in k.scalars):
            scalar_value(name, value)


def simulate_with_args(
    sb: SeqBin, values: Mapping[str, Any], program: str | None = None, **kw: Any
) -> dict[str, np.ndarray]:
    """``fetchc sim --arg``: run the programs (all, or the one named
    ``program``) each on its kernel's DM images from :func:`sim_images`, every
    slice at once (:func:`fetchc.golden.sim.simulate_slices`).  Returns
    ``{program name: array}`` shaped as the stream's time then packet dims
    (ir.md §5), with a leading slice axis for a kernel on more than one
    slice, in file order.  Extra keyword arguments go to
    :func:`fetchc.golden.sim.simulate_program`.  Raises as
    :func:`sim_images` and :class:`fetchc.golden.sim.SimError`."""
    keys = [sim.program_key(p, i) for i, p in enumerate(sb.programs)]
    seen: set[str] = set()
    for k in keys:
        if k in seen:
            raise sim.SimError(f"two programs are named {k!r}; results are keyed by program name")
        seen.add(k)
    out: dict[str, np.ndarray] = {}
    kernels = sim_kernels(sb, values, program)
    values = _read_within_budget(sb, kernels, values, program)
    for kernel in kernels:
        _warn_committed_aliases(sb, kernel, keys, set(values), program)
    for kernel in kernels:
        images = kernel_image(kernel, values)  # one kernel at a time
        lead = (kernel.slices,) if kernel.slices > 1 else ()
        for kp in kernel.programs:
            key = keys[kp.index]
            if program is not None and key != program:
                continue
            arr = sim.simulate_slices(sb.programs[kp.index], sb.tables, images, name=key, **kw)
            out[key] = arr.reshape(lead + kp.shape)
    return {k: out[k] for k in keys if k in out}


def _manifest_loc(text: str) -> tuple[str, int, int] | None:
    """A MANIFEST ``loc`` (``file:line:col``, else an op path) as a
    diagnostic location."""
    parts = text.rsplit(":", 2)
    if len(parts) == 3 and parts[1].isdigit() and parts[2].isdigit():
        return parts[0], int(parts[1]), int(parts[2])
    return None


def _warn_committed_aliases(
    sb: SeqBin, kernel: Kernel, keys: Sequence[str], given: set[str], program: str | None
) -> None:
    """``fetchc sim --arg`` runs programs, not commits: where a committed
    tensor's placement aliases a given tensor a program reads, the kernel
    itself (and ``fetchc run``) reads what the commit wrote once the commit
    has come, not the values given.  Warn (:class:`DiagnosticWarning` at the
    program's MANIFEST location), once for each pair, naming both tensors
    and the bytes (:func:`~fetchc.golden.inputs.shared_bytes` within what
    the program reads)."""
    import warnings

    warned: set[tuple[str, str]] = set()
    for kp in kernel.programs:
        name = keys[kp.index]
        x = kernel.tensors[kp.tensor]
        if (program is not None and name != program) or x.name not in given:
            continue
        for o in kernel.tensors:
            if not o.committed or o.name == x.name or (o.name, x.name) in warned:
                continue
            shared = shared_bytes(tensor_spec(o), tensor_spec(x), _program_bytes(sb.programs[kp.index]))
            if shared is None:
                continue
            warned.add((o.name, x.name))
            lo, hi, n = shared
            message = (
                f"tensor '{x.name}' shares DM bytes [{lo}, {hi}) ({n} bytes) with tensor '{o.name}', which "
                f"@{kernel.name} commits: once that commit has come, program {name} reads what it wrote there, not "
                f"the values given for '{x.name}'; fetchc sim runs the programs only, on the values given (fetchc "
                "run runs the commits too)"
            )
            warnings.warn(DiagnosticWarning(Diagnostic("warning", message, _manifest_loc(kp.loc))), stacklevel=3)


# --------------------------------------------------------------------------
# Values while a kernel runs
# --------------------------------------------------------------------------


@dataclass(eq=False)
class _Stream:
    """A stream (or a register file holding one): ``arr`` in the sim
    encoding, shaped as the stream, or ``None`` while its program (PROGRAMS
    record ``pending``) has not run yet; for ``f32``, the Vector Engine
    multiplies not applied yet (``steps``) and what the program's output may
    hold (``bounds``)."""

    arr: np.ndarray | None
    shape: tuple[int, ...]
    programs: tuple[str, ...]
    pending: int | None = None
    bounds: Magnitudes | None = None
    steps: list[tuple[Any, int | None]] = field(default_factory=list)
    ops: list[str] = field(default_factory=list)
    transposes: tuple[Operation, ...] = ()


@dataclass(frozen=True)
class _NoValue:
    """A value ``run`` cannot compute: ``op`` has no specified semantics
    (``why``); ``programs``: the programs whose streams it depends on;
    ``via``: the tensors it was read back from, each ``(tensor, program)``
    (a commit of such a value leaves DM bytes ``run`` cannot compute, and
    a later program reading them depends on ``op`` too)."""

    op: Operation
    why: str
    programs: tuple[str, ...]
    via: tuple[tuple[str, str], ...] = ()


_CONTRACTION_WHY = "the Contraction Engine's arithmetic (accumulation order, rounding) is outside the golden model"


class _Runner:
    def __init__(
        self,
        sb: SeqBin,
        kernel: Kernel,
        fn: func.FuncOp,
        program_ops: Mapping[ProgramOp, int],
        threads: int | None,
        progress: bool | None,
    ):
        self.sb, self.kernel, self.fn = sb, kernel, fn
        self.program_ops = program_ops
        self.threads = engine.default_threads() if threads is None else max(1, int(threads))
        self.progress = progress
        self.keys = [sim.program_key(p, i) for i, p in enumerate(sb.programs)]
        self.by_arg = {t.arg: t for t in kernel.tensors if t.arg is not None}
        from fetchc.kernel import scratch_names

        self.scratch = {op: name for op, name in scratch_names(fn).items()}
        self.kp = {p.index: p for p in kernel.programs}
        self.slices = kernel.slices
        self.body = list(fn.body.block.ops) if fn.body.blocks else []

    # ---- names ------------------------------------------------------------

    def tensor_of(self, value: SSAValue, at: Operation) -> ManifestTensor:
        if isinstance(value, BlockArgument) and value.owner is self.fn.body.block and value.index in self.by_arg:
            return self.by_arg[value.index]
        name = self.scratch.get(value.owner) if isinstance(value.owner, Operation) else None
        for t in self.kernel.tensors:
            if t.scratch and name is not None and t.name == name:
                return t
        raise DiagnosticError(
            op_error(at, "uses a memref that is neither a kernel argument nor a scratch tensor of the MANIFEST, "
                     "so fetchc run cannot place it in DM")
        )  # fmt: skip

    def inputs(self) -> tuple[list[ManifestTensor], dict[str, str]]:
        """The tensors read before written, in tensor order; and why each
        other tensor is not an input (a scratch buffer cannot be given; the
        value of any other, an argument of the kernel, would not be used)."""
        written: set[str] = set()
        read_first: set[str] = set()
        for op in self.body:
            if isinstance(op, ProgramOp):
                t = self.tensor_of(op.source, op)
                if t.name not in written:
                    read_first.add(t.name)
            elif isinstance(op, CommitOp):
                written.add(self.tensor_of(op.dest, op).name)
        inputs, why = [], {}
        for t in self.kernel.tensors:
            if t.scratch:
                why[t.name] = "is a scratch buffer fetchc created: it starts as zeros and is never given"
            elif t.name in read_first:
                inputs.append(t)
            elif t.name in written:
                why[t.name] = (
                    f"is written by @{self.kernel.name} before any program reads it (an output, returned by fetchc "
                    "run): the value given for it is not used"
                )
            else:
                why[t.name] = f"is not read by any program of @{self.kernel.name}: the value given for it is not used"
        return inputs, why

    def _unused_given(self, why: Mapping[str, str], given: Iterable[str]) -> list[ManifestTensor]:
        """The kernel arguments given although their value is not used (an
        output, a tensor no program reads: part of the signature, so
        accepted): warn about each (:class:`DiagnosticWarning` at the
        argument) and return them, to be checked like inputs."""
        import warnings

        out = []
        for t in self.kernel.tensors:
            if t.name in given and t.name in why and not t.scratch:
                d = op_error(self.fn, f"tensor '{t.name}' {why[t.name]}", severity="warning")
                assert t.arg is not None
                d.loc = location_of(self.fn.body.block.args[t.arg].location) or d.loc
                warnings.warn(DiagnosticWarning(d), stacklevel=3)
                out.append(t)
        return out

    def _warn_overwritten_inputs(self, given: set[str]) -> None:
        """A committed tensor whose placement aliases a given input that a
        later program reads overwrites the input's bytes first: the values
        given there are not used.  Warn (:class:`DiagnosticWarning` at the
        program, a note at the commit), once for each pair, naming both
        tensors and the bytes (:func:`~fetchc.golden.inputs.shared_bytes`
        within what the program reads).  Overlapping explicit placements
        stay legal views (ir.md §2a)."""
        import warnings

        committed: list[tuple[CommitOp, ManifestTensor]] = []
        warned: set[tuple[str, str]] = set()
        for op in self.body:
            if isinstance(op, CommitOp):
                committed.append((op, self.tensor_of(op.dest, op)))
                continue
            if not isinstance(op, ProgramOp):
                continue
            x = self.tensor_of(op.source, op)
            if x.name not in given:
                continue
            name = self.keys[self.program_ops[op]]
            reach = _program_bytes(self.sb.programs[self.program_ops[op]])
            for commit, o in committed:
                if o.name == x.name or (o.name, x.name) in warned:
                    continue
                shared = shared_bytes(tensor_spec(o), tensor_spec(x), reach)
                if shared is None:
                    continue
                warned.add((o.name, x.name))
                lo, hi, n = shared
                d = op_error(
                    self.fn,
                    f"tensor '{x.name}' shares DM bytes [{lo}, {hi}) ({n} bytes) with tensor '{o.name}', which is "
                    f"committed before program {name} reads '{x.name}': the values given for '{x.name}' there are "
                    f"not used (the program reads what the commit wrote; placements that alias are views of one "
                    "buffer)",
                    [(commit, f"tensor '{o.name}' is committed here")],
                    severity="warning",
                )
                d.loc = location_of(op.location) or d.loc
                warnings.warn(DiagnosticWarning(d), stacklevel=3)

    # ---- execution --------------------------------------------------------

    def run(self, values: Mapping[str, Any]) -> dict[str, np.ndarray]:
        inputs, why = self.inputs()
        scalars = [s.name for s in self.kernel.scalars]
        unused = self._unused_given(why, set(values))
        scratch = {t.name: why[t.name] for t in self.kernel.tensors if t.scratch}
        specs = [given_spec(t, self.slices) for t in inputs + unused]
        _check_given(specs, scalars, list(values), scratch, optional=[t.name for t in unused])
        _check_ranks(self.kernel)
        input_bytes = file_bytes(values, {spec.name: spec for spec in specs})  # headers only
        sim.check_memory(
            self.sb, self.slices * image_size(tensor_spec(t) for t in self.kernel.tensors),
            indices=[p.index for p in self.kernel.programs], input_bytes=input_bytes, command="fetchc run",
            slices=self.slices,
        )  # fmt: skip
        values = read_files(values)
        for t in inputs + unused:  # every value checked before any work
            check_value(given_spec(t, self.slices), values[t.name])
        env: dict[SSAValue, Any] = {}
        block = self.fn.body.block
        for s in self.kernel.scalars:
            env[block.args[s.arg]] = scalar_value(s.name, values[s.name])
        given = {t.name for t in inputs}
        self._warn_overwritten_inputs(given)
        image = kernel_image(self.kernel, {n: v for n, v in values.items() if n in given})
        reads_after = self._reads_after()
        outputs: dict[str, np.ndarray] = {}
        self.pending: list[_Stream] = []
        self.unknown_bytes: list[tuple[int, int, str, _NoValue]] = []
        self.left_out: list[str] = []
        self.image = image
        for pos, op in enumerate(self.body):
            self.step(op, env, image, outputs, reads_after[pos + 1])
        for v in list(self.pending):  # every program runs, also those whose stream reaches no commit
            self.force(v)
        return outputs

    def _reads_after(self) -> list[list[tuple[int, int]]]:
        """For each body position, the DM byte ranges ``[lo, hi)`` that the
        programs from that position on read."""
        out: list[list[tuple[int, int]]] = [[] for _ in range(len(self.body) + 1)]
        acc: list[tuple[int, int]] = []
        for pos in range(len(self.body) - 1, -1, -1):
            op = self.body[pos]
            if isinstance(op, ProgramOp):
                acc = acc + [_program_bytes(self.sb.programs[self.program_ops[op]])]
            out[pos] = acc
        return out

    def step(
        self, op: Operation, env: dict[SSAValue, Any], image: np.ndarray, outputs: dict[str, np.ndarray],
        later_reads: list[tuple[int, int]],
    ) -> None:  # fmt: skip
        operands = [env.get(v) for v in op.operands]
        if isinstance(op, func.ReturnOp) or op in self.scratch:
            return  # a scratch buffer is a placed tensor, like an argument (its bytes start as zeros)
        bad = next((v for v in operands if isinstance(v, _NoValue)), None)
        if isinstance(op, CommitOp):
            self.commit(op, env.pop(op.input), image, outputs, later_reads)
            return
        if bad is not None and not op.regions:
            for r in op.results:
                env[r] = bad
            return
        if isinstance(op, ProgramOp):
            env[op.result] = self.program(op, image)
        elif isinstance(op, rngd_ops.PASS_THROUGH):
            env[op.results[0]] = env.pop(op.input)
        elif isinstance(op, TransposeOp):
            s = self.materialise(env.pop(op.input))
            assert s.arr is not None
            s.arr = rngd_ops.transpose(s.arr, op.result.type, (self.slices,))
            s.shape = s.arr.shape
            s.transposes = (*s.transposes, op)
            env[op.result] = s
        elif isinstance(op, BlockScaleOp):
            x: _Stream = env.pop(op.input)
            vrf = isinstance(op.scale.type, VrfType)  # a VRF tensor may be read again: not consumed
            scales = env.get(op.scale) if vrf else env.pop(op.scale)
            if scales is None:  # a VRF tensor passed in as a function argument
                env[op.result] = _NoValue(op, "its VRF block scales are a function argument, which fetchc run is "
                                          "not given", x.programs)  # fmt: skip
                return
            sc = self.materialise(scales)
            assert sc.arr is not None
            f = rngd_ops.scale_factors(sc.arr, cast(StreamType | VrfType, op.scale.type))
            if vrf:  # in the values' stream order: checked against the values' shape
                f = rngd_ops.vrf_block_scales(f, x.shape[1:], op.block.value.data, (self.slices,))
            x.steps.append((f.reshape(-1), op.block.value.data))
            x.ops.append(op.name)
            x.programs = x.programs + sc.programs
            env[op.result] = x
        elif isinstance(op, CastEngineOp):
            s = self.materialise(env.pop(op.input))
            assert s.arr is not None
            s.arr = rngd_ops.narrow(s.arr).view(np.uint16)  # the sim encoding of bf16: raw bits
            s.ops.append(op.name)
            env[op.result] = s
        elif isinstance(op, TensorScaleOp):
            x = env.pop(op.input)
            g = env.get(op.scale)
            x.steps.append((rngd_ops.tensor_factor(g), None))
            x.ops.append(op.name)
            env[op.result] = x
        elif isinstance(op, CollectOp):
            env[op.result] = self.collect(op, env.pop(op.input))
        elif isinstance(op, ContractOuterOp):
            progs = tuple(p for v in operands if isinstance(v, _Stream) for p in v.programs)
            env[op.result] = _NoValue(op, _CONTRACTION_WHY, progs)
            for v in op.operands:
                env.pop(v, None)
        elif isinstance(op, arith.ConstantOp) and isinstance(op.value, FloatAttr):
            env[op.result] = np.float32(op.value.value.data)
        else:
            self.unknown(op, operands, env)

    def unknown(self, op: Operation, operands: list[Any], env: dict[SSAValue, Any]) -> None:
        inner = [
            o for region in op.regions for o in region.walk() if o.name.startswith(("rngd.", "fetch_seq.", "fetch."))
        ]
        if inner:
            raise DiagnosticError(
                op_error(op, f"holds '{inner[0].name}' in a region: fetchc run executes straight-line kernels "
                         "(ir.md §2a); unroll or hoist it", [(inner[0], "the op inside the region")])
            )  # fmt: skip
        if any(isinstance(v.type, MemRefType) for v in op.operands) or any(
            isinstance(r.type, MemRefType) for r in op.results
        ):
            raise DiagnosticError(
                op_error(op, "has no meaning in fetchc run and takes or makes a memref, whose DM bytes it might "
                         "write: fetchc run cannot tell what the kernel commits")
            )  # fmt: skip
        progs = tuple(p for v in operands if isinstance(v, (_Stream, _NoValue)) for p in v.programs)
        nv = _NoValue(op, f"fetchc run has no semantics for '{op.name}'", progs)
        for r in op.results:
            env[r] = nv

    # ---- ops ----------------------------------------------------------------

    def program(self, op: ProgramOp, image: np.ndarray) -> _Stream | _NoValue:
        """A program's stream, run later (:meth:`force`): when its values are
        needed, or before a commit writes DM bytes it reads, so it always
        sees the DM image as it is at its place in the kernel.  A program
        that reads bytes of a tensor committed from a value ``run`` cannot
        compute (:attr:`unknown_bytes`) gives such a value too."""
        index = self.program_ops[op]
        rec = self.sb.programs[index]
        lo, hi = _program_bytes(rec)
        for a, b, name, nv in self.unknown_bytes:
            if a < hi and lo < b:
                key = self.keys[index]
                return _NoValue(nv.op, nv.why, nv.programs + (key,), nv.via + ((name, key),))
        bounds = output_magnitudes(rec, self.sb.tables) if rec.out_dtype == F32 else None
        v = _Stream(None, (self.slices, *self.kp[index].shape), (self.keys[index],), pending=index, bounds=bounds)
        self.pending.append(v)
        return v

    def force(self, v: _Stream, chain: ScaleChain | None = None) -> None:
        """Run ``v``'s program with the simulator (from the seq.bin record),
        applying ``chain`` to each range of output it writes, in cache."""
        if v.pending is None:
            return
        index = v.pending
        post = None
        if chain is not None:

            def post(out: np.ndarray, lo: int, hi: int, _chain: ScaleChain = chain) -> None:
                _chain.apply(out, lo, hi)

        arr = sim.simulate_slices(
            self.sb.programs[index], self.sb.tables, self.image, name=self.keys[index], threads=self.threads,
            progress=self.progress, progress_prefix="fetchc run", post=post,
        )  # fmt: skip
        v.arr, v.pending = arr.reshape(v.shape), None
        self.pending.remove(v)

    def collect(self, op: CollectOp, v: _Stream) -> _Stream:
        """``rngd.collect``: the stream's elements in the result's shape (its
        input type or the flit form; :func:`fetchc.golden.rngd_ops.collect`),
        pending multiplies kept (they apply in element order)."""
        st = op.result.type
        assert isinstance(st, StreamType)
        v.shape = (self.slices, *st.time, *st.packet)
        if v.arr is not None:
            v.arr = rngd_ops.collect(v.arr, st, (self.slices,))
        return v

    def materialise(self, v: Any) -> _Stream:
        """The stream's values: its program run and its pending Vector
        Engine multiplies applied (in place; fused into the program's run
        when it has not run yet)."""
        assert isinstance(v, _Stream)
        if not v.steps:
            self.force(v)
            return v
        if v.pending is not None:
            n = math.prod(v.shape)
            self.force(v, ScaleChain(n, v.steps, v.bounds or UNKNOWN))
            v.steps, v.bounds = [], None
            return v
        arr = v.arr  # streams are linear: nothing else refers to this array
        assert arr is not None
        if not arr.flags.c_contiguous or not arr.flags.writeable:
            arr = np.array(arr, order="C")
        label = " + ".join(v.ops) + " of " + ", ".join(v.programs[:1])
        bar = engine.Progress(label, arr.size, self.progress, "fetchc run")
        threads = self.threads

        def chunks(n: int, chunk: int, work) -> None:
            engine.run_chunks(n, chunk, work, threads, bar)

        try:
            scale_chain_inplace(arr, v.steps, bounds=v.bounds or UNKNOWN, run_chunks=chunks)
        finally:
            bar.close()
        v.arr, v.steps, v.bounds = arr, [], None
        return v

    def commit(
        self, op: CommitOp, v: Any, image: np.ndarray, outputs: dict[str, np.ndarray],
        later_reads: list[tuple[int, int]],
    ) -> None:  # fmt: skip
        t = self.tensor_of(op.dest, op)
        if isinstance(v, _NoValue) and isinstance(v.op, ContractOuterOp):
            self.leave_out(op, t, v)
            outputs.pop(t.name, None)  # an earlier commit's values are overwritten
            return
        if isinstance(v, _NoValue):
            progs = sorted(set(v.programs), key=self.keys.index)
            cmd = ", ".join(repr(p) for p in progs)
            hint = (
                f"; run the Fetch Unit programs that feed it ({cmd}) with `fetchc sim` and apply it yourself"
                if cmd else ""
            )  # fmt: skip
            raise DiagnosticError(
                op_error(
                    op,
                    f"commits a value that depends on '{v.op.name}' ({loc_text(v.op)}), so fetchc run cannot "
                    f"compute tensor '{t.name}': {v.why}{hint}",
                    [(v.op, f"'{v.op.name}' is here")],
                )
            )
        s = self.materialise(v)
        assert s.arr is not None
        for tr in s.transposes:
            _warn_transpose(tr, t.name)
        arr = rngd_ops.committed(s.arr, tuple(t.shape), (self.slices,))
        if not t.scratch:
            outputs[t.name] = self.assemble(op, t, arr)
        # Its bytes are known again (those of a tensor aliasing it stay unknown: its layout may leave gaps).
        self.unknown_bytes = [u for u in self.unknown_bytes if u[2] != t.name]
        if t.name in self.left_out:
            self.left_out.remove(t.name)
        spec = tensor_spec(t)
        blo, bhi = spec.byte_range()
        lo, hi = t.dm_base + blo, t.dm_base + bhi
        if any(a < hi and lo < b for a, b in later_reads):
            for p in list(self.pending):  # earlier programs read the image as it was before this commit
                assert p.pending is not None  # a pending stream has its program's index
                a, b = _program_bytes(self.sb.programs[p.pending])
                if a < hi and lo < b:
                    self.force(p)
            place_slices(image, spec, arr)

    def leave_out(self, op: CommitOp, t: ManifestTensor, v: _NoValue) -> None:
        """A commit of a value that depends on ``rngd.contract_outer``
        (ir.md §5, hardware.md §2.6): the tensor is left out of the results,
        with a :class:`~fetchc.diagnostics.DiagnosticWarning` at the commit
        naming it and the programs to run with ``fetchc sim`` (a note at the
        contraction); the DM bytes it would write become unknown, so a later
        program reading them depends on the contraction too
        (:meth:`program`).  Listed in :attr:`left_out`."""
        import warnings

        spec = tensor_spec(t)
        blo, bhi = spec.byte_range()
        self.unknown_bytes.append((t.dm_base + blo, t.dm_base + bhi, t.name, v))
        if t.scratch:
            return
        self.left_out.append(t.name)
        progs = ", ".join(repr(p) for p in sorted(set(v.programs), key=self.keys.index))
        via = "".join(f" through tensor '{name}' (read back by program '{p}')" for name, p in v.via)
        notes = [(v.op, f"'{v.op.name}' is here")]
        warnings.warn(DiagnosticWarning(op_error(
            op, f"commits tensor '{t.name}', whose value depends on '{v.op.name}'{via}: fetchc run leaves it out "
            f"of its results, since {v.why}; run the Fetch Unit programs that feed it ({progs}) with `fetchc sim` "
            "and apply the contraction yourself",
            notes, severity="warning",
        )), stacklevel=2)  # fmt: skip

    def assemble(self, op: CommitOp, t: ManifestTensor, arr: np.ndarray) -> np.ndarray:
        """The whole committed tensor from every slice's part ``arr``
        (``(slices,) + t.shape``; ir.md §2a): joined along ``t.slice_dim``,
        or, replicated, slice 0's part after checking that every slice wrote
        the same bits (else a located error naming the tensor)."""
        if t.slice_dim is not None:
            return np.moveaxis(arr, 0, t.slice_dim).reshape(given_spec(t, self.slices).shape)
        if self.slices > 1 and arr.size:
            u = arr.view(f"u{arr.dtype.itemsize}")
            differ = u[1:] != u[:1]
            if differ.any():
                s, *idx = (int(i) for i in np.unravel_index(int(np.flatnonzero(differ)[0]), differ.shape))
                raise DiagnosticError(
                    op_error(op, f"commits tensor '{t.name}', which has no rngd.slice_dim (every slice holds the "
                             f"same values), but slice {s + 1} writes element {tuple(idx)} differently from slice 0 "
                             f"(of {self.slices} slices): give it an rngd.slice_dim to assemble the slices' parts, "
                             "or make every slice write the same values")
                )  # fmt: skip
        return arr[0]


def _check_ranks(kernel: Kernel, lead: int = 1) -> None:
    """Raise :class:`RunError` when an array ``fetchc run`` (or ``sim
    --arg``) would make for ``kernel`` has more dimensions than numpy allows
    (:data:`fetchc.golden.sim.MAX_DIMS`, 64): a tensor or a program's stream,
    each with ``lead`` leading slice axes (``run`` keeps one even for one
    slice)."""
    axis = " and a slice axis" if lead else ""
    shapes = [(f"tensor {t.name!r}", t.shape) for t in kernel.tensors]
    shapes += [(f"the stream of program {kp.index}", kp.shape) for kp in kernel.programs]
    for what, shape in shapes:
        if len(shape) + lead > sim.MAX_DIMS:
            raise RunError(
                f"{what} of @{kernel.name} has rank {len(shape)}: as a numpy array{axis} it would need "
                f"{len(shape) + lead} dimensions, and numpy allows at most {sim.MAX_DIMS}"
            )


def _warn_transpose(op: Operation, tensor: str) -> None:
    """The ``rngd.transpose`` op ``op`` fed tensor ``tensor``: warn
    (:class:`~fetchc.diagnostics.DiagnosticWarning`, at the op) that ``run``
    computed it as a row-major reshape, since the IR fixes no permutation
    (ir.md §2)."""
    import warnings

    warnings.warn(DiagnosticWarning(op_error(
        op, f"has no specified permutation: fetchc run computes it as a row-major reshape (the elements keep their "
        f"order, only the shape changes), so tensor '{tensor}' may differ from what the Transpose Engine writes",
        severity="warning",
    )), stacklevel=2)  # fmt: skip


def _program_bytes(prog: Program) -> tuple[int, int]:
    """The DM bytes ``[lo, hi)`` a program's loop nest reaches."""
    lo_e = sum(min(0, s * (n - 1)) for n, s in zip(prog.limits, prog.strides, strict=False))
    hi_e = sum(max(0, s * (n - 1)) for n, s in zip(prog.limits, prog.strides, strict=False))
    if prog.in_dtype.bits == 4:
        return prog.base + lo_e // 2, prog.base + hi_e // 2 + 1
    size = prog.in_dtype.bits // 8
    return prog.base + lo_e * size, prog.base + hi_e * size + size


def output_magnitudes(prog: Program, tables: Sequence[Table]) -> Magnitudes:
    """What an ``f32`` program output may hold (:class:`Magnitudes`): exact
    for 4-/8-bit inputs (the stage chain tabulated over all 256 key bytes,
    through the stored table); for ``bf16 → f32`` flushed values (hardware.md
    §2.2a: no subnormal); anything for an ``f32`` read without stage."""
    plan = engine.plan_program(prog, tables, str(prog.name))
    if plan.in_t.bits <= 8:
        lut = engine.byte_lut(plan)
        if lut is not None and lut.dtype == np.float32:
            return magnitudes_of(lut)
        return UNKNOWN
    if plan.cast is not None:
        return Magnitudes(2.0**-126)
    return UNKNOWN


# --------------------------------------------------------------------------
# Entry points
# --------------------------------------------------------------------------


def _choose(sb: SeqBin, module: ModuleOp, entry: str | None) -> tuple[Kernel, func.FuncOp, dict[ProgramOp, int]]:
    assert sb.manifest is not None
    program_ops = [op for op in module.walk() if isinstance(op, ProgramOp)]
    if len(program_ops) != len(sb.programs) or any(
        op.program_name.data != p.name for op, p in zip(program_ops, sb.programs, strict=False)
    ):  # pragma: no cover - emit writes exactly these records
        raise RunError("internal error: the seq.bin programs do not match the compiled IR")
    kernels = list(sb.manifest.kernels)
    names = [k.name for k in kernels]
    listing = ", ".join("@" + n for n in names) or "none"
    if not kernels:
        raise RunError("the input has no kernel (no func.func with a fetch.fetch), so there is nothing to run")
    if entry is None:
        if len(kernels) > 1:
            raise RunError(f"the input holds {len(kernels)} kernels ({listing}): choose one with --entry (entry=)")
        kernel = kernels[0]
    else:
        want = entry[1:] if entry.startswith("@") else entry
        found = [k for k in kernels if k.name == want]
        if not found:
            fns = [f.sym_name.data for f in module.walk() if isinstance(f, func.FuncOp)]
            extra = f" (@{want} has no fetch.fetch, so it is not a kernel)" if want in fns else ""
            raise RunError(f"no kernel named @{want}{extra}; the input's kernels are: {listing}")
        if len(found) > 1:
            raise RunError(f"{len(found)} kernels are named @{want} (functions of nested modules); run one per file")
        kernel = found[0]
    first = program_ops[kernel.programs[0].index]
    fn = first.parent_op()
    while fn is not None and not isinstance(fn, func.FuncOp):
        fn = fn.parent_op()
    assert isinstance(fn, func.FuncOp)
    return kernel, fn, {op: i for i, op in enumerate(program_ops)}


def run_seqbin(
    seq_bin: bytes,
    module: ModuleOp,
    entry: str | None,
    values: Mapping[str, Any],
    *,
    threads: int | None = None,
    progress: bool | None = None,
    typed: bool = False,
    left_out: list[str] | None = None,
) -> dict[str, np.ndarray]:
    """Run kernel ``entry`` (module docstring, steps 2-7) given the emitted
    ``seq.bin`` bytes and the residual module they were emitted from.
    ``values``: ``{name: array or scalar}``.  Returns ``{tensor name:
    array}`` in the ``fetchc sim`` encoding (raw bits for ``bf16`` and the
    8-bit floats, as the command line writes them), or with ``typed`` (the
    Python API) those as ``ml_dtypes`` arrays viewing the same bits
    (:func:`fetchc.target.encoding.typed_view`).  A value given for a kernel
    argument that is not an input warns
    (:class:`~fetchc.diagnostics.DiagnosticWarning`).  Raises
    :class:`InputError`, :class:`RunError`,
    :class:`~fetchc.diagnostics.DiagnosticError` (ops ``run`` cannot
    execute), :class:`fetchc.golden.sim.SimError`.

    A committed tensor whose value depends on ``rngd.contract_outer``
    (directly, or through DM bytes a commit of such a value wrote) is not
    computed (ir.md §5, hardware.md §2.6): it is missing from the result,
    a :class:`~fetchc.diagnostics.DiagnosticWarning` at its commit names it
    and the programs to run with ``fetchc sim``, and its name is appended to
    ``left_out`` when given."""
    from fetchc.seqbin import read
    from fetchc.target.encoding import typed_view

    sb = read(seq_bin)
    kernel, fn, program_ops = _choose(sb, module, entry)
    runner = _Runner(sb, kernel, fn, program_ops, threads, progress)
    outputs = runner.run(values)
    if left_out is not None:
        left_out.extend(runner.left_out)
    if typed:
        dtypes = {t.name: t.dtype for t in kernel.tensors}
        outputs = {name: typed_view(arr, dtypes[name]) for name, arr in outputs.items()}
    return outputs

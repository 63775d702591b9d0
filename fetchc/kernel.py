"""What a kernel is (ir.md §2a): the names the placement pass, the MANIFEST
and ``fetchc run`` share.

* A **kernel** is a ``func.func`` with at least one Fetch Unit program.
* Its **tensors** are its memref arguments in order, named by their SSA names
  (``%w`` → ``w``), else ``arg<i>`` (:func:`tensor_name`); its **scalars** its
  ``f32`` arguments.
* A tensor's DM byte address is its argument attribute ``rngd.dm_base``
  (:data:`DM_BASE_ATTR`), which ``fetch-place-dm`` sets.
* It runs on ``rngd.slices = S`` slices (:data:`SLICES_ATTR`, a function
  attribute, default 1, 1 to 512; :func:`kernel_slices`): every slice runs
  the same programs on its own DM and the memref types are one slice's part.
  A memref argument with ``rngd.slice_dim = d`` (:data:`SLICE_DIM_ATTR`;
  :func:`slice_dim`) is split over the slices along ``d``; without it the
  tensor is replicated.  :func:`slice_errors` checks both attributes.
* Its **scratch buffers** (``rngd.scratch`` ops in its body, the compiler's
  own tensors) come after its arguments, named ``scratch0``, ``scratch1``,
  ... in program order (:func:`scratch_names`); their address is the op's
  ``dm_base`` property.
"""

from __future__ import annotations

from xdsl.dialects.builtin import DictionaryAttr, IntegerAttr, MemRefType
from xdsl.dialects.func import FuncOp
from xdsl.ir import Attribute, BlockArgument, Operation

__all__ = [
    "DM_BASE_ATTR",
    "SCRATCH_OP",
    "SLICES_ATTR",
    "SLICE_DIM_ATTR",
    "arg_attribute",
    "kernel_slices",
    "scratch_names",
    "slice_dim",
    "slice_errors",
    "spelled",
    "tensor_name",
]

DM_BASE_ATTR = "rngd.dm_base"
"""The argument attribute holding a tensor's DM byte address (ir.md §2a)."""


SLICES_ATTR = "rngd.slices"
"""The function attribute: how many slices the kernel runs on (ir.md §2a)."""

SLICE_DIM_ATTR = "rngd.slice_dim"
"""The argument attribute: the dimension a tensor is split along over the
slices (ir.md §2a)."""

SCRATCH_OP = "rngd.scratch"
"""The op that defines a scratch buffer."""


def tensor_name(arg: BlockArgument) -> str:
    """The tensor name of a kernel argument: its SSA name (``%w`` → ``w``),
    else ``arg<i>`` with ``i`` its argument index."""
    return arg.name_hint or f"arg{arg.index}"


def spelled(arg: BlockArgument) -> str:
    """An argument as diagnostics name it: ``%w``, else ``argument 2``."""
    return f"%{arg.name_hint}" if arg.name_hint else f"argument {arg.index}"


def arg_attribute(func: FuncOp, arg: BlockArgument, name: str) -> Attribute | None:
    """The argument attribute ``name`` of ``func``'s argument ``arg``, or None."""
    attrs = func.arg_attrs.data[arg.index] if func.arg_attrs is not None else None
    return attrs.data.get(name) if isinstance(attrs, DictionaryAttr) else None


def scratch_names(func: FuncOp) -> dict[Operation, str]:
    """The MANIFEST name of each ``rngd.scratch`` directly in ``func``'s entry
    block, in program order: ``scratch<k>`` with ``k`` counting from 0,
    skipping a name that an argument of ``func`` already has (``%scratch0``)."""
    if not func.body.blocks:
        return {}
    entry = func.body.blocks.first
    assert entry is not None
    taken = {tensor_name(a) for a in entry.args}
    out: dict[Operation, str] = {}
    k = 0
    for op in entry.ops:
        if op.name != SCRATCH_OP:
            continue
        while f"scratch{k}" in taken:
            k += 1
        out[op] = f"scratch{k}"
        k += 1
    return out


def kernel_slices(func: FuncOp) -> int:
    """The kernel's ``rngd.slices`` (1 when absent or not an integer: the
    verifier reports a bad one, :func:`slice_errors`)."""
    value = func.attributes.get(SLICES_ATTR)
    return value.value.data if isinstance(value, IntegerAttr) else 1


def slice_dim(func: FuncOp, arg: BlockArgument) -> int | None:
    """The ``rngd.slice_dim`` of ``arg``, or None when it is replicated."""
    value = arg_attribute(func, arg, SLICE_DIM_ATTR)
    return value.value.data if isinstance(value, IntegerAttr) else None


def slice_errors(func: FuncOp) -> list[str]:
    """What is wrong with ``func``'s ``rngd.slices`` and ``rngd.slice_dim``
    attributes (ir.md §2a), one message each (reported at the function):
    ``rngd.slices`` not an integer from 1 to ``MAX_SLICES``; a
    ``rngd.slice_dim`` that is not an integer, on a function without
    ``rngd.slices``, on an argument that is not a memref, or out of range
    for the memref's rank."""
    from fetchc.target import MAX_SLICES, SLICES_PER_CLUSTER

    out: list[str] = []
    value = func.attributes.get(SLICES_ATTR)
    if value is not None and not (isinstance(value, IntegerAttr) and 1 <= value.value.data <= MAX_SLICES):
        shown = value.value.data if isinstance(value, IntegerAttr) else value
        out.append(
            f"{SLICES_ATTR} = {shown} is not a number of slices from 1 to {MAX_SLICES} (a chip has 2 clusters "
            f"of {SLICES_PER_CLUSTER} slices; hardware.md §1a); write e.g. {{{SLICES_ATTR} = 256 : i64}}"
        )
    if not func.body.blocks:
        return out
    entry = func.body.blocks.first
    assert entry is not None
    for arg in entry.args:
        d = arg_attribute(func, arg, SLICE_DIM_ATTR)
        if d is None:
            continue
        who = spelled(arg)
        if not isinstance(d, IntegerAttr):
            out.append(f"{SLICE_DIM_ATTR} of {who} must be an integer dimension (e.g. {{{SLICE_DIM_ATTR} = 0 : i64}}), not {d}")
        elif value is None:
            out.append(
                f"{SLICE_DIM_ATTR} on {who}, but @{func.sym_name.data} has no {SLICES_ATTR}: say how many slices "
                f"the kernel runs on with {{{SLICES_ATTR} = S : i64}} on the function, or drop the {SLICE_DIM_ATTR}"
            )
        elif not isinstance(arg.type, MemRefType):
            out.append(f"{SLICE_DIM_ATTR} on {who}, which is {arg.type}, not a memref: only tensors are split over slices")
        elif not 0 <= d.value.data < len(arg.type.get_shape()):
            rank = len(arg.type.get_shape())
            dims = f"dimensions 0 to {rank - 1}" if rank else "no dimension"
            out.append(
                f"{SLICE_DIM_ATTR} = {d.value.data} of {who} is out of range for {arg.type} (rank {rank}: {dims})"
            )
    return out

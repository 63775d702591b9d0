"""What a kernel is (ir.md §2a): the names the placement pass, the MANIFEST
and ``fetchc run`` share.

* A **kernel** is a ``func.func`` with at least one Fetch Unit program.
* Its **tensors** are its memref arguments in order, named by their SSA names
  (``%w`` → ``w``), else ``arg<i>`` (:func:`tensor_name`); its **scalars** its
  ``f32`` arguments.
* A tensor's DM byte address is its argument attribute ``rngd.dm_base``
  (:data:`DM_BASE_ATTR`), which ``fetch-place-dm`` sets.
* Its **scratch buffers** (``rngd.scratch`` ops in its body, the compiler's
  own tensors) come after its arguments, named ``scratch0``, ``scratch1``,
  ... in program order (:func:`scratch_names`); their address is the op's
  ``dm_base`` property.
"""

from __future__ import annotations

from xdsl.dialects.builtin import DictionaryAttr, IntegerAttr
from xdsl.dialects.func import FuncOp
from xdsl.ir import Attribute, BlockArgument, Operation

__all__ = ["DM_BASE_ATTR", "SCRATCH_OP", "tensor_name", "spelled", "arg_attribute", "scratch_names"]

DM_BASE_ATTR = "rngd.dm_base"
"""The argument attribute holding a tensor's DM byte address (ir.md §2a)."""


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

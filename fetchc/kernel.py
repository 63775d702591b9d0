"""What a kernel is (ir.md §2a): the names the placement pass, the MANIFEST
and ``fetchc run`` share.

* A **kernel** is a ``func.func`` with at least one Fetch Unit program.
* Its **tensors** are its memref arguments in order, named by their SSA names
  (``%w`` → ``w``), else ``arg<i>`` (:func:`tensor_name`); its **scalars** its
  ``f32`` arguments.
* A tensor's DM byte address is its argument attribute ``rngd.dm_base``
  (:data:`DM_BASE_ATTR`), which ``fetch-place-dm`` sets.
"""

from __future__ import annotations

from xdsl.dialects.builtin import DictionaryAttr, IntegerAttr
from xdsl.dialects.func import FuncOp
from xdsl.ir import Attribute, BlockArgument

__all__ = ["DM_BASE_ATTR", "tensor_name", "spelled", "arg_attribute"]

DM_BASE_ATTR = "rngd.dm_base"
"""The argument attribute holding a tensor's DM byte address (ir.md §2a)."""


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


def dm_base(func: FuncOp, arg: BlockArgument) -> int | None:
    """The integer ``rngd.dm_base`` of ``arg``, or None when absent or not an
    integer."""
    value = arg_attribute(func, arg, DM_BASE_ATTR)
    return value.value.data if isinstance(value, IntegerAttr) else None

"""What a kernel is (ir.md §2a): the names the placement pass, the MANIFEST
and ``fetchc run`` share.

* A **kernel** is a ``func.func`` with at least one Fetch Unit program.
* Its **tensors** are its memref arguments in order, its **scalars** its
  ``f32`` arguments.  Each is named by its argument attribute ``rngd.name``
  (:data:`NAME_ATTR`; it survives upstream MLIR tools, which rename SSA
  values), else its SSA name (``%w`` → ``w``), else ``arg<i>``
  (:func:`tensor_name`).  The names of one kernel differ
  (:func:`name_errors`); :func:`write_names` writes ``rngd.name`` on every
  tensor and scalar for ``--emit=mlir`` / ``--emit=seq``.
* A tensor's DM byte address is its argument attribute ``rngd.dm_base``
  (:data:`DM_BASE_ATTR`), which ``fetch-place-dm`` sets.
* It runs on ``rngd.slices = S`` slices (:data:`SLICES_ATTR`, a function
  attribute, default 1, 1 to 512; :func:`kernel_slices`): every slice runs
  the same programs on its own DM and the memref types are one slice's part.
  A memref argument with ``rngd.slice_dim = d`` (:data:`SLICE_DIM_ATTR`;
  :func:`slice_dim`) is split over the slices along ``d``; without it the
  tensor is replicated.  :func:`slice_errors` checks both attributes.
* Its programs are named ``path/index`` (:func:`program_path`: the
  function's name, after the names of enclosing named modules), and every
  name that leaves fetchc, program or tensor, follows one rule
  (:mod:`fetchc.names`: :func:`name_errors`, :func:`program_path_error`).
* Its **scratch buffers** (``rngd.scratch`` ops in its body, the compiler's
  own tensors) come after its arguments, named ``scratch0``, ``scratch1``,
  ... in program order (:func:`scratch_names`); their address is the op's
  ``dm_base`` property.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    Float32Type,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
    StringAttr,
)
from xdsl.dialects.func import FuncOp
from xdsl.ir import Attribute, Block, BlockArgument, Operation

from fetchc.names import NAMES_THAT_WORK, key_problem

__all__ = [
    "DM_BASE_ATTR",
    "NAME_ATTR",
    "SCRATCH_OP",
    "SLICES_ATTR",
    "SLICE_DIM_ATTR",
    "arg_attribute",
    "int_value",
    "is_kernel",
    "kernel_slices",
    "kernels",
    "name_errors",
    "named_args",
    "program_path",
    "program_path_error",
    "program_name",
    "scratch_name_sequence",
    "scratch_names",
    "slice_dim",
    "slice_errors",
    "spelled",
    "tensor_name",
    "tensor_names",
    "write_names",
]

DM_BASE_ATTR = "rngd.dm_base"
"""The argument attribute holding a tensor's DM byte address (ir.md §2a)."""

NAME_ATTR = "rngd.name"
"""The argument attribute holding a tensor's (or scalar's) name (ir.md §2a)."""

PROGRAM_OPS = ("fetch.fetch", "fetch_seq.program")
"""The ops that make a function a kernel: a Fetch Unit program before and
after ``fetch-to-seq``."""


SLICES_ATTR = "rngd.slices"
"""The function attribute: how many slices the kernel runs on (ir.md §2a)."""

SLICE_DIM_ATTR = "rngd.slice_dim"
"""The argument attribute: the dimension a tensor is split along over the
slices (ir.md §2a)."""

SCRATCH_OP = "rngd.scratch"
"""The op that defines a scratch buffer."""


def int_value(attr: Attribute | None) -> int | None:
    """The integer an ``rngd.*`` integer attribute (``rngd.dm_base``,
    ``rngd.slices``, ``rngd.slice_dim``) holds: an ``IntegerAttr`` of any
    integer type but ``i1``, whose ``true`` / ``false`` are booleans, not
    numbers (xDSL holds ``true`` as ``-1``); ``None`` for anything else.  A
    message about such an attribute shows it as written, ``str(attr)``
    (``true``, ``"x"``), never the number xDSL keeps."""
    if not isinstance(attr, IntegerAttr):
        return None
    if isinstance(attr.type, IntegerType) and attr.type.width.data == 1:
        return None
    return attr.value.data


def _function_of(arg: BlockArgument) -> FuncOp | None:
    """The ``func.func`` whose argument ``arg`` is (an argument of its entry
    block), else None."""
    block = arg.owner
    func = block.parent_op() if isinstance(block, Block) else None
    if isinstance(func, FuncOp) and func.body.blocks and func.body.blocks.first is block:
        return func
    return None


def tensor_name(arg: BlockArgument) -> str:
    """The name of a kernel argument (ir.md §2a): its argument attribute
    ``rngd.name`` when that is a non-empty string, else its SSA name
    (``%w`` → ``w``), else ``arg<i>`` with ``i`` its argument index.  A
    malformed ``rngd.name`` is reported by :func:`name_errors`."""
    func = _function_of(arg)
    return _name(arg, arg_attribute(func, arg, NAME_ATTR) if func is not None else None)


def tensor_names(func: FuncOp) -> list[str]:
    """:func:`tensor_name` of every argument of ``func``'s entry block, in
    order, reading the argument attributes once (for passes and the
    emitter, which need them all)."""
    if not func.body.blocks:
        return []
    entry = func.body.blocks.first
    assert entry is not None
    attrs = func.arg_attrs.data if func.arg_attrs is not None else None
    out = []
    for arg in entry.args:
        d = attrs[arg.index] if attrs is not None else None
        out.append(_name(arg, d.data.get(NAME_ATTR) if isinstance(d, DictionaryAttr) else None))
    return out


def _name(arg: BlockArgument, given: Attribute | None) -> str:
    if isinstance(given, StringAttr) and given.data:
        return given.data
    return arg.name_hint or f"arg{arg.index}"


def spelled(arg: BlockArgument) -> str:
    """An argument as diagnostics name it: ``%w``, else ``argument 2``;
    followed by its ``rngd.name`` when that differs (``%arg0 ("w")``, as
    after ``mlir-opt``, which renames SSA values)."""
    text = f"%{arg.name_hint}" if arg.name_hint else f"argument {arg.index}"
    name = tensor_name(arg)
    return text if name == (arg.name_hint or f"arg{arg.index}") else f'{text} ("{name}")'


def program_path(func: FuncOp, root: Operation | None = None) -> str:
    """What names ``func``'s programs (``path/index``, seqbin.md word 1): its
    name, after the symbol names of the named ``builtin.module`` ops it is
    nested in below ``root`` (``m/function``)."""
    parts = [func.sym_name.data]
    parent = func.parent_op()
    while isinstance(parent, ModuleOp) and parent is not root:
        if parent.sym_name is not None:
            parts.insert(0, parent.sym_name.data)
        parent = parent.parent_op()
    return "/".join(parts)


def program_path_error(func: FuncOp, root: Operation | None = None) -> str | None:
    """The error for a kernel whose programs' names (:func:`program_path`)
    could not leave fetchc (:func:`fetchc.names.key_problem`: ``sim -o``
    keys its ``.npz`` by them), or ``None``."""
    path = program_path(func, root)
    why = key_problem(path + "/0")
    if why is None:
        return None
    whose = "the function" if path == func.sym_name.data else "the function or an enclosing builtin.module"
    return (
        f'cannot name its programs "{path}/0", ...: a program name is a seq.bin string, a --program NAME and a '
        f"key of the .npz of fetchc sim -o, and this one {why}; rename {whose} ({NAMES_THAT_WORK})"
    )


def is_kernel(func: FuncOp) -> bool:
    """A function with at least one Fetch Unit program (``fetch.fetch``, or
    ``fetch_seq.program`` after ``fetch-to-seq``) anywhere in its body."""
    stack: list[Operation] = [func]
    while stack:
        op = stack.pop()
        if op.name in PROGRAM_OPS:
            return True
        for region in op.regions:
            for block in region.blocks:
                stack.extend(iter(block.ops))  # iter(): no len(), which walks the block
    return False


def kernels(root: Operation) -> Iterator[FuncOp]:
    """Every kernel (:func:`is_kernel`) nested in ``root``, in walk order."""
    stack: list[Operation] = [root]
    while stack:
        op = stack.pop()
        if isinstance(op, FuncOp):
            if is_kernel(op):
                yield op
            continue
        for region in reversed(op.regions):
            for block in reversed(region.blocks):
                stack.extend(reversed(block.ops))


def named_args(func: FuncOp) -> list[BlockArgument]:
    """The arguments of ``func`` that have names: its tensors (memrefs) and
    scalars (``f32``), in order."""
    if not func.body.blocks:
        return []
    entry = func.body.blocks.first
    assert entry is not None
    return [a for a in entry.args if isinstance(a.type, (MemRefType, Float32Type))]


def name_errors(func: FuncOp) -> list[tuple[BlockArgument, str, BlockArgument | None]]:
    """ir.md §2a: ``(argument, message, first)``, in argument order, for each
    argument of the kernel ``func`` whose ``rngd.name`` is not a non-empty
    string, for each tensor or scalar whose name cannot leave fetchc
    (:func:`fetchc.names.key_problem`: ``"."``, ``"../w"``), and for each
    whose name an earlier one already has (``first``: that earlier argument,
    for a note).  Empty when the names are fine."""
    out: list[tuple[BlockArgument, str, BlockArgument | None]] = []
    named = set(named_args(func))
    names = tensor_names(func)
    seen: dict[str, BlockArgument] = {}
    entry = func.body.blocks.first if func.body.blocks else None
    for arg in entry.args if entry is not None else ():
        ssa = f"%{arg.name_hint}" if arg.name_hint else f"argument {arg.index}"
        given = arg_attribute(func, arg, NAME_ATTR)
        if given is not None and not (isinstance(given, StringAttr) and given.data):
            what = "is empty" if isinstance(given, StringAttr) else f"is {given}, not a string"
            out.append(
                (
                    arg,
                    f"{NAME_ATTR} of {ssa} {what}: a tensor's name is a non-empty string "
                    f'({NAME_ATTR} = "w"); drop the attribute to name it by its SSA name',
                    None,
                )
            )
            continue
        if arg not in named:
            continue
        name = names[arg.index]
        why = key_problem(name)
        if why is not None:
            how = f"by its {NAME_ATTR}" if isinstance(given, StringAttr) else "by its SSA name"
            out.append(
                (
                    arg,
                    f'{ssa} is named "{name}" {how}: a tensor\'s name is a --arg NAME and a key of the .npz of '
                    f"fetchc run -o, and this one {why}; rename it (its {NAME_ATTR} or its SSA name; "
                    f"{NAMES_THAT_WORK})",
                    None,
                )
            )
            continue
        first = seen.setdefault(name, arg)
        if first is not arg:
            how = f"by its {NAME_ATTR}" if isinstance(given, StringAttr) else "by its SSA name" if arg.name_hint else ""
            if how == "by its SSA name" and first.name_hint == arg.name_hint:
                # %w_1 and %w_2 are both %w once parsed (MLIR drops a `_<digits>` suffix)
                ssa = f"argument {arg.index} (%{arg.name_hint}_<digits>)"
                how += ' (a "_<digits>" suffix is not part of an SSA name)'
            out.append(
                (
                    arg,
                    f'{ssa} is named "{name}"{" " + how if how else ""}, like {spelled(first)}: the tensors '
                    f"and scalars of a kernel need different names; rename one (its {NAME_ATTR} or its SSA name)",
                    first,
                )
            )
    return out


def write_names(root: Operation) -> None:
    """Write ``rngd.name`` on every tensor and scalar argument of every
    kernel nested in ``root`` (ir.md §2a: what ``--emit=mlir`` and
    ``--emit=seq`` print, so that the names survive ``mlir-opt``).  Each
    argument's attribute dictionary is rebuilt with its keys sorted, as MLIR
    prints them; the names themselves do not change."""
    for func in kernels(root):
        named = set(named_args(func))
        if not named:
            continue
        entry = func.body.blocks.first
        assert entry is not None
        old = list(func.arg_attrs.data) if func.arg_attrs is not None else [DictionaryAttr({})] * len(entry.args)
        names = tensor_names(func)
        new = []
        for arg, attrs in zip(entry.args, old, strict=False):
            data = dict(attrs.data) if isinstance(attrs, DictionaryAttr) else {}
            if arg in named:
                data[NAME_ATTR] = StringAttr(names[arg.index])
            new.append(DictionaryAttr(dict(sorted(data.items()))))
        func.arg_attrs = ArrayAttr(new)


def arg_attribute(func: FuncOp, arg: BlockArgument, name: str) -> Attribute | None:
    """The argument attribute ``name`` of ``func``'s argument ``arg``, or None."""
    attrs = func.arg_attrs.data[arg.index] if func.arg_attrs is not None else None
    return attrs.data.get(name) if isinstance(attrs, DictionaryAttr) else None


def scratch_names(func: FuncOp, arg_names: list[str] | None = None) -> dict[Operation, str]:
    """The MANIFEST name of each ``rngd.scratch`` directly in ``func``'s entry
    block, in program order: ``scratch<k>`` with ``k`` counting from 0,
    skipping a name that an argument of ``func`` already has (``%scratch0``).
    ``arg_names``: :func:`tensor_names` of ``func`` when the caller has them."""
    if not func.body.blocks:
        return {}
    entry = func.body.blocks.first
    assert entry is not None
    fresh: Iterator[str] | None = None
    out: dict[Operation, str] = {}
    for op in entry.ops:
        if op.name != SCRATCH_OP:
            continue
        if fresh is None:
            fresh = scratch_name_sequence(tensor_names(func) if arg_names is None else arg_names)
        out[op] = next(fresh)
    return out


def scratch_name_sequence(arg_names: Iterable[str]) -> Iterator[str]:
    """The names of a kernel's scratch buffers in program order, given the
    names of its arguments (:func:`tensor_names`): ``scratch0``,
    ``scratch1``, ... without the names an argument has.  The one rule
    :func:`scratch_names` and the kernel compile cache's stamping
    (:mod:`fetchc.compile_cache`) both follow."""
    taken = set(arg_names)
    k = 0
    while True:
        if f"scratch{k}" not in taken:
            yield f"scratch{k}"
        k += 1


def program_name(kernel: str, index: int) -> str:
    """The name of the ``index``-th Fetch Unit program (from 0, in program
    order) of the kernel named ``kernel`` (ir.md §2a, the ``seq.bin``
    PROGRAMS ``name``): ``kernel/index``.  ``kernel`` is the function's
    name, after the symbols of the named ``builtin.module``s it is nested
    in (``m/k``).  ``fetch-to-seq`` names programs with it, and the kernel
    compile cache stamps them with it."""
    return f"{kernel}/{index}"


def kernel_slices(func: FuncOp) -> int:
    """The kernel's ``rngd.slices`` (1 when absent or not an integer: the
    verifier reports a bad one, :func:`slice_errors`)."""
    value = int_value(func.attributes.get(SLICES_ATTR))
    return 1 if value is None else value


def slice_dim(func: FuncOp, arg: BlockArgument) -> int | None:
    """The ``rngd.slice_dim`` of ``arg``, or None when it is replicated."""
    return int_value(arg_attribute(func, arg, SLICE_DIM_ATTR))


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
    slices = int_value(value)
    if value is not None and not (slices is not None and 1 <= slices <= MAX_SLICES):
        shown = value if slices is None else slices  # as written: true, "4", 4.0 : f32
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
        dim = int_value(d)
        if dim is None:
            out.append(
                f"{SLICE_DIM_ATTR} of {who} must be an integer dimension (e.g. {{{SLICE_DIM_ATTR} = 0 : i64}}), not {d}"
            )
        elif value is None:
            out.append(
                f"{SLICE_DIM_ATTR} on {who}, but @{func.sym_name.data} has no {SLICES_ATTR}: say how many slices "
                f"the kernel runs on with {{{SLICES_ATTR} = S : i64}} on the function, or drop the {SLICE_DIM_ATTR}"
            )
        elif not isinstance(arg.type, MemRefType):
            out.append(
                f"{SLICE_DIM_ATTR} on {who}, which is {arg.type}, not a memref: only tensors are split over slices"
            )
        elif not 0 <= dim < len(arg.type.get_shape()):
            rank = len(arg.type.get_shape())
            dims = f"dimensions 0 to {rank - 1}" if rank else "no dimension"
            out.append(f"{SLICE_DIM_ATTR} = {dim} of {who} is out of range for {arg.type} (rank {rank}: {dims})")
    return out

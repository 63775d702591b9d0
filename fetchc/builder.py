"""Build fetchc kernels in Python: the builder API for compilers that embed
fetchc.

The builder makes ordinary xDSL ops of the ``fetch`` and ``rngd`` dialects in
a ``builtin.module`` that :func:`fetchc.compile` takes, and infers every
stream type from its input and the hardware tables, so a kernel is written
without spelling ``!fetch.stream<...>``::

    from fetchc.builder import ModuleBuilder, memref

    mb = ModuleBuilder()
    k = mb.kernel("dequant_nvfp4",
                  codes=memref([4096, 4096], "f4E2M1FN"),
                  bscale=memref([4096, 256], "f8E4M3FN"),
                  gscale="f32",
                  out=memref([4096, 4096], "f32"))
    codes, bscale, gscale, out = k.args
    k.fetch_rows(codes, packet=64).dequant(bscale, gscale).commit(out)
    module = mb.finish()            # a verified builtin.module
    result = fetchc.compile(module)

Pieces:

* :class:`ModuleBuilder` holds the module; :meth:`ModuleBuilder.kernel`
  creates a ``func.func`` (a :class:`KernelBuilder`) whose arguments are
  named (the names become SSA name hints, hence tensor names, ir.md §2a)
  and may carry a DM placement (:class:`Arg`, ``rngd.dm_base``);
  :meth:`ModuleBuilder.finish` closes every kernel and verifies the module.
* :meth:`KernelBuilder.fetch` / :meth:`KernelBuilder.fetch_rows` read a
  memref into a :class:`Stream` (optionally padded: ``pad=``, hardware.md
  §2.0); a :class:`Stream` chains the adapter stages (``mask``, ``lookup``,
  ``cast``, ``zp_sub``, ``convert``, ``dequant``) and
  feeds the ``rngd`` engine ops (``switch``, ``collect``, ``commit``,
  ``to_trf``, ``to_vrf``, ``transpose``, ``contract_outer``,
  ``block_scale``, ``tensor_scale``, ``narrow``).  Each call builds one op
  and returns the stream it produces.

**Type inference.**  Context, time and packet shape flow from the fetch
through every stage.  Element types come from :mod:`fetchc.target` and
the ops' own helpers: ``lookup()`` takes the one table keyed by the input
type (``f4E2M1FN`` has two, so it needs ``to=``), ``cast()`` the one cast
from the input type, ``zp_sub(zp)`` the widened type, ``dequant`` gives
``f32`` (or ``bf16`` with ``to="bf16"``) and infers the format from the
block-scale type, ``contract_outer`` the accumulator type of the operand
table (hardware.md §2.6), ``collect(flits=True)`` the flit form (hardware.md
§2.5), ``to_vrf`` the VRF tensor's shape, ``narrow`` the Cast Engine's
``bf16``.  When there is nothing or more than one thing to
infer, the call raises a :class:`~fetchc.diagnostics.DiagnosticError`
that says what to pass.

**Errors are the verifier's.**  Each op is verified as soon as it is built,
by the op verifiers themselves (:func:`fetchc.frontend.verify.verify_module`
on the new op, the ops whose stream it consumes, and the ``fetch.fetch``
that starts its chain, since a stage changes the read size rule 8 allows):
an illegal request raises :class:`DiagnosticError` with exactly the
diagnostic that compiling the same IR as text gives (ir.md §3), and the op
is taken out again, so the kernel stays as it was.  A stream result not yet
consumed is held by a detached placeholder use while building, so rule 6
(every stream used exactly once) is checked when the kernel is finished:
:meth:`ModuleBuilder.finish` verifies the whole module as
:func:`fetchc.compile` does.

**Numeric arguments** (sizes, shapes, offsets, strides, addresses, zero
points, slices, blocks) are integers: Python ``int`` or numpy integers
(``np.int64(64)``, the elements of an integer array); a ``scale`` is any real
number (a numpy float too).  Anything else (a ``bool``, a float where an
integer is meant, a string) raises ``TypeError`` naming the call and the
argument (``fetch: packet must be an integer (a Python or numpy int), not
float 32.0``), before any op is built; ``memref`` keeps its ``ValueError``
for a size that is not a non-negative integer.  One helper checks them all
(:func:`_number`, :func:`_numbers`); the values the hardware allows are the
verifier's to check.

**Locations.**  Every op gets a ``FileLineColLoc`` of the Python line that
asked for it (the first caller outside this module; line and 1-based
column of the call, the column on Python ≥ 3.11), so diagnostics, and the
``loc`` of each program in ``seq.bin``'s MANIFEST, point at the kernel
writer's Python code.  ``ModuleBuilder(locations=False)`` builds without
locations (``UnknownLoc``: diagnostics then name the op path, ``func @k,
op 3 'fetch.cast'``); any call takes ``loc=`` (an xDSL location attribute
or a ``(filename, line, column)`` tuple) to set one explicitly.

Spec: ir.md §1 (types), §2 (ops), §2a (placement, kernels), §3 (verifier
rules), §5 (diagnostic locations); hardware.md §2 (adapter tables).
"""

from __future__ import annotations

import inspect
import io
import linecache
import numbers
import os
import sys
import tokenize
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache
from types import FrameType
from typing import Any, cast

from xdsl.builder import Builder, ImplicitBuilder, InsertPoint
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    AffineMapAttr,
    ArrayAttr,
    DictionaryAttr,
    FileLineColLoc,
    Float32Type,
    FunctionType,
    IntAttr,
    IntegerAttr,
    LocationAttr,
    MemRefType,
    ModuleOp,
    StridedLayoutAttr,
    StringAttr,
    TypeAttribute,
    UnknownLoc,
    i64,
)
from xdsl.ir import Attribute, Block, BlockArgument, Operation, Region, SSAValue
from xdsl.ir.affine import AffineExpr, AffineMap
from xdsl.utils.exceptions import VerifyException

from fetchc import target
from fetchc.diagnostics import Diagnostic, DiagnosticError
from fetchc.dialects.fetch import CastOp, ConvertOp, DequantOp, FetchOp, MaskOp, TableLookupOp, ZpSubOp
from fetchc.dialects.rngd import (
    BlockScaleOp,
    CastEngineOp,
    CollectOp,
    CommitOp,
    ContractOuterOp,
    SwitchOp,
    TensorScaleOp,
    ToTrfOp,
    ToVrfOp,
    TransposeOp,
    TrfType,
    VrfType,
)
from fetchc.dialects.stream import StreamType
from fetchc.kernel import DM_BASE_ATTR, NAME_ATTR, SLICE_DIM_ATTR, SLICES_ATTR, tensor_name
from fetchc.target import functions
from fetchc.target.mask import Padding

__all__ = ["Arg", "KernelBuilder", "ModuleBuilder", "Padding", "Stream", "as_type", "memref", "rows_map"]

TypeLike = Attribute | str | target.ElementType
"""A type as the builder takes it: an xDSL type (``f32``,
``MemRefType(...)``), a :class:`fetchc.target.ElementType`, or MLIR text
(``"f4E2M1FN"``, ``"memref<64x32xi8>"``)."""

LocLike = Attribute | tuple[str, int, int] | None
"""An explicit location: an xDSL location attribute (``FileLineColLoc``,
``NameLoc``, ...) or ``(filename, line, column)`` (1-based)."""


# --------------------------------------------------------------------------
# Types
# --------------------------------------------------------------------------


def _shown(value: object) -> str:
    """``value`` for a message: its type and value (``float 2.0``,
    ``str '64'``, ``float32 4.0`` for a numpy scalar)."""
    text = str(value) if type(value).__module__ == "numpy" and not hasattr(value, "__len__") else repr(value)
    return f"{type(value).__name__} {text if len(text) <= 60 else text[:57] + '...'}"


def _number(
    value: object,
    what: str,
    *,
    real: bool = False,
    minimum: int | None = None,
    expected: str | None = None,
    error: type[Exception] = TypeError,
) -> Any:
    """The one check of a builder call's numeric argument ``value``, called
    ``what`` in messages (``"fetch: packet"``): an integer, a Python
    ``int`` or a numpy integer but never a ``bool`` (nor ``numpy.bool_``),
    returned as an ``int``; with ``real``, any real number (a numpy float
    too), returned as a ``float``.  Raises ``error`` (``TypeError``) naming
    ``what`` for anything else, and ``ValueError`` for an integer below
    ``minimum``."""
    if not isinstance(value, bool) and type(value).__name__ != "bool_":
        if isinstance(value, numbers.Integral):
            n = int(value)
            if minimum is not None and n < minimum:
                raise ValueError(f"{what} must be {expected or f'at least {minimum}'}, not {n}")
            return float(n) if real else n
        if real and isinstance(value, numbers.Real):
            return float(value)
    kind = expected or ("a number (a Python or numpy int or float)" if real else "an integer (a Python or numpy int)")
    raise error(f"{what} must be {kind}, not {_shown(value)}")


def _numbers(
    values: object,
    what: str,
    *,
    scalar: bool = False,
    minimum: int | None = None,
    expected: str | None = None,
    error: type[Exception] = TypeError,
) -> list[int]:
    """A sequence of integers (a list, a tuple, a 1-D numpy array...)
    checked element by element with :func:`_number`; with ``scalar``, one
    integer stands for a list of one (``time=64``).  Raises as
    :func:`_number` does, naming the sequence and the bad element."""
    if scalar and not isinstance(values, (str, bytes)) and not hasattr(values, "__iter__"):
        return [_number(values, what, minimum=minimum, expected=expected, error=error)]
    if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
        kind = "an integer or a sequence of integers" if scalar else "a sequence of integers"
        raise error(f"{what} must be {kind}, not {_shown(values)}")
    items = list(cast(Any, values))
    out = []
    for item in items:
        try:
            out.append(_number(item, what, minimum=minimum, expected=expected, error=error))
        except (TypeError, ValueError) as e:
            listed = ", ".join(str(x) if type(x).__module__ == "numpy" else repr(x) for x in items)
            raise type(e)(f"{e} in [{listed}]") from None
    return out


@lru_cache(maxsize=1)
def _context():
    from fetchc.frontend.context import make_context

    return make_context()


def as_type(t: TypeLike) -> Attribute:
    """The xDSL type ``t`` denotes.

    ``t`` is an xDSL type (returned as is), a hardware
    :class:`~fetchc.target.ElementType`, or MLIR text: a hardware type name
    (``"bf16"``) or any type xDSL parses (``"f16"``,
    ``"memref<64x32xi8>"``).  Raises ``ValueError`` for text that is not a
    type, ``TypeError`` for anything else."""
    if isinstance(t, target.ElementType):
        return target.mlir_type(t)
    if isinstance(t, str):
        if t in target.BY_NAME:
            return target.mlir_type(target.BY_NAME[t])
        from xdsl.parser import Parser
        from xdsl.utils.exceptions import ParseError

        try:
            parser = Parser(_context(), t)
            parsed = parser.parse_type()
            if parser.pos < len(t.rstrip()):
                parser.raise_error("unexpected text after the type")
        except ParseError as e:
            raise ValueError(f"{t!r} is not an MLIR type: {str(e).strip().splitlines()[-1]}") from None
        return parsed
    if isinstance(t, TypeAttribute):
        return t
    raise TypeError(f"expected a type (an xDSL type, an ElementType or MLIR text), not {type(t).__name__}")


def memref(
    shape: Sequence[int],
    element: TypeLike,
    *,
    strides: Sequence[int] | None = None,
    offset: int = 0,
) -> MemRefType:
    """``memref<shape x element>``: a DM tensor type (ir.md §1).

    ``shape`` counts elements; ``strides`` (elements, one per dim) and
    ``offset`` (elements) give a ``strided<[...], offset: N>`` layout, e.g.
    ``memref([64, 128], "bf16", strides=[1024, 1], offset=262528)`` for a
    tile of a row-major 1024-wide matrix.  Without ``strides`` the layout
    is the identity (and ``offset`` must be 0).  Raises ``ValueError`` for
    an offset without strides, a stride count that differs from the rank,
    or a size that is not a non-negative integer (a kernel's tensors have
    static shapes: ir.md §1), ``TypeError`` for a stride or offset that is
    not an integer."""
    static = "non-negative integers (static shapes)"
    shape = _numbers(shape, "memref: sizes", minimum=0, expected=static, error=ValueError)
    offset = _number(offset, "memref: offset")
    elem = as_type(element)
    if strides is None:
        if offset:
            raise ValueError("memref: an offset needs strides (the identity layout has offset 0)")
        return MemRefType(elem, shape)
    strides = _numbers(strides, "memref: strides")
    if len(strides) != len(shape):
        raise ValueError(f"memref: {len(strides)} strides for a rank-{len(shape)} shape")
    return MemRefType(elem, shape, StridedLayoutAttr(strides, offset))


@dataclass(frozen=True)
class Arg:
    """A kernel argument with a DM placement or a split over slices:
    ``type`` (any :data:`TypeLike`, normally a memref); ``dm_base``, the DM
    byte address of the memref's element 0, written as the argument attribute
    ``rngd.dm_base``; ``slice_dim``, the dimension along which the tensor is
    split over the kernel's slices, written as ``rngd.slice_dim`` (ir.md
    §2a; the memref type is one slice's part; the kernel needs ``slices=``).
    Without ``dm_base`` (or without :class:`Arg`), ``fetch-place-dm`` places
    the argument; without ``slice_dim`` it is replicated on every slice.  The
    verifier and the placement pass check both when the module is
    compiled."""

    type: TypeLike
    dm_base: int | None = None
    slice_dim: int | None = None


def rows_map(rank: int, packet: int, offset: Sequence[int] | None = None) -> AffineMap:
    """The map of a "rows of packets" read of a rank-``rank`` memref:
    ``(i0, ..., i{rank-2}, p, e) -> (i0 + o0, ..., p * packet + e + o{rank-1})``,
    i.e. the leading dims are time dims, the last dim is split into packets
    of ``packet`` elements (time dim ``p``, packet dim ``e``), and
    ``offset`` (elements per memref dim, default zeros) is the origin of
    the window read.  Raises ``ValueError`` for a rank below 1, a packet
    below 1 or an offset of the wrong length, ``TypeError`` for one that is
    not an integer."""
    rank, packet = _number(rank, "rows_map: rank"), _number(packet, "rows_map: packet")
    if rank < 1 or packet < 1:
        raise ValueError(f"rows_map: needs rank >= 1 and packet >= 1, got rank {rank}, packet {packet}")
    offset = _numbers(offset, "rows_map: offset") if offset is not None else [0] * rank
    if len(offset) != rank:
        raise ValueError(f"rows_map: {len(offset)} offsets for a rank-{rank} memref")
    d = AffineExpr.dimension
    results = [d(i) + offset[i] if offset[i] else d(i) for i in range(rank - 1)]
    last = d(rank - 1) * packet + d(rank)
    results.append(last + offset[-1] if offset[-1] else last)
    return AffineMap(rank + 1, 0, tuple(results))


def _shape(x: int | Sequence[int], what: str) -> list[int]:
    return _numbers(x, what, scalar=True)


def _as_map(m: AffineMap | AffineMapAttr | Callable | str) -> AffineMap:
    if isinstance(m, AffineMap):
        return m
    if isinstance(m, AffineMapAttr):
        return m.data
    if isinstance(m, str):
        from xdsl.parser import Parser
        from xdsl.utils.exceptions import ParseError

        text = m.strip()
        if not text.startswith("affine_map<"):
            text = f"affine_map<{text}>"
        try:
            attr = Parser(_context(), text).parse_attribute()
        except ParseError as e:
            raise ValueError(f"{m!r} is not an affine map: {str(e).strip().splitlines()[-1]}") from None
        if not isinstance(attr, AffineMapAttr):
            raise ValueError(f"{m!r} is not an affine map")
        return attr.data
    if callable(m):
        return AffineMap.from_callable(m)
    raise TypeError(f"map: expected an AffineMap, its text or a callable, not {type(m).__name__}")


# --------------------------------------------------------------------------
# Locations
# --------------------------------------------------------------------------

_THIS_FILE = os.path.normcase(os.path.abspath(__file__))


def _char_column(filename: str, line: int, byte_offset: int) -> int:
    """1-based character column of the 0-based UTF-8 ``byte_offset`` in
    ``line`` of ``filename`` (Python's code positions count bytes)."""
    text = linecache.getline(filename, line)
    if not text or text.isascii():
        return byte_offset + 1
    return len(text.encode("utf-8")[:byte_offset].decode("utf-8", errors="ignore")) + 1


@lru_cache(maxsize=4096)
def _called_name(filename: str, line: int, end_line: int, col: int, end_col: int) -> tuple[int, int] | None:
    """``(line, 1-based column)`` of the called name of the call expression
    at Python code positions ``line:col`` to ``end_line:end_col`` (columns
    in UTF-8 bytes, 0-based): ``dequant`` in ``k.fetch_rows(c, 64).dequant(b)``,
    as MLIR puts an op's location at its name.  ``None`` when the source is
    not available or the expression is not ``... name(...)``."""
    lines = [linecache.getline(filename, n).encode("utf-8") for n in range(line, end_line + 1)]
    if not all(lines):
        return None
    parts = [lines[0][col:end_col]] if len(lines) == 1 else [lines[0][col:], *lines[1:-1], lines[-1][:end_col]]
    try:
        text = b"".join(parts).decode("utf-8")
        tokens = [
            t
            for t in tokenize.generate_tokens(io.StringIO(text).readline)
            if t.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT, tokenize.ENDMARKER)
        ]
    except (tokenize.TokenError, SyntaxError, UnicodeDecodeError):
        return None
    if not tokens or tokens[-1].string != ")":
        return None
    depth = 0
    for i in range(len(tokens) - 1, 0, -1):  # the "(" that matches the final ")"
        depth += {")": 1, "(": -1}.get(tokens[i].string, 0) if tokens[i].type == tokenize.OP else 0
        if depth == 0:
            name = tokens[i - 1]
            if tokens[i].string != "(" or name.type != tokenize.NAME:
                return None
            row, char_col = name.start
            if row == 1:
                char_col += len(lines[0][:col].decode("utf-8", errors="ignore"))
            return line + row - 1, char_col + 1
    return None


def caller_location() -> FileLineColLoc | UnknownLoc:
    """``FileLineColLoc`` of the innermost Python frame outside this module:
    its file (``co_filename``, as Python reports it), line and 1-based
    column of the called method's name (``dequant`` in
    ``k.fetch_rows(c, 64).dequant(b)``, as MLIR locates an op at its name;
    needs Python >= 3.11 and the source file, else the start of the call,
    else column 1).  ``UnknownLoc`` when there is no such frame."""
    frame: FrameType | None = sys._getframe(1)
    while frame is not None and os.path.normcase(os.path.abspath(frame.f_code.co_filename)) == _THIS_FILE:
        frame = frame.f_back
    if frame is None:
        return UnknownLoc()
    filename, line, col = frame.f_code.co_filename, frame.f_lineno, 1
    pos = getattr(inspect.getframeinfo(frame, context=0), "positions", None)
    if pos is not None and pos.lineno is not None:
        line = pos.lineno
        if pos.col_offset is not None:
            col = _char_column(filename, line, pos.col_offset)
            if pos.end_lineno is not None and pos.end_col_offset is not None:
                found = _called_name(filename, pos.lineno, pos.end_lineno, pos.col_offset, pos.end_col_offset)
                if found is not None:
                    line, col = found
    return FileLineColLoc(StringAttr(filename), IntAttr(line), IntAttr(col))


def _as_location(loc: LocLike) -> LocationAttr:
    if isinstance(loc, tuple):
        filename, line, col = loc
        return FileLineColLoc(StringAttr(filename), IntAttr(line), IntAttr(col))
    if isinstance(loc, Attribute):
        return cast(LocationAttr, loc)  # as given: xDSL stores any attribute as an op's location
    raise TypeError(f"loc: expected a location attribute or (filename, line, column), not {type(loc).__name__}")


def _loc_tuple(loc: Attribute) -> tuple[str, int, int] | None:
    from fetchc.frontend.locations import location_of

    return location_of(loc)


# --------------------------------------------------------------------------
# Module and kernels
# --------------------------------------------------------------------------


class ModuleBuilder:
    """Builds one ``builtin.module`` of kernels.

    ``locations`` (default ``True``): give every op the ``FileLineColLoc``
    of the Python call that built it; ``False``: ``UnknownLoc`` (unless a
    call passes ``loc=``).  :attr:`module` is the module being built.
    Usable as a context manager: leaving the ``with`` block without an
    exception calls :meth:`finish`."""

    def __init__(self, *, locations: bool = True):
        self.locations = locations
        scratch = Block()
        with ImplicitBuilder(scratch):  # inner to any implicit builder of the caller's
            self.module = ModuleOp([])
        self.module.detach()
        self._kernels: list[KernelBuilder] = []
        self._finished = False

    def __enter__(self) -> ModuleBuilder:
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None and not self._finished:
            self.finish()

    def _location(self, loc: LocLike) -> LocationAttr:
        if loc is not None:
            return _as_location(loc)
        return caller_location() if self.locations else UnknownLoc()

    def kernel(
        self,
        name: str,
        arguments_list: Sequence[tuple[str, TypeLike | Arg]] | None = None,
        /,
        *,
        loc: LocLike = None,
        slices: int | None = None,
        **keyword_arguments: TypeLike | Arg,
    ) -> KernelBuilder:
        """Create the kernel ``func.func @name`` with the given arguments, in
        order: ``name=type`` (a memref for a DM tensor, ``f32`` for a
        scalar such as an NVFP4 tensor scale; :data:`TypeLike`) or
        ``name=Arg(type, dm_base=N)`` for a tensor placed explicitly
        (ir.md §2a), ``name=Arg(type, slice_dim=D)`` for a tensor split over
        the slices.  ``slices``: the kernel runs on that many slices (the
        function attribute ``rngd.slices``, 1 to 512; ir.md §2a).  Names that
        are not Python identifiers (or ``loc``, ``slices``) go in
        ``arguments_list``, ``[(name, type or Arg), ...]``, which
        comes before the keyword arguments.  Each tensor and scalar gets
        its name as its ``rngd.name`` (ir.md §2a: the tensor names in the
        MANIFEST, kept through tools that rename SSA values), and as its SSA
        name when it is a valid one (``%w``; a name such as ``"1w"`` or
        ``"w_1"``, which xDSL would not keep, leaves the SSA value unnamed).
        Returns its :class:`KernelBuilder`; results are declared by
        :meth:`KernelBuilder.ret`.  Raises ``RuntimeError`` after
        :meth:`finish`, ``ValueError`` for a name that is not a non-empty
        string (or, on an argument that is neither a tensor nor a scalar,
        not a valid SSA name that xDSL keeps), a repeated name
        or a type that does not parse, ``TypeError`` for a ``slices``,
        ``dm_base`` or ``slice_dim`` that is not an integer."""
        self._check_open()
        where = self._location(loc)
        if slices is not None:
            slices = _number(slices, f"kernel {name}: slices")
        named = [*(arguments_list or ()), *keyword_arguments.items()]
        if len({n for n, _ in named}) != len(named):
            raise ValueError(f"kernel {name}: two arguments have the same name")
        types: list[Attribute] = []
        attrs: list[dict[str, Attribute]] = []
        for _arg_name, spec in named:
            arg = spec if isinstance(spec, Arg) else Arg(spec)
            types.append(as_type(arg.type))
            attrs.append({})
            if arg.dm_base is not None:
                base = _number(arg.dm_base, f"kernel {name}: the dm_base of {_arg_name!r}")
                attrs[-1][DM_BASE_ATTR] = IntegerAttr(base, i64)
            if arg.slice_dim is not None:
                dim = _number(arg.slice_dim, f"kernel {name}: the slice_dim of {_arg_name!r}")
                attrs[-1][SLICE_DIM_ATTR] = IntegerAttr(dim, i64)
        block = Block(arg_types=types)
        for value, (arg_name, _), data in zip(block.args, named, attrs, strict=True):
            value.name_hint = _ssa_name(name, arg_name, isinstance(value.type, (MemRefType, Float32Type)))
            if isinstance(value.type, (MemRefType, Float32Type)):
                data[NAME_ATTR] = StringAttr(arg_name)
        arg_attrs = ArrayAttr([DictionaryAttr(dict(sorted(a.items()))) for a in attrs]) if any(attrs) else None
        # Built under our own implicit builders, so that an implicit builder
        # of the caller's does not capture them.
        with ImplicitBuilder(block):
            ret = func.ReturnOp()  # the body always ends with its terminator; ops go before it
        ret.location = where
        with ImplicitBuilder(self.module.body.block):
            op = func.FuncOp(name, (types, ()), Region(block), arg_attrs=arg_attrs)
        op.location = where
        if slices is not None:
            op.attributes[SLICES_ATTR] = IntegerAttr(slices, i64)  # checked first, above
        k = KernelBuilder(self, op)
        self._kernels.append(k)
        return k

    def finish(self) -> ModuleOp:
        """Close every kernel (each ends with a ``func.return`` of nothing
        unless :meth:`KernelBuilder.ret` gave values) and verify the module
        as :func:`fetchc.compile` does before its passes (every op, ir.md
        §3, and the function signatures).
        Returns the module.  Raises :class:`DiagnosticError` with every
        error, e.g. a stream that is never consumed (rule 6).  The builder
        is closed afterwards either way; :attr:`module` stays available."""
        self._check_open()
        for k in self._kernels:
            k._drop_all_placeholders()
            k.closed = True
        self._finished = True
        from fetchc.driver import run_pipeline

        result = run_pipeline(self.module, _context(), [])
        if not result.ok:
            raise DiagnosticError(result.diagnostics)
        return self.module

    def _check_open(self) -> None:
        if self._finished:
            raise RuntimeError("this ModuleBuilder is finished: start a new one to build another module")


def _ssa_name(kernel: str, name: object, named: bool) -> str | None:
    """The SSA name (``name_hint``) of the argument ``name`` of ``kernel``:
    the name itself when it is a valid SSA name that xDSL keeps as it is,
    else None for a tensor or scalar (``named``: its ``rngd.name`` holds the
    name, ir.md §2a).  Raises ``ValueError`` for a name that is not a
    non-empty string, or that is no valid SSA name on another argument."""
    if not isinstance(name, str) or not name:
        raise ValueError(f"kernel {kernel}: an argument's name must be a non-empty string, not {name!r}")
    try:
        kept = SSAValue.extract_valid_name(name)
    except ValueError:
        kept = None
    if kept == name:
        return name
    if named:
        return None
    if kept is None:
        raise ValueError(
            f"kernel {kernel}: {name!r} is not a valid SSA name (characters A-Z a-z 0-9 _ $ . -, not starting "
            "with a digit); only tensors and scalars carry a name of their own (rngd.name)"
        )
    raise ValueError(
        f"kernel {kernel}: xDSL drops the '_<digits>' suffix of an SSA name, so {name!r} would become {kept!r}; "
        "choose a name without it"
    )


class KernelBuilder:
    """One kernel being built (a ``func.func``; ir.md §2a).  Made by
    :meth:`ModuleBuilder.kernel`.

    :attr:`args` are its arguments (``SSAValue``, in order; also by name
    with ``k["codes"]``), :attr:`func` the ``func.func`` op.  Ops are
    appended to its body in call order."""

    def __init__(self, owner: ModuleBuilder, func_op: func.FuncOp):
        self._owner = owner
        self.func = func_op
        self._block = func_op.body.block
        terminator = self._block.last_op
        assert isinstance(terminator, func.ReturnOp)
        self._terminator: func.ReturnOp = terminator
        self._builder = Builder(InsertPoint.before(self._terminator))
        self._pending: dict[SSAValue, Operation] = {}
        self.closed = False

    # -- arguments ---------------------------------------------------------

    @property
    def args(self) -> tuple[BlockArgument, ...]:
        """The kernel's arguments, in order (each tensor and scalar named by
        its ``rngd.name``, the name given to :meth:`ModuleBuilder.kernel`;
        the SSA name is that name when it is a valid one)."""
        return tuple(self._block.args)

    def __getitem__(self, name: str) -> BlockArgument:
        """The argument named ``name``.  Raises ``KeyError``."""
        for a in self._block.args:
            if tensor_name(a) == name or a.name_hint == name:
                return a
        raise KeyError(name)

    @property
    def name(self) -> str:
        return self.func.sym_name.data

    # -- reading DM --------------------------------------------------------

    def fetch(
        self,
        source: SSAValue,
        time: int | Sequence[int],
        packet: int | Sequence[int],
        *,
        map: AffineMap | AffineMapAttr | Callable | str | None = None,
        context: str = "main",
        base: int | None = None,
        read_size: int | None = None,
        pad: Padding | None = None,
        loc: LocLike = None,
    ) -> Stream:
        """``fetch.fetch``: read the memref ``source`` (a kernel argument)
        into a stream of ``time`` x ``packet`` elements on the ``context``
        Fetch Unit (``"main"`` or ``"sub"``); the element type is the
        memref's.  ``pad`` (a :class:`Padding`, ``Padding(dim=1, size=96,
        left=0)``): read memref index ``dim`` over ``[-left, size - left)``
        (hardware.md §2.0; the map must walk it whole, ir.md §2); follow it
        with :meth:`Stream.mask` unless the stream is only committed.

        ``map`` sends the stream's time dims then packet dims to the memref's
        indices (ir.md §2): an ``AffineMap``, its text
        (``"(t, p, e) -> (t, p * 32 + e)"``) or a callable on dim
        expressions (``lambda t, p, e: (t, p * 32 + e)``); default the
        identity when the stream has as many dims as the memref.  ``base``
        (bytes): the memref's DM address, when not from its placement (ir.md
        §2a); ``read_size`` (elements): pins the read size.  Raises
        :class:`DiagnosticError` with the verifier's diagnostic (ir.md §3
        rules 6-8: element types, sequencer limits, ...), ``ValueError`` for
        a map that does not parse, ``TypeError`` when ``source`` is not a
        memref or a size, ``base`` or ``read_size`` is not an integer."""
        where = self._owner._location(loc)
        mt = source.type
        if not isinstance(mt, MemRefType):
            raise TypeError(f"fetch reads a memref, but the source has type {target.type_name(mt)}")
        time, packet = _shape(time, "fetch: time"), _shape(packet, "fetch: packet")
        base = None if base is None else _number(base, "fetch: base")
        read_size = None if read_size is None else _number(read_size, "fetch: read_size")
        st = _checked(lambda: StreamType(context, time, packet, mt.element_type), where)
        amap = None if map is None else _as_map(map)
        op = self._emit(lambda: FetchOp(source, st, map=amap, base=base, read_size=read_size, pad=pad), where)
        return Stream(self, op.results[0])

    def fetch_rows(
        self,
        source: SSAValue,
        packet: int,
        *,
        shape: Sequence[int] | None = None,
        offset: Sequence[int] | None = None,
        context: str = "main",
        base: int | None = None,
        read_size: int | None = None,
        pad: int | None = None,
        left: int = 0,
        loc: LocLike = None,
    ) -> Stream:
        """The common read, "rows of packets": the window of ``shape``
        elements (default the memref's shape) at ``offset`` (elements per
        dim, default the origin) of the memref ``source``, row by row, each
        row (the last dim) cut into packets of ``packet`` elements.  With
        ``pad`` (elements), each row is read padded to ``pad`` elements,
        ``left`` of them before its start (hardware.md §2.0: ``#fetch.pad<dim
        = last, left = left, size = pad>``; the window is then the whole
        memref, and ``pad`` a whole number of packets).

        Stream: time ``shape[:-1] + [shape[-1] // packet]``, packet
        ``[packet]``, map :func:`rows_map`; e.g. ``memref<4096x4096x...>``
        with ``packet=64`` is ``!fetch.stream<main, [4096, 64], [64], ...>``
        with ``(o, p, e) -> (o, p * 64 + e)``.  Other arguments as
        :meth:`fetch`.  Raises :class:`DiagnosticError` (at the call) when
        ``packet`` does not divide the row or ``shape``/``offset`` do not
        match the memref's rank, and the verifier's diagnostic for an
        illegal read; ``TypeError`` for a ``packet``, ``shape`` or
        ``offset`` that is not made of integers."""
        where = self._owner._location(loc)
        mt = source.type
        if not isinstance(mt, MemRefType):
            raise TypeError(f"fetch_rows reads a memref, but the source has type {target.type_name(mt)}")
        full = list(mt.get_shape())
        packet = _number(packet, "fetch_rows: packet")
        window = _numbers(shape, "fetch_rows: shape") if shape is not None else full
        offset = None if offset is None else _numbers(offset, "fetch_rows: offset")
        problem = None
        row = window[-1] if pad is None else pad
        if len(window) != len(full) or (offset is not None and len(offset) != len(full)):
            problem = f"shape and offset need one entry per memref dim ({len(full)})"
        elif pad is not None and (shape is not None or offset is not None):
            problem = "a padded read (pad=) reads the whole memref: drop shape= and offset="
        elif packet < 1 or row % packet:
            what = "a padded row" if pad is not None else "a row"
            problem = f"{what} of {row} elements is not a whole number of packets of {packet}"
        if problem is not None:
            raise DiagnosticError(Diagnostic.error(f"fetch_rows: {problem}", _loc_tuple(where)))
        time = window[:-1] + [row // packet]
        start = None if pad is None else [0] * (len(full) - 1) + [-left]
        padding = None if pad is None else Padding(len(full) - 1, pad, left)
        return self.fetch(
            source,
            time,
            [packet],
            map=rows_map(len(full), packet, offset if pad is None else start),
            context=context,
            base=base,
            read_size=read_size,
            pad=padding,
            loc=where,
        )

    # -- other ops ---------------------------------------------------------

    def ret(self, *values: SSAValue, loc: LocLike = None) -> func.ReturnOp:
        """``func.return`` of ``values`` (e.g. a ``!rngd.trf`` from
        :meth:`Stream.to_trf`); the kernel's result types become theirs.
        Closes the kernel.  A stream may not be returned (ir.md §1): that
        raises the verifier's :class:`DiagnosticError`."""
        where = self._owner._location(loc)
        self._check_open()
        values = tuple(v.value if isinstance(v, Stream) else v for v in values)
        old_type, old_ret = self.func.function_type, self._terminator
        self.func.properties["function_type"] = FunctionType.from_lists(
            list(old_type.inputs.data), [v.type for v in values]
        )
        old_ret.detach()
        self._builder.insertion_point = InsertPoint.at_end(self._block)
        try:
            op = cast(func.ReturnOp, self._emit(lambda: func.ReturnOp(*values), where))
        except BaseException:
            self.func.properties["function_type"] = old_type
            self._block.add_op(old_ret)
            self._builder.insertion_point = InsertPoint.before(old_ret)
            raise
        old_ret.erase()
        self._terminator = op
        self.closed = True
        return op

    def insert(self, op: Operation, *, loc: LocLike = None) -> Operation:
        """Append any op built by hand (e.g. with an op constructor of
        :mod:`fetchc.dialects.fetch`) and verify it like the builder's own
        ops; gives it the caller's location unless it has a file location
        already or ``loc`` is given.  Returns ``op``."""
        where = self._owner._location(loc) if loc is not None or _loc_tuple(op.location) is None else op.location
        return self._emit(lambda: op, where, constructed=True)

    @contextmanager
    def body(self) -> Iterator[tuple[BlockArgument, ...]]:
        """``with k.body() as args:``: an xDSL ``ImplicitBuilder`` on the
        kernel's body, for ops the builder does not cover (they are appended
        as built, not verified until :meth:`ModuleBuilder.finish`)."""
        self._check_open()
        with ImplicitBuilder(self._builder) as args:
            yield args

    # -- machinery ---------------------------------------------------------

    def _check_open(self) -> None:
        self._owner._check_open()
        if self.closed:
            raise RuntimeError(f"kernel @{self.name} is closed (it has its func.return)")

    def _placeholder(self, value: SSAValue) -> None:
        """Hold an unconsumed stream with a detached use, so that verifying
        its producer does not report it as unused (rule 6) before its
        consumer is built."""
        with ImplicitBuilder(self._builder):
            ph = CollectOp(value)
        ph.detach()
        self._pending[value] = ph

    def _drop_placeholder(self, value: SSAValue) -> bool:
        ph = self._pending.pop(value, None)
        if ph is None:
            return False
        ph.erase()
        return True

    def _drop_all_placeholders(self) -> None:
        for value in list(self._pending):
            self._drop_placeholder(value)

    def _emit(self, make: Callable[[], Operation], where: LocationAttr, constructed: bool = False) -> Operation:
        """Build ``make()`` at the end of the body with location ``where``,
        verify it, and return it; on a verifier error remove it again and
        raise :class:`DiagnosticError`."""
        self._check_open()
        with ImplicitBuilder(self._builder):  # inner to any implicit builder of the caller's
            if constructed:
                op = make()
                self._builder.insert(op)
            else:
                op = _checked(make, where)  # appended by the implicit builder
        op.location = where
        released = [v for v in op.operands if self._drop_placeholder(v)]
        for r in op.results:
            if isinstance(r.type, StreamType):
                self._placeholder(r)
        diagnostics = self._verify_around(op)
        if diagnostics:
            error = DiagnosticError(diagnostics)
            for r in op.results:
                self._drop_placeholder(r)
            op.detach()
            op.erase()
            for v in released:
                self._placeholder(v)
            raise error
        return op

    def _verify_around(self, op: Operation) -> list[Diagnostic]:
        """Verify ``op``, the producers of its operands (whose uses it
        changed: rule 6, and rule 3 for a use outside fetch/rngd) and the
        ``fetch.fetch`` heading each operand's chain (rule 8 depends on the
        chain's cast).  Returns the first failing op's diagnostics."""
        from fetchc.frontend.verify import verify_module

        todo: list[Operation] = [op]
        for v in op.operands:
            owner = v.owner
            if isinstance(owner, Operation) and owner.parent_block() is self._block:
                todo.append(owner)
            for _ in range(64):  # walk back along the stream to its fetch.fetch
                if not isinstance(owner, Operation) or not owner.operands:
                    break
                if isinstance(owner, FetchOp):
                    break
                owner = owner.operands[0].owner
            if isinstance(owner, FetchOp) and owner.parent_block() is self._block:
                todo.append(owner)
        seen: set[int] = set()
        for o in todo:
            if id(o) in seen:
                continue
            seen.add(id(o))
            diagnostics = verify_module(o)
            if diagnostics:
                return diagnostics
        return []


# --------------------------------------------------------------------------
# Streams
# --------------------------------------------------------------------------


def _checked(make: Callable[[], object], where: Attribute):
    """``make()``, with a ``VerifyException`` of a malformed type (e.g. a
    stream context other than main/sub, a zero dim) raised as a
    :class:`DiagnosticError` at ``where``."""
    try:
        return make()
    except VerifyException as e:
        text = str(e).strip().splitlines()
        raise DiagnosticError(Diagnostic.error(text[0] if text else type(e).__name__, _loc_tuple(where))) from None


def _infer_error(op_name: str, message: str, where: Attribute) -> DiagnosticError:
    return DiagnosticError(Diagnostic.error(f"'{op_name}' op {message}", _loc_tuple(where)))


class Stream:
    """A ``!fetch.stream`` value being built (ir.md §1): :attr:`value` (the
    ``SSAValue``), :attr:`type` (its :class:`StreamType`), :attr:`op` (the
    op that produced it).

    Each method builds one op that consumes this stream and returns what
    the op produces.  A stream is linear (rule 6): consuming it twice
    raises the verifier's "has 2 uses" error.  Every method takes ``loc=``
    (:data:`LocLike`) and raises :class:`DiagnosticError` with the
    verifier's diagnostic when the op is illegal (ir.md §3)."""

    __slots__ = ("_kernel", "value")

    def __init__(self, kernel: KernelBuilder, value: SSAValue):
        self._kernel = kernel
        self.value = value

    @property
    def type(self) -> StreamType:
        t = self.value.type
        assert isinstance(t, StreamType)
        return t

    @property
    def op(self) -> Operation:
        owner = self.value.owner
        assert isinstance(owner, Operation)
        return owner

    def __repr__(self) -> str:
        return f"Stream({self.type.spelled()})"

    def _where(self, loc: LocLike) -> LocationAttr:
        return self._kernel._owner._location(loc)

    def _stream(self, make: Callable[[], Operation], where: LocationAttr) -> Stream:
        op = self._kernel._emit(make, where)
        return Stream(self._kernel, op.results[0])

    def _retyped(self, element: Attribute) -> StreamType:
        return self.type.with_element(element)

    # -- Fetch Adapter stages (hardware.md §2) ----------------------------

    def mask(self, *, loc: LocLike = None) -> Stream:
        """``fetch.mask``: zero the padding slots of the padded fetch this
        stream comes straight from (hardware.md §2.0; first stage, main
        context only); the configuration is derived, never given.  Raises
        the verifier's :class:`DiagnosticError` (rules 5, 11: no padding,
        sub context, a pad no configuration expresses)."""
        where = self._where(loc)
        return self._stream(lambda: MaskOp(self.value, self.type), where)

    def lookup(
        self,
        to: TypeLike | None = None,
        *,
        fn: str | None = None,
        scale: float | None = None,
        zero_point: int | None = None,
        loc: LocLike = None,
    ) -> Stream:
        """``fetch.table_lookup`` (hardware.md §2.1, §2.1b; main context
        only).  Without ``fn``, a decode table: ``to`` is the table's output
        type, default the one table keyed by the input type
        (``f8E4M3FN``/``f8E5M2`` → ``bf16``).  With ``fn`` (``"gelu"``,
        ``"silu"``, ...: a function table), the output is ``bf16`` (``to``
        defaults to it); ``scale`` and ``zero_point`` dequantise an
        ``i8``/``i16`` key, ``x = (k - zero_point) * scale``.  Raises
        :class:`DiagnosticError` when there is no table or more than one to
        choose from (``f4E2M1FN`` decodes to ``f8E4M3FN`` or ``f8E5M2``:
        pass ``to=``), and the verifier's diagnostic for an illegal pair,
        function, scale or zero point, or a lookup on ``sub`` (rules 1, 2);
        ``TypeError`` for a ``scale`` that is not a number or a
        ``zero_point`` that is not an integer."""
        where = self._where(loc)
        scale = None if scale is None else _number(scale, "lookup: scale", real=True)
        zero_point = None if zero_point is None else _number(zero_point, "lookup: zero_point")
        if to is not None:
            out = as_type(to)
        elif fn is not None:
            out = target.mlir_type(target.BF16)
        else:
            src = self.type.elem
            outs = target.lookup_outputs(src) if src is not None else []
            name = target.type_name(self.type.element_type)
            if len(outs) != 1:
                if outs:
                    detail = f"the {name} tables decode to {' and '.join(o.name for o in outs)}; choose one with to="
                elif functions.is_function_key(src):
                    detail = (
                        f"there is no decode table keyed by {name}; a table keyed by {name} is a function table: "
                        f"pass fn= (one of {functions.function_names()})"
                    )
                else:
                    detail = f"there is no table keyed by {name} (tables exist for {target.table_pairs_text()})"
                raise _infer_error(TableLookupOp.name, f"cannot infer the output type: {detail}", where)
            out = target.mlir_type(outs[0])
        return self._stream(lambda: TableLookupOp(self.value, self._retyped(out), fn, scale, zero_point), where)

    def cast(self, to: TypeLike | None = None, *, loc: LocLike = None) -> Stream:
        """``fetch.cast``, the type-cast stage (hardware.md §2.2).  ``to``:
        the output type; default the one cast the hardware has from the
        input type (``f8E4M3FN`` → ``f32``, ``bf16`` → ``f32``, ``i8`` →
        ``i32``, ...).  Raises :class:`DiagnosticError` when nothing can be
        inferred, and the verifier's diagnostic for an illegal pair or stage
        order (rules 1, 5)."""
        where = self._where(loc)
        if to is None:
            src = self.type.elem
            outs = target.cast_outputs(src) if src is not None else []
            if len(outs) != 1:
                name = target.type_name(self.type.element_type)
                raise _infer_error(
                    CastOp.name,
                    f"cannot infer the output type: the cast stage has "
                    f"{'no cast' if not outs else 'several casts'} from {name}; pass the output type",
                    where,
                )
            out = target.mlir_type(outs[0])
        else:
            out = as_type(to)
        return self._stream(lambda: CastOp(self.value, self._retyped(out)), where)

    def zp_sub(self, zero_point: int, *, loc: LocLike = None) -> Stream:
        """``fetch.zp_sub``: ``out = in - zero_point`` (hardware.md §2.3),
        ``i4`` → ``i5`` or ``i8`` → ``i9`` (inferred).  The result feeds
        only ``switch``/``collect``/``contract_outer`` (rule 3).  Raises
        :class:`DiagnosticError` for another input type, and the verifier's
        diagnostic for a zero point out of range (rule 4) or stage order;
        ``TypeError`` for a zero point that is not an integer."""
        where = self._where(loc)
        zero_point = _number(zero_point, "zp_sub: zero_point")
        src = self.type.elem
        rule = target.ZERO_POINT.get(src) if src is not None else None
        if rule is None:
            raise _infer_error(
                ZpSubOp.name,
                f"cannot infer the output type: zero-point subtraction reads "
                f"{' and '.join(t.name for t in target.ZERO_POINT)}, not {target.type_name(self.type.element_type)}",
                where,
            )
        out = target.mlir_type(rule.result)
        return self._stream(lambda: ZpSubOp(self.value, self._retyped(out), zero_point), where)

    def convert(self, to: TypeLike, *, loc: LocLike = None) -> Stream:
        """``fetch.convert`` to element type ``to``: a request that
        ``fetch-legalize-convert`` turns into stages (ir.md §4); a
        conversion with no legal chain is reported when compiling.  Raises
        the verifier's :class:`DiagnosticError` (rules 3, 5)."""
        where = self._where(loc)
        out = as_type(to)
        return self._stream(lambda: ConvertOp(self.value, self._retyped(out)), where)

    def dequant(
        self,
        bscale: SSAValue,
        gscale: SSAValue | None = None,
        *,
        format: str | None = None,
        scale_base: int | None = None,
        to: TypeLike = "f32",
        loc: LocLike = None,
    ) -> Stream:
        """``fetch.dequant``: decode this ``f4E2M1FN`` stream (straight from
        a fetch) with the block scales ``bscale`` (a memref ``(rows, cols /
        block)``) and, for NVFP4, the ``f32`` tensor scale ``gscale``
        (hardware.md §4).  Result: a stream of the same shape, of ``to``:
        ``"f32"`` (default) or ``"bf16"`` (the f32 result narrowed by the
        Cast Engine, hardware.md §2.6).
        ``format``: ``"nvfp4"`` or ``"mxfp4"``, default the format whose
        block-scale type ``bscale`` holds (``f8E4M3FN`` → nvfp4,
        ``f8E8M0FNU`` → mxfp4).  ``scale_base`` (bytes): the block scales'
        DM address when not from their placement.  Raises
        :class:`DiagnosticError` when the format cannot be inferred, and the
        verifier's diagnostic otherwise (scale shape, missing tensor
        scale, a result type other than f32/bf16, ...); ``TypeError`` for a
        ``scale_base`` that is not an integer."""
        where = self._where(loc)
        scale_base = None if scale_base is None else _number(scale_base, "dequant: scale_base")
        if format is None:
            bt = bscale.type
            elem = target.element_type(bt.element_type) if isinstance(bt, MemRefType) else None
            inferred = target.dequant_format_for_scale(elem)
            if inferred is None:
                known = ", ".join(f"{f} ({spec.scale.name})" for f, spec in target.DEQUANT_FORMATS.items())
                raise _infer_error(
                    DequantOp.name,
                    f"cannot infer the format from block scales of type {target.type_name(bt)}: the formats and "
                    f"their block-scale types are {known}; pass format=",
                    where,
                )
            format = inferred.name
        result = self._retyped(as_type(to))
        return self._stream(lambda: DequantOp(self.value, bscale, gscale, format, result, scale_base), where)

    # -- engines (ir.md §2, rngd dialect) ----------------------------------

    def switch(self, *, loc: LocLike = None) -> Stream:
        """``rngd.switch``: the Switch Engine, stream unchanged.  Raises the
        verifier's :class:`DiagnosticError` for a packet that is not a whole
        number of 8-byte words (rule 9)."""
        where = self._where(loc)
        return self._stream(lambda: SwitchOp(self.value), where)

    def collect(self, *, flits: bool = False, loc: LocLike = None) -> Stream:
        """``rngd.collect``: the Collect Engine (hardware.md §2.5), the same
        bytes in the same order.  By default the result keeps the input type;
        ``flits=True`` gives the flit form, where a packet is a whole number
        ``F > 1`` of 32-byte flits: time gains ``F`` as its innermost dim and
        the packet becomes one flit of elements (``[60], [3840] f8E4M3FN`` →
        ``[60, 120], [32]``).  Raises :class:`DiagnosticError` for
        ``flits=True`` on a stream without a flit form (a packet of exactly
        one flit, under one, or not a whole number of flits: the flit form
        would need padding), saying which."""
        where = self._where(loc)
        result = CollectOp.flit_type(self.type) if flits else self.type
        if result is None:
            raise _infer_error(
                CollectOp.name,
                f"has no flit form for {self.type.spelled()}: {CollectOp.no_flit_form(self.type)} "
                "(hardware.md §2.5); keep the input type (collect() without flits=True)",
                where,
            )
        return self._stream(lambda: CollectOp(self.value, result), where)

    def transpose(self, time: int | Sequence[int], packet: int | Sequence[int], *, loc: LocLike = None) -> Stream:
        """``rngd.transpose`` to a stream of ``time`` x ``packet`` elements
        (same context and element type; the element count must not change:
        the verifier's :class:`DiagnosticError` otherwise; ``TypeError`` for
        a size that is not an integer)."""
        where = self._where(loc)
        time, packet = _shape(time, "transpose: time"), _shape(packet, "transpose: packet")
        st = _checked(lambda: self.type.with_shape(time, packet), where)
        return self._stream(lambda: TransposeOp(self.value, st), where)

    def commit(self, dest: SSAValue, *, loc: LocLike = None) -> CommitOp:
        """``rngd.commit``: write the stream to the memref ``dest`` (same
        element type and element count).  Ends the stream; returns the op.
        Raises the verifier's :class:`DiagnosticError` (e.g. rule 3 for an
        ``i5``/``i9`` stream)."""
        where = self._where(loc)
        op = self._kernel._emit(lambda: CommitOp(self.value, dest), where)
        assert isinstance(op, CommitOp)
        return op

    def to_trf(self, *, loc: LocLike = None) -> SSAValue:
        """``rngd.to_trf``: stage the stream into the tensor register file;
        returns the ``!rngd.trf<elem>`` value (for :meth:`contract_outer`
        or :meth:`KernelBuilder.ret`)."""
        where = self._where(loc)
        t = TrfType(self.type.element_type)
        return self._kernel._emit(lambda: ToTrfOp(self.value, t), where).results[0]

    def to_vrf(self, *, loc: LocLike = None) -> SSAValue:
        """``rngd.to_vrf``: stage the stream into the vector register file;
        returns the ``!rngd.vrf<[time..., packet...], elem>`` value (the
        stream's elements time-major, hardware.md §2.6), for
        :meth:`block_scale` or :meth:`KernelBuilder.ret`.  A kernel whose
        VRF tensors exceed 8 KiB per slice is reported when it is finished
        (:meth:`ModuleBuilder.finish`)."""
        where = self._where(loc)
        t = VrfType.for_stream(self.type)
        return self._kernel._emit(lambda: ToVrfOp(self.value, t), where).results[0]

    def contract_outer(self, weights: SSAValue, *, loc: LocLike = None) -> Stream:
        """``rngd.contract_outer`` with the TRF-staged ``weights``: the
        accumulator stream, same context and shape, its element type the
        operand table's (hardware.md §2.6, :data:`fetchc.target.CONTRACTION_OPERANDS`:
        ``i32`` for ``i4``/``i5`` and ``i8``/``i9`` streams, ``f32`` for
        ``f8E4M3FN``, ``f8E5M2`` and ``bf16``).  Raises the verifier's
        :class:`DiagnosticError` for a stream the Contraction Engine cannot
        take or a TRF type that does not pair with it (rule 10)."""
        where = self._where(loc)
        st = ContractOuterOp.result_type(self.type)
        return self._stream(lambda: ContractOuterOp(self.value, weights, st), where)

    def block_scale(self, scale: Stream | SSAValue, block: int | None = None, *, loc: LocLike = None) -> Stream:
        """``rngd.block_scale`` (Vector Engine): multiply this ``f32`` stream
        by the block scales ``scale`` (``f32`` or ``f8E8M0FNU``): a
        :class:`Stream` in lockstep (one scale per ``block`` elements of the
        innermost packet dim), or a VRF tensor from :meth:`to_vrf` holding
        one scale per block of ``block`` consecutive values in this stream's
        order (hardware.md §4a).  ``block``: default this packet's innermost
        dim over the scale stream's, or this stream's element count over the
        VRF tensor's.  Raises the verifier's :class:`DiagnosticError` for
        mismatched shapes or types, ``TypeError`` for a ``block`` that is
        not an integer."""
        where = self._where(loc)
        value = scale.value if isinstance(scale, Stream) else scale
        if block is not None:
            block = _number(block, "block_scale: block")
        else:
            st = value.type
            if isinstance(st, VrfType):
                mine, theirs, what = self.type.numel, st.numel, "element count"
            elif isinstance(st, StreamType):
                mine, theirs, what = self.type.packet[-1], st.packet[-1], "innermost packet dim"
            else:
                raise _infer_error(
                    BlockScaleOp.name,
                    f"takes its block scales from a Stream or a !rngd.vrf value, not {target.type_name(st)}",
                    where,
                )
            if mine % theirs:
                raise _infer_error(
                    BlockScaleOp.name,
                    f"cannot infer the block: the {what} {mine} is not a multiple of the scales' {theirs}; pass block=",
                    where,
                )
            block = mine // theirs
        return self._stream(lambda: BlockScaleOp(self.value, value, block), where)

    def tensor_scale(self, scale: SSAValue, *, loc: LocLike = None) -> Stream:
        """``rngd.tensor_scale`` (Vector Engine): multiply this ``f32``
        stream by the ``f32`` scalar ``scale`` (e.g. a kernel argument)."""
        where = self._where(loc)
        return self._stream(lambda: TensorScaleOp(self.value, scale), where)

    def narrow(self, to: TypeLike = "bf16", *, loc: LocLike = None) -> Stream:
        """``rngd.cast``: the Cast Engine narrows this ``f32`` stream to
        ``to`` (``bf16``, the only narrowing it has; hardware.md §2.6), same
        context and shapes.  Raises the verifier's :class:`DiagnosticError`
        for another input or output type (it lists what the Cast Engine
        takes)."""
        where = self._where(loc)
        out = as_type(to)
        return self._stream(lambda: CastEngineOp(self.value, self._retyped(out)), where)

"""Op formats for the fast front end (:mod:`fetchc.frontend.fastparse`).

:class:`Format` is what the fast path needs to parse a declarative-format
op as xDSL's ``FormatProgram`` does (operand and result counts, the
properties its ``attr-dict`` takes, the reserved names);
:func:`check_constraints` is xDSL's parse-time check of the parsed operand,
result and property values (``resolve_constraint_variables``), with an
``isinstance`` shortcut where every constraint is a base class;
:func:`get_registry` lists the op classes the fast path handles.
"""

from __future__ import annotations

from collections.abc import Mapping

from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Attribute
from xdsl.irdl import AttrOrPropDef, IRDLOperation, OptionalDef
from xdsl.irdl.constraints import VerificationContext

__all__ = ["Format", "Registry", "check_constraints", "get_registry"]


class Format:
    """What a declarative-format op needs: its operand and result counts,
    the properties its ``attr-dict`` takes, the names it reserves, and the
    op definition for xDSL's parse-time constraint checks."""

    def __init__(self, cls: type[IRDLOperation], shape: tuple[int, int, bool]) -> None:
        from xdsl.irdl.declarative_assembly_format import (
            AttrDictDirective,
            FormatProgram,
        )

        self.cls = cls
        self.op_def = cls.get_irdl_definition()
        self.n_min, self.n_max, self.arrow = shape
        program = FormatProgram.from_str(cls.assembly_format or "", self.op_def)
        (attr_dict,) = [s for s in program.stmts if isinstance(s, AttrDictDirective)]
        self.expected = frozenset(attr_dict.expected_properties)
        self.reserved = frozenset(attr_dict.reserved_attr_names)
        self.simple = _simple_classes(self.op_def)


def _simple_classes(op_def) -> tuple[tuple[type, ...], tuple[type, ...]] | None:
    """The base classes of each operand and result when every one is a single
    ``BaseAttr`` constraint and no property or attribute is checked at parse
    time (then ``isinstance`` is the whole of xDSL's parse-time check), else
    None (the generic checks run)."""
    from xdsl.irdl.constraints import (
        BaseAttr,
        EqIntConstraint,
        RangeLengthConstraint,
        RangeOf,
        SingleOf,
    )

    def base(d) -> type | None:
        c = d.constr
        if type(c) is SingleOf and type(c.constr) is BaseAttr:
            return c.constr.attr
        if (
            type(c) is RangeLengthConstraint
            and type(c.constraint) is RangeOf
            and type(c.constraint.constr) is BaseAttr
            and c.length == EqIntConstraint(1)
        ):
            return c.constraint.constr.attr  # operand_def(X): exactly one X
        return None

    all_defs: tuple[Mapping[str, AttrOrPropDef], ...] = (op_def.properties, op_def.attributes)
    checked = [
        d for defs in all_defs for d in defs.values() if not (isinstance(d, OptionalDef) and d.default_value is None)
    ]
    operands = tuple(b for _, d in op_def.operands if (b := base(d)) is not None)
    results = tuple(b for _, d in op_def.results if (b := base(d)) is not None)
    if checked or len(operands) != len(op_def.operands) or len(results) != len(op_def.results):
        return None
    return operands, results


# The declarative formats the fast path parses: (fewest operands, most
# operands, a `-> type($result)` after the operand types).  An op whose
# format is not here (or changes) is not handled: it falls back.
_SHAPES: dict[str, tuple[int, int, bool]] = {
    "$source attr-dict `:` type($source) `->` type($result)": (1, 1, True),
    "$input attr-dict `:` type($input) `->` type($result)": (1, 1, True),
    "$input `,` $dest attr-dict `:` type($input) `,` type($dest)": (2, 2, False),
    "$input `,` $weights attr-dict `:` type($input) `,` type($weights) `->` type($result)": (2, 2, True),
    "$input `,` $scale attr-dict `:` type($input) `,` type($scale) `->` type($result)": (2, 2, True),
    "$input `,` $bscale (`,` $gscale^)? attr-dict `:` type($input) `,` type($bscale) "
    "(`,` type($gscale)^)? `->` type($result)": (2, 3, True),
    "attr-dict `:` type($result)": (0, 0, False),
}


class Registry:
    """Op classes the fast path handles, built once per process (the
    classes are xDSL's and fetchc's own; nothing here depends on input)."""

    def __init__(self) -> None:
        from xdsl.dialects.func import FuncOp, ReturnOp

        from fetchc.dialects import fetch, fetch_seq, rngd

        self.formats: dict[type, Format] = {}
        for module in (fetch, rngd, fetch_seq):
            for cls in vars(module).values():
                if isinstance(cls, type) and issubclass(cls, IRDLOperation) and cls.__module__ == module.__name__:
                    shape = _SHAPES.get(cls.assembly_format or "")
                    if shape is not None and hasattr(cls, "name"):
                        self.formats[cls] = Format(cls, shape)
        self.zp_sub = fetch.ZpSubOp
        self.table = fetch_seq.TableOp
        self.func, self.ret, self.module = FuncOp, ReturnOp, ModuleOp
        self.generic = set(self.formats) | {fetch.ZpSubOp, fetch_seq.TableOp, FuncOp, ReturnOp, ModuleOp}
        self.table_format = Format(fetch_seq.TableOp, (0, 0, False))
        self.ret_format = Format(ReturnOp, (0, 0, False))


_registry: Registry | None = None


def get_registry() -> Registry:
    global _registry
    if _registry is None:
        _registry = Registry()
    return _registry


def _simply_valid(simple, types: list[Attribute], results: list[Attribute], variadic: bool) -> bool:
    """The ``isinstance`` form of the checks when :func:`_simple_classes`
    found one and everything is of its class."""
    if simple is None or variadic or len(types) != len(simple[0]) or len(results) != len(simple[1]):
        return False
    return all(isinstance(t, c) for t, c in zip(types, simple[0], strict=False)) and all(
        isinstance(t, c) for t, c in zip(results, simple[1], strict=False)
    )


def check_constraints(
    fmt: Format,
    types: list[Attribute],
    results: list[Attribute],
    props: dict[str, Attribute],
    attrs: dict[str, Attribute],
    variadic: bool = False,
) -> None:
    """xDSL's ``FormatProgram.resolve_constraint_variables``: each operand
    definition's types (an absent optional operand: none), each result's
    type, and the present required (or defaulted) properties and
    attributes.  Raises what xDSL raises (then the input falls back)."""
    if _simply_valid(fmt.simple, types, results, variadic):
        return
    ctx = VerificationContext()
    op_def = fmt.op_def
    if variadic:
        per_def: list[tuple[Attribute, ...]] = [tuple(types)]
    else:
        per_def = [(t,) for t in types] + [()] * (len(op_def.operands) - len(types))
    for found, (_, odef) in zip(per_def, op_def.operands, strict=True):
        odef.constr.verify_length(len(found), ctx)
        odef.constr.verify(found, ctx)
    for typ, (_, rdef) in zip(results, op_def.results, strict=True):
        rdef.constr.verify((typ,), ctx)
    for defs, given in ((op_def.properties, props), (op_def.attributes, attrs)):
        for name, adef in defs.items():
            if isinstance(adef, OptionalDef) and adef.default_value is None:
                continue
            attr = given.get(name, adef.default_value)
            if attr is not None:
                adef.constr.verify(attr, ctx)

"""The fast front end: a hand-written parser for what fetchc's users write.

:func:`fast_parse` parses ``builtin.module`` (named or not, implicit or
explicit), ``func.func`` / ``func.return``, and the ``fetch``, ``rngd`` and
``fetch_seq`` ops in their custom and generic forms, with their types,
attributes and locations (:mod:`fetchc.frontend.fastparse_lex`), and builds
exactly the ops, attributes and locations that
:class:`~fetchc.frontend.located_parser.LocatedParser` builds from the same
text: the same classes and parameters, the same construction (``create``
where xDSL's parser ends in ``build`` or ``create``: the same operands,
results, properties in input order and attributes), the same parse-time
checks (the declarative format's operand, result and property
constraints), and the same locations (an op at its name token, a block
argument at its ``%name``, an explicit ``loc(...)`` winning; line offsets
for ``--split-input-file`` chunks; ``#loc`` aliases used before their
definition at top level).

Anything else (another dialect's op, an unknown op or type, an SSA use
before its definition, more than one block in a region, escapes in
strings, nesting deeper than :data:`~fetchc.frontend.fastparse_lex.MAX_DEPTH`,
and every syntax error) makes :func:`fast_parse` return ``None``: the
caller then parses the whole text with ``LocatedParser``, which reports any
error exactly as before.  The fast path never reports an error itself.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.context import Context
from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    FunctionType,
    LocationAttr,
    ModuleOp,
    StringAttr,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue

from fetchc.dialects.shared import i32_attr
from fetchc.frontend.fastparse_formats import Format, check_constraints, get_registry
from fetchc.frontend.fastparse_lex import _BANG, _CARET, _HASH, AttrLexer, Fallback
from fetchc.frontend.located_parser import (
    _LOC_ALIAS_DEF_RE,
    _LOCATION_TYPES,
    MAX_ALIAS_EXPANSION,
    _expanded_size,
)

__all__ = ["Fallback", "fast_parse"]


def fast_parse(ctx: Context, text: str, filename: str, line_offset: int = 0) -> ModuleOp | None:
    """Parse ``text`` as :func:`fetchc.frontend.parsing.parse_module` would
    with LocatedParser, or return ``None`` (fall back) for anything the fast
    path does not handle or any malformed input.  Raises only
    ``MemoryError``; never verifies."""
    try:
        return FastParser(ctx, text, filename, line_offset).parse_module()
    except MemoryError:
        raise
    except Exception:  # noqa: BLE001 - any failure means: use xDSL's parser
        return None


class FastParser(AttrLexer):
    """One parse of one input (see the module docstring).  Methods raise
    :class:`Fallback` (or any exception) for what they do not handle."""

    def __init__(self, ctx: Context, text: str, filename: str, line_offset: int) -> None:
        super().__init__(ctx, text, filename, line_offset)
        self.reg = get_registry()
        self.values: dict[str, SSAValue] = {}
        self.stack = ["builtin"]
        self.loc_defs: dict[str, int] = {}
        for found in _LOC_ALIAS_DEF_RE.finditer(text):
            self.loc_defs.setdefault(found.group(1), found.start(1))
        self.parsed_ahead: dict[int, int] = {}
        self.resolving: set[str] = set()
        self.alias_sizes: dict[int, int] = {}
        self.ops_by_name: dict[str, Callable[[int], Operation]] = {}

    # -- module and aliases -------------------------------------------------

    def parse_module(self) -> ModuleOp:
        n = len(self.text)
        if self.skip() == n:
            module = ModuleOp([])
            module.location = self.file_loc(0)
            return module
        ops: list[Operation] = []
        while self.skip() < n:
            if self.text[self.pos] in "#!":
                self.alias_def()
            else:
                ops.append(self.operation())
        if not ops:
            raise Fallback("no operation")
        if len(ops) == 1 and isinstance(ops[0], ModuleOp):
            return ops[0]
        module = ModuleOp(ops)
        module.location = ops[0].location
        return module

    def alias_def(self) -> None:
        """``#name = attr`` or ``!name = type`` (xDSL parses both with
        ``parse_attribute``), skipping one parsed ahead for an earlier use."""
        start = self.skip()
        ahead = self.parsed_ahead.pop(start, None)
        if ahead is not None:
            self.pos = ahead
            return
        name = self.match(_HASH) or self.match(_BANG)
        if name is None or name in self.aliases:
            raise Fallback("alias name or re-declaration")
        self.expect("=")
        value = self.attribute()
        self.aliases[name] = value
        if _expanded_size(value, self.alias_sizes) > MAX_ALIAS_EXPANSION:
            raise Fallback("alias expansion")

    def attribute(self) -> Attribute:
        pos = self.skip()
        if self.text.startswith("loc", pos):
            found = self.optional_location()
            if found is not None:
                return found
        return super().attribute()

    def location_alias(self, pos: int) -> LocationAttr:
        found = _HASH.match(self.text, pos)
        if found is None:
            raise Fallback("bad location alias")
        name = found.group(0)
        if name not in self.aliases and name in self.loc_defs:
            self._parse_ahead(name)
        value = self.attribute()
        if not isinstance(value, _LOCATION_TYPES):
            raise Fallback("not a location")
        return value

    def _parse_ahead(self, name: str) -> None:
        """Parse the top-level definition of location alias ``name`` now
        (it is used before its definition), as LocatedParser does."""
        if name in self.resolving:
            raise Fallback("cyclic location alias")
        offset, saved = self.loc_defs[name], self.pos
        self.resolving.add(name)
        self.pos = offset
        self.alias_def()
        self.resolving.discard(name)
        self.parsed_ahead[offset] = self.pos
        self.pos = saved

    # -- SSA values -------------------------------------------------------

    def define(self, name: str, value: SSAValue) -> None:
        if name in self.values:
            raise Fallback("SSA value defined twice")
        self.values[name] = value
        if SSAValue.is_valid_name(name):
            value.name_hint = name

    def use(self, name: str, typ: Attribute) -> SSAValue:
        value = self.values.get(name)
        if value is None or (value.type is not typ and value.type != typ):
            raise Fallback("forward reference or type mismatch")
        return value

    def operand_names(self, most: int) -> list[str]:
        """``%a, %b`` (at most ``most``), no delimiters."""
        names: list[str] = []
        if most == 0 or self.peek() != "%":
            return names
        names.append(self._percent())
        while len(names) < most and self.accept(","):
            names.append(self._percent())
        return names

    def _percent(self) -> str:
        name = self.percent()
        if name is None:
            raise Fallback("expected an SSA name")
        return name

    # -- operations ---------------------------------------------------------

    def operation(self) -> Operation:
        results: list[str] = []
        if self.peek() == "%":
            results.append(self._percent())
            while self.accept(","):
                results.append(self._percent())
            if self.peek() == ":":
                raise Fallback("result tuple")
            self.expect("=")
        name_pos = self.skip()
        if self.text.startswith('"', name_pos):
            op = self.generic_op()
        else:
            op = self.custom_op(name_pos)
        if results:
            if len(results) != len(op.results):
                raise Fallback("result count")
            for name, value in zip(results, op.results, strict=False):
                self.define(name, value)
        return op

    def _op_class(self, name: str | None) -> type[Operation]:
        if name is None:
            raise Fallback("expected an op name")
        cls = self.ctx.get_optional_op(name, dialect_stack=self.stack)
        if cls is None or cls not in self.reg.generic:
            raise Fallback(f"op {name}")
        return cls

    def custom_op(self, name_pos: int) -> Operation:
        cls = self._op_class(self.bare())
        self.stack.append(cls.dialect_name())
        op = self._custom_body(cls)
        self.stack.pop()
        loc = self.optional_location()
        op.location = loc if loc is not None else self.file_loc(name_pos)
        return op

    def _custom_body(self, cls: type[Operation]) -> Operation:
        reg = self.reg
        fmt = reg.formats.get(cls)
        if fmt is not None:
            return self.format_op(fmt)
        if cls is reg.func:
            return self.func_op()
        if cls is reg.ret:
            return self.return_op()
        if cls is reg.zp_sub:
            return self.zp_sub_op()
        if cls is reg.table:
            return self.table_op()
        if cls is reg.module:
            return self.module_op()
        raise Fallback("no custom form")

    def format_op(self, fmt: Format) -> Operation:
        """The declarative formats of :data:`_SHAPES`."""
        names = self.operand_names(fmt.n_max)
        if len(names) < fmt.n_min:
            raise Fallback("operand count")
        attrs = self.dict_entries() if self.peek() == "{" else {}
        self.expect(":")
        types = [self.type()]
        while len(types) < len(names) and self.accept(","):
            types.append(self.type())
        if fmt.n_max == 0:
            results = types
        elif len(types) != len(names):
            raise Fallback("operand type count")
        else:
            results = []
            if fmt.arrow:
                self.expect("->")
                results = [self.type()]
        operands = [self.use(n, t) for n, t in zip(names, types, strict=False)] if fmt.n_max else []
        return self.build(fmt, operands, types if fmt.n_max else [], results, attrs, {})

    def build(
        self,
        fmt: Format,
        operands: list[SSAValue],
        types: list[Attribute],
        results: list[Attribute],
        attrs: dict[str, Attribute],
        props: dict[str, Attribute],
    ) -> Operation:
        """What ``FormatProgram.parse`` does after parsing: the attr-dict's
        properties moved out (in input order), the constraint checks of
        ``resolve_constraint_variables``, then the op (``create`` builds
        what ``build`` builds when the operand counts are right)."""
        if fmt.reserved & attrs.keys():
            raise Fallback("reserved attribute")
        for name in [k for k in attrs if k in fmt.expected]:
            props[name] = attrs.pop(name)
        check_constraints(fmt, types, results, props, attrs)
        return fmt.cls.create(operands=operands, result_types=results, properties=props, attributes=attrs)

    def zp_sub_op(self) -> Operation:
        """``fetch.zp_sub``'s own ``parse``: ``%s, ZP {attrs} : T -> U``."""
        name = self._percent()
        self.expect(",")
        zp = self.integer()
        if zp is None or not -(2**31) <= zp < 2**31:
            raise Fallback("zero point")
        attrs = self.dict_entries() if self.peek() == "{" else {}
        if "zero_point" in attrs:
            raise Fallback("zero_point in the attribute dictionary")
        self.expect(":")
        in_t = self.type()
        self.expect("->")
        out_t = self.type()
        operand = self.use(name, in_t)
        props = {"zero_point": i32_attr(zp)}
        return self.reg.zp_sub.create(operands=[operand], result_types=[out_t], properties=props, attributes=attrs)

    def table_op(self) -> Operation:
        """``fetch_seq.table @sym {attrs}`` (format ``$sym_name attr-dict``)."""
        props: dict[str, Attribute] = {"sym_name": StringAttr(self.symbol_name())}
        attrs = self.dict_entries() if self.peek() == "{" else {}
        return self.build(self.reg.table_format, [], [], [], attrs, props)

    def return_op(self) -> Operation:
        """``func.return`` (format ``attr-dict ($arguments^ : type($arguments))?``)."""
        attrs = self.dict_entries() if self.peek() == "{" else {}
        names = self.operand_names(1 << 30)
        operands: list[SSAValue] = []
        if names:
            self.expect(":")
            types = [self.type()]
            while self.accept(","):
                types.append(self.type())
            if len(types) != len(names):
                raise Fallback("return type count")
            operands = [self.use(n, t) for n, t in zip(names, types, strict=False)]
        fmt = self.reg.ret_format
        if fmt.reserved & attrs.keys():
            raise Fallback("reserved attribute")
        check_constraints(fmt, [o.type for o in operands], [], {}, attrs, variadic=True)
        return self.reg.ret.create(operands=operands, attributes=attrs)

    def module_op(self) -> Operation:
        """``builtin.module @name attributes {...} {...}`` (ModuleOp.parse)."""
        name = StringAttr(self.symbol_name()) if self.peek() == "@" else None
        attrs = None
        if self.keyword("attributes"):
            attrs = self.dict_entries()
        if self.peek() != "{":
            raise Fallback("module without a region")
        region = self.region(None)
        if not region.blocks:
            region.add_block(Block())
        return ModuleOp(region, attrs, name)

    def generic_op(self) -> Operation:
        """``"name"(%a) <{props}> ({regions}) {attrs} : (T) -> U loc(...)``."""
        name_pos = self.pos
        cls = self._op_class(self.string())
        self.stack.append(cls.dialect_name())
        self.expect("(")
        names = self.operand_names(1 << 30)
        self.expect(")")
        if self.peek() == "[":
            raise Fallback("successors")
        props: dict[str, Attribute] = {}
        if self.accept("<"):
            props = self.dict_entries()
            self.expect(">")
        regions = self._region_list()
        attrs = self.dict_entries() if self.peek() == "{" else {}
        self.expect(":")
        if self.peek() != "(":
            raise Fallback("function type expected")
        ftype = self.type()
        assert isinstance(ftype, FunctionType)
        loc = self.optional_location()
        inputs = ftype.inputs.data
        if len(inputs) != len(names):
            raise Fallback("operand count")
        operands = [self.use(n, t) for n, t in zip(names, inputs, strict=False)]
        for prop in cls.get_irdl_definition().properties:  # type: ignore[attr-defined]  # a class of reg.generic: an IRDL op
            if prop in attrs and prop not in props:
                props[prop] = attrs.pop(prop)
        self.stack.pop()
        op = cls.create(
            operands=operands, result_types=ftype.outputs.data, properties=props, attributes=attrs, regions=regions
        )
        op.location = loc if loc is not None else self.file_loc(name_pos)
        return op

    def _region_list(self) -> list[Region]:
        if self.peek() != "(":
            return []
        self.expect("(")
        regions = [self.region(None)]
        while self.accept(","):
            regions.append(self.region(None))
        self.expect(")")
        return regions

    # -- functions ----------------------------------------------------------

    def func_op(self) -> Operation:
        """``func.func`` as xDSL's ``FuncOp.parse`` / ``parse_func_op_like``."""
        visibility = None
        for word in ("public", "nested", "private"):
            if self.keyword(word):
                visibility = StringAttr(word)
                break
        name = self.symbol_name()
        named, types = self._func_inputs()
        outputs, res_attrs = self._func_outputs()
        extra = None
        if self.keyword("attributes"):
            extra = self.dict_entries()
            if {"sym_name", "function_type", "sym_visibility"} & extra.keys():
                raise Fallback("reserved function attribute")
        arg_attrs = None
        if any(attrs for _, _, _, attrs, _ in named):
            arg_attrs = ArrayAttr([DictionaryAttr(attrs) for _, _, _, attrs, _ in named])
        region = self.region(named if named else None) if self.peek() == "{" else Region()
        props: dict[str, Attribute] = {
            "sym_name": StringAttr(name),
            "function_type": FunctionType.from_lists(types, outputs),
        }
        for key, value in (("sym_visibility", visibility), ("arg_attrs", arg_attrs), ("res_attrs", res_attrs)):
            if value is not None:
                props[key] = value
        op = self.reg.func.create(properties=props, regions=[region])
        if extra is not None:
            op.attributes |= extra
        return op

    def _func_inputs(self) -> tuple[list[tuple], list[Attribute]]:
        """The argument list: named ``(name, offset, type, attrs, loc)`` or
        bare types (their attributes and locations are dropped, as xDSL does)."""
        named: list[tuple] = []
        types: list[Attribute] = []
        self.expect("(")
        if self.accept(")"):
            return named, types
        while True:
            self._func_input(named, types)
            if not self.accept(","):
                break
        self.expect(")")
        if named and len(named) != len(types):
            raise Fallback("named and unnamed arguments")
        return named, types

    def _func_input(self, named: list[tuple], types: list[Attribute]) -> None:
        offset = self.skip()
        name = self.percent()
        if name is not None:
            self.expect(":")
        typ = self.type()
        attrs = self.dict_entries() if self.peek() == "{" else {}
        loc = self.optional_location()
        if loc is not None and self.peek() == "{":
            raise Fallback("argument attributes after the location")
        types.append(typ)
        if name is not None:
            named.append((name, offset, typ, attrs, loc))

    def _func_outputs(self) -> tuple[list[Attribute], ArrayAttr | None]:
        if not self.accept("->"):
            return [], None
        if self.peek() != "(":
            return [self.type()], None
        self.expect("(")
        if self.accept(")"):
            return [], None
        pairs = [self._func_output()]
        while self.accept(","):
            pairs.append(self._func_output())
        self.expect(")")
        types = [t for t, _ in pairs]
        if not any(a for _, a in pairs):
            return types, None
        return types, ArrayAttr([DictionaryAttr(a) for _, a in pairs])

    def _func_output(self) -> tuple[Attribute, dict[str, Attribute]]:
        typ = self.type()
        return typ, (self.dict_entries() if self.peek() == "{" else {})

    # -- regions and blocks -------------------------------------------------

    def region(self, args: Sequence[tuple] | None) -> Region:
        """``{ ops }`` with at most one block (entry arguments ``args`` as
        ``_func_inputs`` gives them); its SSA names are scoped as xDSL's."""
        self.expect("{")
        self.nest()
        saved = self.values.copy()
        region = Region()
        c = self.peek()
        if args is not None:
            if c == "^":
                raise Fallback("labelled entry block with arguments")
            block = Block(arg_types=[a[2] for a in args])
            for arg, (name, offset, _, _, loc) in zip(block.args, args, strict=True):
                self.define(name, arg)
                arg.location = loc if loc is not None else self.file_loc(offset)
            region.add_block(self.block_body(block))
        elif c not in ("^", "}"):
            region.add_block(self.block_body(Block()))
        if self.peek() == "^":
            if region.blocks:
                raise Fallback("more than one block")
            region.add_block(self.labelled_block())
        self.expect("}")
        self.values = saved
        self.depth -= 1
        return region

    def block_body(self, block: Block) -> Block:
        text = self.text
        while True:
            pos = self.skip()
            c = text[pos : pos + 1]
            if not c or c in "}^":
                return block
            block.add_op(self.operation())

    def labelled_block(self) -> Block:
        label = self.match(_CARET)
        assert label is not None
        block = Block()
        name = label[1:]
        if not Block.is_default_block_name(name):
            block.name_hint = name
        if self.accept("(") and not self.accept(")"):
            self._block_arg(block)
            while self.accept(","):
                self._block_arg(block)
            self.expect(")")
        self.expect(":")
        return self.block_body(block)

    def _block_arg(self, block: Block) -> None:
        offset = self.skip()
        name = self._percent()
        self.expect(":")
        typ = self.attribute()
        loc = self.optional_location()
        arg = block.insert_arg(typ, len(block.args), loc)
        self.define(name, arg)
        if loc is None:
            arg.location = self.file_loc(offset)

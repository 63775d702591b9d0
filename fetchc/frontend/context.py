"""The xDSL context and pass registry fetchc uses.

:func:`make_context` knows every xDSL dialect (lazily, as ``xdsl-opt`` does)
plus ``fetch``, ``rngd`` and ``fetch_seq``; :func:`all_passes` maps pass
names (fetchc's and xDSL's built-in ones) to pass classes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from xdsl.context import Context
from xdsl.dialects import get_all_dialects
from xdsl.ir import Dialect
from xdsl.passes import ModulePass


def fetchc_dialects() -> dict[str, Callable[[], Dialect]]:
    """Name → factory for fetchc's own dialects."""

    def fetch():
        from fetchc.dialects.fetch import Fetch

        return Fetch

    def rngd():
        from fetchc.dialects.rngd import Rngd

        return Rngd

    def fetch_seq():
        from fetchc.dialects.fetch_seq import FetchSeq

        return FetchSeq

    return {"fetch": fetch, "rngd": rngd, "fetch_seq": fetch_seq}


def fetchc_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    """Name → factory for fetchc's own passes (ir.md §4)."""

    def route():
        from fetchc.passes.route_sub_decode import RouteSubDecodePass

        return RouteSubDecodePass

    def place():
        from fetchc.passes.place_dm import PlaceDmPass

        return PlaceDmPass

    def legalize():
        from fetchc.passes.legalize_convert import LegalizeConvertPass

        return LegalizeConvertPass

    def split():
        from fetchc.passes.split_scaling import SplitScalingPass

        return SplitScalingPass

    def to_seq():
        from fetchc.passes.fetch_to_seq import FetchToSeqPass

        return FetchToSeqPass

    return {
        "fetch-route-sub-decode": route,
        "fetch-place-dm": place,
        "fetch-legalize-convert": legalize,
        "fetch-split-scaling": split,
        "fetch-to-seq": to_seq,
    }


_shared: Context | None = None


def shared_context() -> Context:
    """One :func:`make_context` per process, for ``fetchc.compile`` and the
    command line: like an ``MLIRContext``, it is shared by every compile, so
    dialects load once.  It holds no parse state: every parse starts afresh
    (aliases are per input)."""
    global _shared
    if _shared is None:
        _shared = make_context()
    return _shared


def make_context() -> Context:
    """A context with all xDSL dialects and fetchc's registered (lazily)."""
    ctx = Context()
    for name, factory in {**get_all_dialects(), **fetchc_dialects()}.items():
        if name not in ctx.registered_dialect_names:
            ctx.register_dialect(name, factory)
    return ctx


def all_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    """fetchc's passes and xDSL's built-in ones, by pipeline name."""
    from xdsl.transforms import get_all_passes

    return {**get_all_passes(), **fetchc_passes()}


SUGGESTED_DIALECTS = ("fetch", "rngd", "fetch_seq", "func", "arith")
"""Where :func:`closest_op_name` looks when the op's own dialect is unknown."""


def closest_op_name(ctx: Context, name: str) -> str | None:
    """The registered op name closest to the unknown ``name`` (a typo such as
    ``fetch.cnvert`` → ``fetch.convert``), for a "did you mean" hint: among
    the ops of ``name``'s dialect when that dialect is registered, else of
    :data:`SUGGESTED_DIALECTS`.  None when nothing is close
    (:func:`closest_name`)."""
    dialect = name.partition(".")[0]
    known = set(ctx.registered_dialect_names)
    pool = [dialect] if dialect in known else [d for d in SUGGESTED_DIALECTS if d in known]
    names: list[str] = []
    for d in pool:
        try:
            names.extend(op.name for op in ctx.get_dialect(d).operations)
        except Exception:  # noqa: BLE001 - a dialect that fails to load offers no suggestion
            continue
    return closest_name(name, names)


def closest_name(name: str, names: Iterable[str]) -> str | None:
    """The one of ``names`` closest to the unknown ``name``, for a "did you
    mean" hint (op and pass names), or None when none is close (difflib's
    ratio below 0.75)."""
    import difflib

    found = difflib.get_close_matches(name, list(names), n=1, cutoff=0.75)
    return found[0] if found else None

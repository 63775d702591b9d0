"""The builder's numeric arguments (issue 26 item 12; ``fetchc.builder``,
"Numeric arguments").

``np.int64`` packet sizes or zero points, float zero points and string
scales failed deep inside (``TypeError ... memoryview``, ``AttributeError``,
``NotImplementedError: semi-affine``).  Every numeric argument of every
builder call now goes through one check (``builder._number``): numpy
integers (and numpy floats for ``scale``) build exactly what Python numbers
build, and anything else is a ``TypeError`` naming the call and the
argument, raised before any op is built.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import fetchc
from fetchc.builder import Arg, ModuleBuilder, memref, rows_map


def _everything(n, f) -> bytes:
    """One module that passes a number to every numeric argument of the
    builder, each through ``n`` (integers) or ``f`` (the scale); its
    seq.bin."""
    mb = ModuleBuilder(locations=False)
    k = mb.kernel(
        "k",
        a=Arg(memref([n(64), n(32)], "i8"), dm_base=n(0)),
        t="!rngd.trf<i8>",
        acc=memref(np.array([64, 32]) if n is np.int64 else [64, 32], "i32"),
        q=memref((n(64), n(32)), "i8", strides=[n(32), n(1)], offset=n(0)),
        y=memref([n(64), n(32)], "bf16"),
        w=Arg(memref([n(16), n(64)], "f4E2M1FN"), slice_dim=n(0)),
        s=memref([n(16), n(4)], "f8E4M3FN"),
        g="f32",
        d=memref([n(16), n(64)], "f32"),
        v=memref([n(32), n(64)], "i8"),
        vo=memref([n(64), n(32)], "i8"),
        slices=n(2),
    )
    a, t, acc, q, y, w, s, g, d, v, vo = k.args
    k.fetch(a, [n(64)], n(32), base=n(0), read_size=n(32)).zp_sub(n(-3)).contract_outer(t).commit(acc)
    k.fetch_rows(q, n(32), shape=[n(64), n(32)], offset=(n(0), n(0))).lookup(
        fn="silu", scale=f(0.25), zero_point=n(-12)
    ).commit(y)
    k.fetch_rows(w, packet=n(64)).dequant(s, g, scale_base=None).commit(d)
    k.fetch(v, (n(32), n(1)), [n(64)], map=rows_map(n(2), n(64), [n(0), n(0)])).transpose(n(64), [n(32)]).commit(vo)
    return fetchc.compile(mb.finish(), cache=False).seq_bin


@pytest.fixture(scope="module")
def reference() -> bytes:
    return _everything(int, float)


@pytest.mark.parametrize("n", [np.int64, np.int32, np.int16])
@pytest.mark.parametrize("f", [np.float32, np.float64, float])
def test_numpy_numbers_build_what_python_numbers_build(reference, n, f):
    assert _everything(n, f) == reference


def test_a_block_given_as_a_numpy_integer():
    mb = ModuleBuilder(locations=False)
    k = mb.kernel("k", c=memref([64, 64], "f8E4M3FN"), s=memref([64, 4], "f8E4M3FN"), o=memref([64, 64], "f32"))
    c, s, o = k.args
    y = k.fetch_rows(c, packet=64).cast().block_scale(k.fetch_rows(s, packet=4).cast(), np.int64(16))
    assert y.op.block.value.data == 16
    y.commit(o)


def _kernel():
    mb = ModuleBuilder(locations=False)
    k = mb.kernel("k", x=memref([64, 32], "i8"), b=memref([64, 32], "bf16"))
    return mb, k


def _rows(k):
    return k.fetch_rows(k.args[0], packet=32)


# call -> (what is built first, the call given the bad value)
CALLS = {
    "fetch: packet": (None, lambda k, v: k.fetch(k.args[0], [64], v)),
    "fetch: time": (None, lambda k, v: k.fetch(k.args[0], [v], [32])),
    "fetch: base": (None, lambda k, v: k.fetch(k.args[0], [64], [32], base=v)),
    "fetch: read_size": (None, lambda k, v: k.fetch(k.args[0], [64], [32], read_size=v)),
    "fetch_rows: packet": (None, lambda k, v: k.fetch_rows(k.args[0], packet=v)),
    "fetch_rows: shape": (None, lambda k, v: k.fetch_rows(k.args[0], packet=32, shape=[64, v])),
    "fetch_rows: offset": (None, lambda k, v: k.fetch_rows(k.args[0], packet=32, offset=[v, 0])),
    "zp_sub: zero_point": (_rows, lambda s, v: s.zp_sub(v)),
    "lookup: zero_point": (_rows, lambda s, v: s.lookup(fn="silu", zero_point=v)),
    "transpose: time": (_rows, lambda s, v: s.transpose(v, 32)),
    "rows_map: packet": (None, lambda k, v: rows_map(2, v)),
    "memref: strides": (None, lambda k, v: memref([4], "i8", strides=[v])),
    "memref: offset": (None, lambda k, v: memref([4], "i8", strides=[1], offset=v)),
}
SEQUENCES = ("fetch: packet", "transpose: time")  # an integer or a sequence of them


@pytest.mark.parametrize("value, shown", [(32.0, "float 32.0"), ("32", "str '32'"), (True, "bool True"),
                                          (np.float32(4), "float32 4.0"), (np.bool_(True), "bool True"),
                                          (None, "NoneType None")])  # fmt: skip
@pytest.mark.parametrize("call", sorted(CALLS))
def test_a_non_integer_is_a_type_error_naming_the_argument(call, value, shown):
    if value is None and call.split(": ")[1] in ("base", "read_size", "offset", "zero_point"):
        pytest.skip("None means 'not given' there")
    mb, k = _kernel()
    prepare, act = CALLS[call]
    target = prepare(k) if prepare is not None else k
    before = len(list(k.func.body.block.ops))
    with pytest.raises(TypeError) as e:
        act(target, value)
    kind = "an integer or a sequence of integers" if call in SEQUENCES and isinstance(value, str) else (
        "an integer (a Python or numpy int)")  # fmt: skip
    assert str(e.value).startswith(f"{call} must be {kind}, not {shown}"), str(e.value)
    assert len(list(k.func.body.block.ops)) == before  # nothing half-built


@pytest.mark.parametrize("value, shown", [("0.5", "str '0.5'"), (True, "bool True"), ([0.5], "list [0.5]")])
def test_a_scale_that_is_not_a_number_is_a_type_error(value, shown):
    _, k = _kernel()
    want = f"lookup: scale must be a number (a Python or numpy int or float), not {shown}"
    with pytest.raises(TypeError, match="^" + re.escape(want)):
        k.fetch_rows(k.args[0], packet=32).lookup(fn="silu", scale=value)


def test_kernel_level_numbers():
    mb = ModuleBuilder(locations=False)
    with pytest.raises(TypeError, match=r"^kernel k: slices must be an integer \(a Python or numpy int\), not float 2.0$"):
        mb.kernel("k", x=memref([4], "i8"), slices=2.0)
    with pytest.raises(TypeError, match=r"^kernel k: the dm_base of 'x' must be an integer .*, not str '64'$"):
        mb.kernel("k", x=Arg(memref([4], "i8"), dm_base="64"))
    with pytest.raises(TypeError, match=r"^kernel k: the slice_dim of 'x' must be an integer .*, not float 0.0$"):
        mb.kernel("k", x=Arg(memref([4], "i8"), slice_dim=0.0))
    with pytest.raises(ValueError, match=r"^memref: sizes must be non-negative integers \(static shapes\), not float 2.0"):
        memref([4, 2.0], "i8")
    with pytest.raises(TypeError, match=r"^fetch: packet must be an integer or a sequence of integers, not str '32'$"):
        mb2, k = _kernel()
        k.fetch(k.args[0], [64], "32")

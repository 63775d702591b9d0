"""Messages show the value as written (issue 26 item 10).

``rngd.slices = true`` and ``rngd.slice_dim = true`` were reported as ``-1``
(xDSL holds the ``i1`` ``true`` as -1), and ``false`` was taken for the
number 0 (``rngd.slice_dim = false`` split along dimension 0,
``rngd.dm_base = false`` placed the tensor at 0).  A boolean is no number
(``fetchc.kernel.int_value``), and the message shows it as written.  An
``ml_dtypes`` array in memory (``float8_e4m3fn``, ``bfloat16``: numpy kind
void) was named ``<V1`` / ``<V2`` and taken for raw bits of whatever type
the tensor has; only real void items (``np.save``'d ones) are raw bits now,
and a dtype is named as the user knows it.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from samples import DECODE

import fetchc
from fetchc.diagnostics import DiagnosticError
from fetchc.golden.inputs import InputError

HEAD = "func.func @decode(%w: memref<64x16xf4E2M1FN>, %out: memref<64x16xf8E4M3FN>) {"


def _message(head: str) -> str:
    with pytest.raises(DiagnosticError) as e:
        fetchc.compile(DECODE.replace(HEAD, head), filename="k.mlir", cache=False)
    (d,) = e.value.diagnostics
    assert d.loc == ("k.mlir", 1, 1)
    return d.message


@pytest.mark.parametrize("value", ["true", "false", "1 : i1"])
def test_a_boolean_rngd_slices_is_shown_as_written(value):
    head = HEAD.replace(") {", f") attributes {{rngd.slices = {value}}} {{")
    shown = "false" if value == "false" else "true"  # MLIR's spelling of an i1
    assert _message(head).startswith(f"'func.func' op rngd.slices = {shown} is not a number of slices from 1 to 512")


@pytest.mark.parametrize("value", ["true", "false"])
def test_a_boolean_slice_dim_is_refused_and_shown_as_written(value):
    head = HEAD.replace("%w: memref<64x16xf4E2M1FN>", f"%w: memref<64x16xf4E2M1FN> {{rngd.slice_dim = {value}}}")
    head = head.replace(") {", ") attributes {rngd.slices = 4 : i64} {")
    assert _message(head) == (
        "'func.func' op rngd.slice_dim of %w must be an integer dimension (e.g. {rngd.slice_dim = 0 : i64}), "
        f"not {value}"
    )


@pytest.mark.parametrize("value", ["true", "false"])
def test_a_boolean_dm_base_is_refused_and_shown_as_written(value):
    head = HEAD.replace("%w: memref<64x16xf4E2M1FN>", f"%w: memref<64x16xf4E2M1FN> {{rngd.dm_base = {value}}}")
    text = DECODE.replace(HEAD, head).replace("{base = 4096 : i64} ", "")
    with pytest.raises(DiagnosticError) as e:
        fetchc.compile(text, filename="k.mlir", cache=False)
    (d,) = e.value.diagnostics
    assert d.message == (
        "'func.func' op rngd.dm_base of %w must be an integer DM byte address (e.g. {rngd.dm_base = 4096 : i64}), "
        f"not {value}"
    )


def test_integers_of_any_width_still_count():
    head = HEAD.replace("%w: memref<64x16xf4E2M1FN>", "%w: memref<64x16xf4E2M1FN> {rngd.slice_dim = 0 : i8}")
    head = head.replace(") {", ") attributes {rngd.slices = 2 : ui16} {")
    sb = fetchc.compile(DECODE.replace(HEAD, head), cache=False).seqbin
    (k,) = sb.manifest.kernels
    assert (k.slices, k.tensors[0].slice_dim) == (2, 0)


@pytest.fixture(scope="module")
def f8_kernel():
    """A copy of an f8E5M2 tensor (no stage): the output is the input's bits."""
    return """func.func @copy(%x: memref<64x16xf8E5M2>, %y: memref<64x16xf8E5M2>) {
  %s = fetch.fetch %x : memref<64x16xf8E5M2> -> !fetch.stream<main, [64], [16], f8E5M2>
  rngd.commit %s, %y : !fetch.stream<main, [64], [16], f8E5M2>, memref<64x16xf8E5M2>
  func.return
}
"""


@pytest.mark.parametrize(
    "dtype, name",
    [(ml_dtypes.float8_e4m3fn, "float8_e4m3fn"), (ml_dtypes.int4, "int4"), (ml_dtypes.float8_e8m0fnu, "float8_e8m0fnu")],
)
def test_an_ml_dtypes_array_of_another_type_is_a_type_error_naming_its_dtype(f8_kernel, dtype, name):
    with pytest.raises(InputError, match=rf"got an array of shape \(64, 16\) and dtype {name}$"):
        fetchc.run(f8_kernel, x=np.zeros((64, 16), dtype))


def test_a_wrong_shape_names_the_ml_dtypes_type(f8_kernel):
    with pytest.raises(InputError, match=r"got an array of shape \(3,\) and dtype float8_e5m2$"):
        fetchc.run(f8_kernel, x=np.zeros((3,), ml_dtypes.float8_e5m2))
    with pytest.raises(InputError, match=r"got an array of shape \(64, 16\) and dtype bfloat16$"):
        fetchc.run(f8_kernel, x=np.zeros((64, 16), ml_dtypes.bfloat16))


def test_void_items_from_np_save_are_still_raw_bits(f8_kernel, tmp_path):
    bits = (np.arange(64 * 16) % 256).astype(np.uint8).reshape(64, 16)
    path = tmp_path / "x.npy"
    np.save(path, bits.view(ml_dtypes.float8_e4m3fn))  # the file says only '|V1'
    loaded = np.load(path)
    assert loaded.dtype.type is np.void
    for given in (loaded, bits, bits.view(ml_dtypes.float8_e5m2)):
        out = fetchc.run(f8_kernel, x=given)["y"]
        assert np.array_equal(np.asarray(out).view(np.uint8), bits)

"""fetchc.golden.inputs: user arrays -> DM bytes for ``fetchc run`` /
``fetchc sim --arg`` (ir.md §2a, §5; hardware.md §3).

Expected bytes are written out here by hand (little-endian, element 2i in
the low nibble, element address offset + Σ i·stride), never from fetchc's
packing code.
"""

from __future__ import annotations

import io
import math
import pathlib
import re

import ml_dtypes
import numpy as np
import pytest

from fetchc.golden.inputs import (
    InputError,
    TensorSpec,
    canonical_values,
    check_names,
    dm_image,
    load_npy,
    read_files,
    parse_arg_specs,
    place,
    scalar_value,
)
from fetchc.target import BF16, F4E2M1FN, F8E4M3FN, F8E5M2, F8E8M0FNU, F32, I4, I8, I16, I32

OWN = {F32: np.float32, I8: np.int8, I16: np.int16, I32: np.int32, BF16: ml_dtypes.bfloat16,
       F8E4M3FN: ml_dtypes.float8_e4m3fn, F8E5M2: ml_dtypes.float8_e5m2, F8E8M0FNU: ml_dtypes.float8_e8m0fnu,
       F4E2M1FN: ml_dtypes.float4_e2m1fn, I4: ml_dtypes.int4}  # fmt: skip
RAW = {1: np.uint8, 2: np.uint16, 4: np.uint32}


def rand_bits(shape, itemsize, seed=0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.integers(0, 256, math.prod(shape) * itemsize, dtype=np.uint8).view(RAW[itemsize]).reshape(shape)


def saved_and_loaded(a: np.ndarray, via_numpy: bool = True) -> np.ndarray:
    """``a`` through ``np.save`` and back: ``np.load`` (``via_numpy``) or
    fetchc's :func:`load_npy`."""
    buf = io.BytesIO()
    np.save(buf, a)
    if via_numpy:
        buf.seek(0)
        return np.load(buf)
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        p = pathlib.Path(d) / "a.npy"
        p.write_bytes(buf.getvalue())
        return load_npy("t", p)


def bits_of(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a)
    return a.view(RAW[a.dtype.itemsize])


# --------------------------------------------------------------------------
# Accepted forms
# --------------------------------------------------------------------------

WIDE = [F32, I8, I16, I32, BF16, F8E4M3FN, F8E5M2, F8E8M0FNU]


@pytest.mark.parametrize("elem", WIDE, ids=str)
def test_own_type_and_raw_bits(elem):
    size = elem.bits // 8
    raw = rand_bits((3, 5), size, seed=elem.code)
    own = raw.view(OWN[elem])
    spec = TensorSpec("t", elem, (3, 5))
    for given in (own, raw):
        got = canonical_values(spec, given)
        assert got.dtype == np.dtype(OWN[elem]) and got.shape == (3, 5)
        assert np.array_equal(bits_of(got), raw)


@pytest.mark.parametrize("elem", [BF16, F8E4M3FN, F8E8M0FNU], ids=str)
def test_void_arrays_from_np_save(elem):
    """np.save writes these ml_dtypes arrays as raw void items ('<V1',
    '<V2'), which do not say which type wrote them: raw bits of the tensor's
    type, through np.load and fetchc's reader alike."""
    raw = rand_bits((4, 2), elem.bits // 8, seed=1)
    for loaded in (saved_and_loaded(raw.view(OWN[elem]), via_numpy=False), saved_and_loaded(raw.view(OWN[elem]))):
        assert loaded.dtype.kind == "V" and loaded.dtype.itemsize == elem.bits // 8  # raw void items
        got = canonical_values(TensorSpec("t", elem, (4, 2)), loaded)
        assert got.dtype == np.dtype(OWN[elem]) and np.array_equal(bits_of(got), raw)


def test_e5m2_files_keep_their_type():
    """np.save writes float8_e5m2 as '<f1' (its own
    descriptor): read as float8_e5m2, so given for an f8E4M3FN tensor it is
    a type error (as the same array is in Python), never raw bits (1.0 in
    e5m2, 0x3C, is 1.5 in e4m3fn)."""
    one = np.ones((4, 2), ml_dtypes.float8_e5m2)
    loaded = saved_and_loaded(one, via_numpy=False)
    assert loaded.dtype == np.dtype(ml_dtypes.float8_e5m2)
    assert np.array_equal(bits_of(canonical_values(TensorSpec("t", F8E5M2, (4, 2)), loaded)), bits_of(one))
    for elem in (F8E4M3FN, F8E8M0FNU):
        for given in (loaded, one):
            with pytest.raises(InputError, match=r"got an array of shape \(4, 2\) and dtype float8_e5m2"):
                canonical_values(TensorSpec("t", elem, (4, 2)), given)


def test_np_load_cannot_read_e5m2_files_but_load_npy_can():
    buf = io.BytesIO()
    np.save(buf, np.zeros(3, ml_dtypes.float8_e5m2))
    assert b"'descr': '<f1'" in buf.getvalue()
    buf.seek(0)
    with pytest.raises((TypeError, ValueError)):
        np.load(buf)


@pytest.mark.parametrize("elem", [F4E2M1FN, I4], ids=str)
def test_four_bit_forms(elem):
    rng = np.random.default_rng(2)
    codes = rng.integers(0, 16, (3, 8), dtype=np.uint8)
    spec = TensorSpec("w", elem, (3, 8))
    packed = np.zeros((3, 4), np.uint8)
    for r in range(3):
        for j in range(4):
            packed[r, j] = codes[r, 2 * j] | (codes[r, 2 * j + 1] << 4)  # even element low
    own = codes.view(ml_dtypes.float4_e2m1fn) if elem == F4E2M1FN else (((codes.astype(np.int8) ^ 8) - 8)).astype(ml_dtypes.int4)
    forms = [own, codes, packed, saved_and_loaded(own)]
    if elem == I4:
        forms.append(((codes.astype(np.int8) ^ 8) - 8).astype(np.int8))  # int8 -8..7
    for given in forms:
        got = canonical_values(spec, given)
        assert got.dtype == np.dtype(OWN[elem]) and got.shape == (3, 8)
        assert np.array_equal(got.view(np.uint8) & 0x0F, codes), given.dtype


def test_big_endian_arrays_are_swapped():
    x = np.array([1.5, -2.0, 3.25], dtype=">f4")
    got = canonical_values(TensorSpec("x", F32, (3,)), x)
    assert got.dtype == np.float32 and got.tolist() == [1.5, -2.0, 3.25]
    y = np.array([-2, 300], dtype=">i2")
    assert canonical_values(TensorSpec("y", I16, (2,)), y).tolist() == [-2, 300]


def test_zero_d_tensor():
    got = canonical_values(TensorSpec("s", F32, ()), np.array(2.5, np.float32))
    assert got.shape == () and got[()] == 2.5


# --------------------------------------------------------------------------
# Rejected forms
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "elem,shape,given,expect",
    [
        (F32, (2, 3), np.zeros((3, 2), np.float32), "got an array of shape (3, 2) and dtype float32"),
        (F32, (2, 3), np.zeros((2, 3)), "dtype float64 (convert with .astype(numpy.float32)"),
        (F32, (2, 3), [[0.0] * 3] * 2, "needs an array"),
        (BF16, (4,), np.zeros(4, np.float32), "dtype float32"),
        (BF16, (4,), np.zeros(4, np.uint8), "dtype uint8"),
        (F8E4M3FN, (4,), np.zeros(4, np.uint16), "dtype uint16"),
        (F8E4M3FN, (4,), np.zeros(4, ml_dtypes.float8_e5m2), "dtype float8_e5m2"),
        (F8E4M3FN, (4,), np.zeros(4, "V2"), "|V2"),
        (I8, (4,), np.zeros(4, np.int16), "dtype int16"),
        (F4E2M1FN, (2, 8), np.zeros((2, 8), np.int8), "dtype int8"),  # int8 only for i4
        (F4E2M1FN, (2, 8), np.zeros((2, 5), np.uint8), "shape (2, 5)"),
        (F4E2M1FN, (2, 7), np.zeros((2, 3), np.uint8), "shape (2, 3)"),  # odd last dim: no packed form
        (F4E2M1FN, (2, 8), np.zeros((2, 4), "V1"), "|V1"),  # a void array is one code per byte, not packed
        (I4, (2, 8), np.zeros((2, 8), np.float32), "dtype float32"),
    ],
)
def test_rejected(elem, shape, given, expect):
    spec = TensorSpec("w", elem, shape)
    with pytest.raises(InputError) as err:
        canonical_values(spec, given)
    msg = str(err.value)
    assert msg.startswith(f"tensor 'w' (memref<{'x'.join(map(str, shape))}x{elem}>)"), msg
    assert f"expected shape {'(' + ', '.join(map(str, shape)) + (',' if len(shape) == 1 else '') + ')'} of {elem}" in msg
    assert expect in msg, msg


def test_rejected_message_lists_the_accepted_forms():
    with pytest.raises(InputError) as err:
        canonical_values(TensorSpec("w", F4E2M1FN, (4, 16)), np.zeros((4, 16), np.float32))
    msg = str(err.value)
    for form in ("float4_e2m1fn", "uint8 codes 0-15", "|V1", "uint8 packed two per byte, shape (4, 8)"):
        assert form in msg, msg


def test_codes_out_of_range():
    codes = np.zeros((2, 8), np.uint8)
    codes[1, 3] = 16
    with pytest.raises(InputError, match=r"4-bit codes must lie in \[0, 15\], but element \(1, 3\) is 16; a packed array .* shape \(2, 4\)"):
        canonical_values(TensorSpec("w", F4E2M1FN, (2, 8)), codes)
    v = np.zeros((2, 8), np.int8)
    v[0, 0] = 8
    with pytest.raises(InputError, match=r"i4 values must lie in \[-8, 7\], but element \(0, 0\) is 8"):
        canonical_values(TensorSpec("q", I4, (2, 8)), v)
    loaded = saved_and_loaded(np.full((2, 8), 0x21, np.uint8)).view("V1")
    with pytest.raises(InputError, match="must lie in"):
        canonical_values(TensorSpec("w", I4, (2, 8)), loaded)


# --------------------------------------------------------------------------
# Scalars
# --------------------------------------------------------------------------


def f32_bits(x) -> int:
    return int(np.array([x], np.float32).view(np.uint32)[0])


@pytest.mark.parametrize(
    "given,want",
    [
        (0.5, 0x3F000000), (0.1, f32_bits(0.1)), (3, 0x40400000), (np.float64(0.1), f32_bits(0.1)),
        (np.float32(0.37), f32_bits(0.37)), (np.array(2.0, np.float32), 0x40000000), (np.int16(-2), 0xC0000000),
        ("0.5", 0x3F000000), (" 1e-3 ", f32_bits(1e-3)), ("inf", 0x7F800000), ("-inf", 0xFF800000),
        ("0x1.8p-3", 0x3E400000), ("-0", 0x80000000), ("1e-45", 0x00000001), ("3.4028235e38", 0x7F7FFFFF),
        (b"2", 0x40000000),
    ],
)  # fmt: skip
def test_scalar_values(given, want):
    got = scalar_value("g", given)
    assert isinstance(got, np.float32) and f32_bits(got) == want


def test_scalar_nan():
    assert math.isnan(scalar_value("g", "nan")) and math.isnan(scalar_value("g", float("nan")))


@pytest.mark.parametrize(
    "given,expect",
    [
        ("abc", "scalar 'g' (f32) must be a number, got 'abc'"),
        ("", "must be a number, got ''"),
        ("0.5.1", "must be a number"),
        (True, "must be a number, got a bool"),
        ([0.5], "must be a number, got a list"),
        (None, "must be a number, got a NoneType"),
        (np.zeros(1, np.float32), "needs one number, got an array of shape (1,)"),
        ("1e39", "does not fit f32"),
        (-1e300, "does not fit f32"),
        (10**400, "does not fit f32"),
        (1 + 2j, "must be a number"),
    ],
)
def test_scalar_errors(given, expect):
    with pytest.raises(InputError) as err:
        scalar_value("g", given)
    assert expect in str(err.value)


# --------------------------------------------------------------------------
# --arg specs and .npy files
# --------------------------------------------------------------------------


def test_parse_arg_specs(tmp_path: pathlib.Path):
    w = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.save(tmp_path / "w.npy", w)
    got = parse_arg_specs([f"w={tmp_path / 'w.npy'}", "g=0.5", "h = 1e-3"])
    assert list(got) == ["w", "g", "h"]
    assert got["w"].shape == (2, 3) and got["w"].dtype == np.float32  # the header: the data is read later
    assert np.array_equal(read_files(got)["w"], w) and got["g"] == "0.5" and got["h"] == " 1e-3"


@pytest.mark.parametrize(
    "specs,expect",
    [
        (["w"], "expected NAME=FILE.npy or NAME=VALUE"),
        (["=1"], "expected NAME=FILE.npy or NAME=VALUE"),
        (["g="], "nothing after '='"),
        (["g=1", "g=2"], "'g' is given twice"),
    ],
)
def test_parse_arg_spec_errors(specs, expect):
    with pytest.raises(InputError, match=expect):
        parse_arg_specs(specs)


def test_load_npy_errors(tmp_path: pathlib.Path):
    good = tmp_path / "good.npy"
    np.save(good, np.arange(100, dtype=np.float32))
    assert load_npy("w", good).tolist() == list(range(100))

    with pytest.raises(InputError, match=r"tensor 'w': '.*missing.npy' does not exist"):
        load_npy("w", tmp_path / "missing.npy")
    with pytest.raises(InputError, match="is a directory"):
        load_npy("w", tmp_path)
    npz = tmp_path / "a.npz"
    np.savez(npz, a=np.zeros(3))
    with pytest.raises(InputError, match=r"is an \.npz archive"):
        load_npy("w", npz)
    text = tmp_path / "t.npy"
    text.write_text("1,2,3\n")
    with pytest.raises(InputError, match="is not an .npy file"):
        load_npy("w", text)
    data = good.read_bytes()
    cut = tmp_path / "cut.npy"
    cut.write_bytes(data[:-10])
    with pytest.raises(InputError, match="is truncated: its header promises 400 bytes of data, the file holds 390"):
        load_npy("w", cut)
    header_only = tmp_path / "header.npy"
    header_only.write_bytes(data[:20])
    with pytest.raises(InputError, match="corrupt .npy header"):
        load_npy("w", header_only)
    pickled = tmp_path / "obj.npy"
    np.save(pickled, np.array([{"a": 1}, None], dtype=object), allow_pickle=True)
    with pytest.raises(InputError, match="pickled data"):
        load_npy("w", pickled)


def test_load_npy_huge_header_is_not_allocated(tmp_path: pathlib.Path):
    """A header that claims 2^40 float64 elements is rejected from the file
    size, before any allocation."""
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, {"descr": "<f8", "fortran_order": False, "shape": (1 << 40,)})
    p = tmp_path / "huge.npy"
    p.write_bytes(buf.getvalue() + b"\0" * 64)
    with pytest.raises(InputError, match=f"promises {8 << 40} bytes of data, the file holds 64"):
        load_npy("w", p)


def test_ml_dtypes_file_round_trip(tmp_path: pathlib.Path):
    a = rand_bits((4, 16), 2, seed=3).view(ml_dtypes.bfloat16)
    np.save(tmp_path / "a.npy", a)
    loaded = read_files(parse_arg_specs([f"a={tmp_path / 'a.npy'}"]))["a"]
    got = canonical_values(TensorSpec("a", BF16, (4, 16)), loaded)
    assert np.array_equal(bits_of(got), bits_of(a))


def test_check_names():
    specs = {"w": TensorSpec("w", F4E2M1FN, (4, 16)), "bscale": TensorSpec("bscale", F8E4M3FN, (4, 1))}
    check_names(specs, ["g"], ["g", "bscale", "w"])  # all there, any order
    with pytest.raises(InputError) as err:
        check_names(specs, ["g"], ["w", "x", "w"])
    msg = str(err.value)
    assert "given twice: 'w'" in msg
    assert "missing: 'bscale' (memref<4x1xf8E4M3FN>), 'g' (f32 scalar)" in msg
    assert "unknown: 'x'; the kernel's inputs are w, bscale, g" in msg


# --------------------------------------------------------------------------
# Layout in the DM image
# --------------------------------------------------------------------------

SENTINEL = 0xA5


def image(n: int) -> np.ndarray:
    return np.full(n, SENTINEL, np.uint8)


def test_place_contiguous_f32():
    x = np.arange(12, dtype=np.float32).reshape(3, 4) - 5.5
    img = image(128)
    place(img, TensorSpec("x", F32, (3, 4), dm_base=16), x)
    assert img[16:64].tobytes() == b"".join(np.float32(v).tobytes() for v in x.reshape(-1))
    assert (img[:16] == SENTINEL).all() and (img[64:] == SENTINEL).all()


def test_place_packed_four_bit_is_the_checkpoint_bytes():
    rng = np.random.default_rng(4)
    packed = rng.integers(0, 256, (64, 32), dtype=np.uint8)
    img = dm_image([(TensorSpec("w", F4E2M1FN, (64, 64), dm_base=64), packed)])
    assert img.size == 64 + 64 * 32 and (img[:64] == 0).all()
    assert np.array_equal(img[64:], packed.reshape(-1))


def test_place_strided_bf16_with_offset():
    vals = rand_bits((3, 4), 2, seed=5)
    spec = TensorSpec("b", BF16, (3, 4), strides=(8, 1), offset=2, dm_base=8)
    img = image(80)
    place(img, spec, vals)
    touched = set()
    for i in range(3):
        for j in range(4):
            a = 8 + (2 + 8 * i + j) * 2
            assert int(img[a]) | (int(img[a + 1]) << 8) == int(vals[i, j])  # little-endian
            touched |= {a, a + 1}
    assert all(img[k] == SENTINEL for k in range(80) if k not in touched)
    assert spec.byte_range() == (2 * 2, (2 + 2 * 8 + 3 + 1) * 2)  # element addresses 2 .. 21


def test_place_negative_strides():
    vals = np.arange(6, dtype=np.int8).reshape(2, 3)
    spec = TensorSpec("n", I8, (2, 3), strides=(-3, -1), offset=5, dm_base=0)
    img = image(6)
    place(img, spec, vals)
    assert img.tolist() == [5, 4, 3, 2, 1, 0]
    assert spec.address_range() == (0, 6)


def test_place_four_bit_odd_offset_keeps_neighbour_nibbles():
    codes = np.array([[1, 2, 3], [4, 5, 6]], np.uint8)
    spec = TensorSpec("q", I4, (2, 3), strides=(4, 1), offset=1, dm_base=0)
    img = image(5)
    place(img, spec, codes)
    # element addresses 1,2,3 and 5,6,7: byte k holds addresses 2k (low) and 2k+1 (high)
    assert img.tolist() == [0x15, 0x32, 0x45, 0x65, SENTINEL]  # byte 2 keeps the low nibble 5 of 0xA5


def test_place_errors():
    x = np.zeros(4, np.float32)
    with pytest.raises(InputError, match=r"tensor 'x' \(memref<4xf32>\) occupies DM bytes \[8, 24\), outside the 16-byte DM image"):
        place(image(16), TensorSpec("x", F32, (4,), dm_base=8), x)
    with pytest.raises(InputError, match="has no DM address"):
        place(image(16), TensorSpec("x", F32, (4,)), x)
    with pytest.raises(InputError, match="has no DM address"):
        dm_image([(TensorSpec("x", F32, (4,)), x)])
    with pytest.raises(InputError, match="dtype float64"):
        place(image(16), TensorSpec("x", F32, (4,), dm_base=0), np.zeros(4))


def test_dm_image_aliasing_views_must_agree():
    """Explicit placements may alias (views of one buffer, ir.md §2a); two
    given tensors that share bytes must give them the same values, else an
    error naming both (a later tensor silently overwrote an earlier one)."""
    a = TensorSpec("a", I8, (8,), dm_base=0)
    b = TensorSpec("b", I8, (2, 2), strides=(4, 1), offset=2, dm_base=0)  # a view into a's bytes 2, 3, 6, 7
    img = dm_image([(a, np.arange(8, dtype=np.int8)), (b, np.array([[2, 3], [6, 7]], np.int8))])
    assert img.view(np.int8).tolist() == [0, 1, 2, 3, 4, 5, 6, 7]
    bad = np.array([[2, 3], [6, -1]], np.int8)  # byte 7: 7 in a, 0xFF in b
    msg = ("tensors 'a' and 'b' share DM bytes [2, 8) (their placements alias: views of one buffer), but the values "
           "given for them differ there: DM byte 7 is 0x07 in 'a' and 0xff in 'b'; give values that agree on the "
           "shared bytes")
    with pytest.raises(InputError) as e:
        dm_image([(a, np.arange(8, dtype=np.int8)), (b, bad)])
    assert str(e.value) == msg
    # Bytes a strided view skips are not shared: c (bytes 0, 1, 4, 5) and b may differ from each other freely.
    c = TensorSpec("c", I8, (2, 2), strides=(4, 1), offset=0, dm_base=0)
    img = dm_image([(c, np.full((2, 2), 9, np.int8)), (b, bad)])
    assert img.view(np.int8).tolist() == [9, 9, 2, 3, 9, 9, 6, -1]
    # An output (no value) over an input is not compared: it is only sized.
    img = dm_image([(a, np.arange(8, dtype=np.int8)), (b, None)])
    assert img.view(np.int8).tolist() == list(range(8))


def test_dm_image_aliasing_partial_overlap_of_wider_types():
    """A bf16 tensor (bytes [0, 8)) and an f32 tensor at byte 4 share bytes
    [4, 8): the f32 values' little-endian bytes must equal the bf16 ones."""
    x = TensorSpec("x", BF16, (4,), dm_base=0)
    y = TensorSpec("y", F32, (2,), dm_base=4)
    xb = np.array([0x3F80, 0x4000, 0x1234, 0xABCD], np.uint16)  # raw bf16 bits
    same = np.array([0xABCD1234, 0x00000001], np.uint32)  # bytes 34 12 cd ab | 01 00 00 00
    img = dm_image([(x, xb), (y, same)])
    assert img.tolist() == [0x80, 0x3F, 0x00, 0x40, 0x34, 0x12, 0xCD, 0xAB, 0x01, 0, 0, 0]
    with pytest.raises(InputError, match=r"tensors 'x' and 'y' share DM bytes \[4, 8\) .* DM byte 6 is 0xcd in 'x' and 0xce in 'y'"):
        dm_image([(x, xb), (y, np.array([0xABCE1234, 1], np.uint32))])


def test_dm_image_aliasing_4bit_nibbles():
    """4-bit tensors share a byte only where their nibbles meet: the even
    and the odd elements of the same bytes are two tensors that never
    disagree; an i8 over a 4-bit tensor must agree on the nibble it covers."""
    lo = TensorSpec("lo", F4E2M1FN, (4,), strides=(2,), offset=0, dm_base=0)  # low nibbles of bytes 0-3
    hi = TensorSpec("hi", F4E2M1FN, (4,), strides=(2,), offset=1, dm_base=0)  # high nibbles of bytes 0-3
    img = dm_image([(lo, np.array([1, 2, 3, 4], np.uint8)), (hi, np.array([5, 6, 7, 8], np.uint8))])
    assert img.tolist() == [0x51, 0x62, 0x73, 0x84]
    byte = TensorSpec("byte", I8, (1,), dm_base=2)  # byte 2: lo's 3 in the low nibble, hi's 7 in the high one
    img = dm_image([(lo, np.array([1, 2, 3, 4], np.uint8)), (byte, np.array([0x73], np.int8))])
    assert img.tolist() == [0x01, 0x02, 0x73, 0x04]
    with pytest.raises(InputError, match=r"DM byte 2 is 0x03 in 'lo' and 0x05 in 'byte' \(the bits 0x0f both write\)"):
        dm_image([(lo, np.array([1, 2, 3, 4], np.uint8)), (byte, np.array([0x75], np.int8))])


def test_slice_images_aliasing_names_the_slice():
    """On several slices the values are compared slice by slice (each slice
    holds its own part of a split tensor): a difference in slice 2 only is
    reported there."""
    from fetchc.golden.inputs import slice_images

    a = TensorSpec("a", I8, (4,), dm_base=0)
    b = TensorSpec("b", I8, (2,), dm_base=2)
    whole_a = np.arange(12, dtype=np.int8).reshape(3, 4)  # slice s: row s (slice_dim 0)
    whole_b = whole_a[:, 2:].copy()
    img = slice_images([(a, whole_a.reshape(12)), (b, whole_b.reshape(6))], 3, slice_dims=[0, 0])
    assert img.view(np.int8)[:, :4].tolist() == whole_a.tolist()
    whole_b[2, 1] = 0
    with pytest.raises(InputError, match=r"share DM bytes \[2, 4\) .* DM byte 3 of slice 2 is 0x0b in 'a' and 0x00 in 'b'"):
        slice_images([(a, whole_a.reshape(12)), (b, whole_b.reshape(6))], 3, slice_dims=[0, 0])


def test_from_memref():
    from xdsl.dialects.builtin import MemRefType, StridedLayoutAttr, f32
    from xdsl.dialects.builtin import Float4E2M1FNType

    spec = TensorSpec.from_memref("x", MemRefType(f32, [3, 4], StridedLayoutAttr([8, 1], 2)), 64)
    assert (spec.elem, spec.shape, spec.strides, spec.offset, spec.dm_base) == (F32, (3, 4), (8, 1), 2, 64)
    assert spec.type_str == "3x4xf32"
    spec = TensorSpec.from_memref("w", MemRefType(Float4E2M1FNType(), [16, 32]))
    assert spec.strides == (32, 1) and spec.byte_range() == (0, 256)


def test_large_packed_nvfp4_weight():
    """A 4096 x 4096 NVFP4 weight, packed as a checkpoint stores it, lands
    in DM byte for byte."""
    rng = np.random.default_rng(6)
    packed = rng.integers(0, 256, (4096, 2048), dtype=np.uint8)
    scales = rng.integers(0, 256, (4096, 256), dtype=np.uint8)
    w = TensorSpec("w", F4E2M1FN, (4096, 4096), dm_base=0)
    s = TensorSpec("s", F8E4M3FN, (4096, 256), dm_base=4096 * 2048)
    img = dm_image([(w, packed), (s, scales)])
    assert img.size == 4096 * 2048 + 4096 * 256
    assert np.array_equal(img[: 4096 * 2048], packed.reshape(-1)) and np.array_equal(img[4096 * 2048 :], scales.reshape(-1))


def _npy_with_header(tmp_path: pathlib.Path, header: bytes, data: bytes = b"", version: bytes = b"\x01\x00") -> pathlib.Path:
    p = tmp_path / "h.npy"
    size = len(header).to_bytes(2 if version[0] == 1 else 4, "little")
    p.write_bytes(b"\x93NUMPY" + version + size + header + data)
    return p


@pytest.mark.parametrize(
    "header,expect",
    [
        (b"{'descr': '<f4', 'fortran_order': False, 'shape': (-1,), }", "shape (-1,) is not a tuple of sizes"),
        (b"{'descr': '<f4', 'fortran_order': 0, 'shape': (2,), }", "fortran_order 0 is not a bool"),
        (b"{'descr': '<f4', 'shape': (2,), }", "expected the keys descr, fortran_order and shape"),
        (b"__import__('os')", "is not a Python literal"),
        (b"{'descr': 'zz9', 'fortran_order': False, 'shape': (2,), }", "unknown element type 'zz9'"),
        (b"{'descr': '|O', 'fortran_order': False, 'shape': (2,), }", "pickled data"),
    ],
)
def test_load_npy_corrupt_headers(tmp_path: pathlib.Path, header, expect):
    with pytest.raises(InputError, match=re.escape(expect)):
        load_npy("w", _npy_with_header(tmp_path, header, b"\0" * 64))


def test_load_npy_versions_and_fortran_order(tmp_path: pathlib.Path):
    a = np.asfortranarray(np.arange(12, dtype=np.int16).reshape(3, 4))
    np.save(tmp_path / "f.npy", a)
    got = load_npy("w", tmp_path / "f.npy")
    assert got.dtype == np.int16 and np.array_equal(got, a)
    header = b"{'descr': '<i2', 'fortran_order': False, 'shape': (2,), }"
    p = _npy_with_header(tmp_path, header, np.array([7, -3], "<i2").tobytes(), version=b"\x02\x00")
    assert load_npy("w", p).tolist() == [7, -3]
    with pytest.raises(InputError, match="format version 9"):
        load_npy("w", _npy_with_header(tmp_path, header, b"", version=b"\x09\x00"))
    with pytest.raises(InputError, match="the file ends inside it"):
        (tmp_path / "short.npy").write_bytes(b"\x93NUMPY\x01\x00\x50\x00{'descr'")
        load_npy("w", tmp_path / "short.npy")


def test_arg_spec_file_without_npy_suffix(tmp_path):
    """--arg NAME=PATH loads PATH when it is not a number and exists, with
    or without the .npy suffix; a word naming no file stays a value, and a
    tensor given a value says to give an .npy file."""
    import numpy as np
    import pytest

    from fetchc.golden.inputs import InputError, parse_arg_specs, read_files

    a = np.arange(6, dtype=np.uint8).reshape(2, 3)
    np.save(tmp_path / "w.npy", a)
    (tmp_path / "w.npy").rename(tmp_path / "wfile")
    (tmp_path / "empty").write_bytes(b"")
    got = read_files(parse_arg_specs([f"w={tmp_path / 'wfile'}", "g=0.5", "h=nofile-here"]))
    assert np.array_equal(got["w"], a) and got["g"] == "0.5" and got["h"] == "nofile-here"
    with pytest.raises(InputError, match="is not an .npy file"):
        parse_arg_specs([f"w={tmp_path / 'empty'}"])
    with pytest.raises(InputError, match="is a directory"):
        parse_arg_specs([f"w={tmp_path}"])


def test_scalar_overflow_in_text_is_an_error():
    """A decimal that overflows f32 is an error however large (1e39 and
    1e999 alike); inf and nan spelled out are values."""
    import math

    import pytest

    from fetchc.golden.inputs import InputError, scalar_value

    for text in ("1e39", "1e999", "-1e999"):
        with pytest.raises(InputError, match="does not fit f32"):
            scalar_value("g", text)
    assert scalar_value("g", "-inf") == -math.inf
    assert math.isnan(scalar_value("g", "nan"))

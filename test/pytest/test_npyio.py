""".npy inputs are untrusted files (ir.md §5; the one reader:
fetchc/npyio.py).

* Headers: those that size memory (a 10 MB header, a sparse file declaring
  2 GiB, zero-byte items, sub-array descriptors, 65 dimensions, a dimension
  of 2^63) are refused from the header, before any large read or
  allocation.
* The budget: ``FETCHC_SIM_MAX_BYTES`` covers every allocation sized
  by a file: the DM image the MANIFEST lays out, the input arrays, the
  outputs.
* Types: an ``ml_dtypes.float8_e5m2`` file (descriptor ``'<f1'``) given for
  an ``f8E4M3FN`` tensor is a type error, as in Python.
* Numbers: one rule for numbers (ASCII decimals, ``inf``, ``nan``, hex
  floats) and for scalars given as arrays (``float32`` is the value,
  ``uint32`` the raw bits, as for tensors).

Headers are written by hand (``numpy.lib.format.write_array_header_*``),
expected values by numpy and ml_dtypes.
"""

from __future__ import annotations

import io
import os
import subprocess
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from fetchc.golden.inputs import InputError, parse_arg_specs, scalar_value
from fetchc.npyio import NpyError, load_npy, open_npy
from served import FETCHC


KERNEL = """\
func.func @k(%a: memref<4x16xf8E4M3FN>, %g: f32, %o: memref<4x16xf32>) {
  %s = fetch.fetch %a : memref<4x16xf8E4M3FN> -> !fetch.stream<main, [4], [16], f8E4M3FN>
  %c = fetch.cast %s : !fetch.stream<main, [4], [16], f8E4M3FN> -> !fetch.stream<main, [4], [16], f32>
  %t = rngd.tensor_scale %c, %g : !fetch.stream<main, [4], [16], f32>, f32 -> !fetch.stream<main, [4], [16], f32>
  rngd.commit %t, %o : !fetch.stream<main, [4], [16], f32>, memref<4x16xf32>
  func.return
}
"""


def _fetchc(argv, cwd, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(FETCHC + argv, cwd=cwd, capture_output=True, text=True, timeout=300, check=False, **kw)


def _header_file(path: Path, header: dict | bytes, data: bytes = b"", version: int = 1) -> Path:
    buf = io.BytesIO()
    if isinstance(header, bytes):
        buf.write(b"\x93NUMPY" + bytes([version, 0]))
        buf.write(len(header).to_bytes(2 if version == 1 else 4, "little") + header)
    elif version == 1:
        np.lib.format.write_array_header_1_0(buf, header)
    else:
        np.lib.format.write_array_header_2_0(buf, header)
    path.write_bytes(buf.getvalue() + data)
    return path


# --------------------------------------------------------------------------
# Headers
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "descr,expect",
    [
        ("|V0", "elements of 0 bytes"),
        ("<U0", "not numbers"),
        ("<U4", "not numbers"),
        ("|S2", "not numbers"),
        ([("", "(2,)u1")], "not numbers"),
        ("(2,)u1", "not numbers"),
        ([("a", "<f4"), ("b", "<i4")], "not numbers"),
        ("<c8", "not numbers"),
        ("<M8[s]", "not numbers"),
    ],
)
def test_element_types_that_are_not_numbers(tmp_path, descr, expect):
    p = _header_file(tmp_path / "a.npy", {"descr": descr, "fortran_order": False, "shape": (4,)}, b"\0" * 64)
    with pytest.raises(NpyError, match=expect):
        open_npy(p)


def test_huge_header_is_refused_before_reading_it(tmp_path):
    header = b"{'descr': '<f4', 'fortran_order': False, 'shape': (" + b"1, " * 3_000_000 + b"), }"
    p = _header_file(tmp_path / "a.npy", header, version=2)
    with pytest.raises(NpyError, match=f"has a {len(header)}-byte .npy header, more than the 65536 bytes"):
        open_npy(p)


@pytest.mark.parametrize(
    "shape,expect",
    [
        ((1,) * 65, "has 65 dimensions, more than the 32"),
        ((1,) * 33, "has 33 dimensions, more than the 32"),
        ((0, 2**63), "has a size of 2\\^63 or more"),
        ((2**64,), "has a size of 2\\^63 or more"),
        ((-1, 2), "is not a tuple of sizes"),
        ((0, 2**61), "spans 2\\^63 bytes or more"),
    ],
)
def test_shapes_out_of_bounds(tmp_path, shape, expect):
    p = _header_file(tmp_path / "a.npy", {"descr": "<f4", "fortran_order": False, "shape": shape})
    with pytest.raises(NpyError, match=expect):
        open_npy(p)


def test_rank_32_and_empty_dims_are_fine(tmp_path):
    a = np.zeros((1,) * 31 + (2,), np.float32)
    np.save(tmp_path / "a.npy", a)
    assert load_npy(tmp_path / "a.npy").shape == a.shape
    _header_file(tmp_path / "e.npy", {"descr": "<f4", "fortran_order": False, "shape": (0, 2**60)})
    assert load_npy(tmp_path / "e.npy").shape == (0, 2**60)


def test_sparse_file_declaring_2_gib_is_refused_from_its_header(tmp_path):
    """The header promises 2 GiB, the (sparse) file holds it: given for a
    (4, 16) tensor it is refused from the header, under an address-space
    limit far below 2 GiB (it used to be read whole first)."""
    import resource

    (tmp_path / "k.mlir").write_text(KERNEL)
    p = _header_file(tmp_path / "a.npy", {"descr": "|u1", "fortran_order": False, "shape": (2 << 30,)})
    with open(p, "r+b") as f:
        f.truncate(p.stat().st_size + (2 << 30))

    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))

    r = _fetchc(["run", "k.mlir", "--arg", "a=a.npy", "--arg", "g=1", "-o", "o.npz"], tmp_path, preexec_fn=limit)
    assert r.returncode == 1
    assert r.stderr.startswith("error: tensor 'a' (memref<4x16xf8E4M3FN>): expected shape (4, 16)"), r.stderr
    assert "'a.npy', an array of shape (2147483648,) and dtype uint8" in r.stderr


def test_data_is_read_only_when_asked_and_within_the_limit(tmp_path):
    np.save(tmp_path / "a.npy", np.arange(100, dtype=np.int32))
    f = open_npy(tmp_path / "a.npy")
    assert (f.shape, f.dtype, f.nbytes) == ((100,), np.dtype(np.int32), 400)
    with pytest.raises(NpyError, match="holds 400 bytes of data, more than the 399 bytes allowed"):
        f.read(max_bytes=399)
    assert np.array_equal(f.read(max_bytes=400), np.arange(100))
    fortran = np.asfortranarray(np.arange(12, dtype=np.int16).reshape(3, 4))
    np.save(tmp_path / "f.npy", fortran)
    assert np.array_equal(load_npy(tmp_path / "f.npy"), fortran)


# --------------------------------------------------------------------------
# The budget covers the DM image the MANIFEST lays out
# --------------------------------------------------------------------------

UNUSED_BIG = """\
func.func @k(%a: memref<4x16xi8>, %big: memref<120000xf32>, %o: memref<4x16xi8>) attributes {rngd.slices = 512 : i64} {
  %s = fetch.fetch %a : memref<4x16xi8> -> !fetch.stream<main, [4], [16], i8>
  rngd.commit %s, %o : !fetch.stream<main, [4], [16], i8>, memref<4x16xi8>
  func.return
}
"""


@pytest.mark.parametrize("command", ["sim", "run"])
def test_budget_covers_a_big_tensor_of_the_manifest(tmp_path, command):
    """``FETCHC_SIM_MAX_BYTES=1000000``: a kernel on 512 slices whose
    MANIFEST holds a 480000-byte tensor (no program reads it) lays out 512
    DM images of 480128 bytes (245825536 bytes, what one slice's DM allows
    times the most slices): refused before allocating."""
    (tmp_path / "k.mlir").write_text(UNUSED_BIG)
    assert _fetchc(["k.mlir", "-o", "k.bin"], tmp_path).returncode == 0
    np.save(tmp_path / "a.npy", np.arange(64, dtype=np.int8).reshape(4, 16))
    env = dict(os.environ, FETCHC_SIM_MAX_BYTES="1000000")
    argv = ["sim", "k.bin"] if command == "sim" else ["run", "k.mlir"]
    r = _fetchc(argv + ["--arg", "a=a.npy", "-o", "o.npz"], tmp_path, env=env)
    assert r.returncode == 1
    image = 512 * (64 + 480000 + 64)  # a, big, o on every slice
    assert f"error: the DM image is {image} bytes, more than the 1000000 bytes fetchc {command} may allocate" in r.stderr
    assert not (tmp_path / "o.npz").exists()


def test_budget_counts_the_input_arrays(tmp_path):
    (tmp_path / "k.mlir").write_text(KERNEL)
    np.save(tmp_path / "a.npy", np.zeros((4, 16), np.uint8))
    env = dict(os.environ, FETCHC_SIM_MAX_BYTES="639")  # 320-byte image (a, o) + 64 bytes read + 256 bytes out
    r = _fetchc(["run", "k.mlir", "--arg", "a=a.npy", "--arg", "g=1", "-o", "o.npz"], tmp_path, env=env)
    assert r.returncode == 1 and "with the 320-byte DM image and 64 bytes of input arrays" in r.stderr, r.stderr
    env["FETCHC_SIM_MAX_BYTES"] = "640"
    r = _fetchc(["run", "k.mlir", "--arg", "a=a.npy", "--arg", "g=1", "-o", "o.npz"], tmp_path, env=env)
    assert r.returncode == 0, r.stderr


# --------------------------------------------------------------------------
# 8-bit float files keep their type
# --------------------------------------------------------------------------


def test_e5m2_file_for_an_e4m3_tensor_is_a_type_error(tmp_path):
    """It was read as raw bits: 1.0 in e5m2 (0x3C) is 1.5 in e4m3fn."""
    (tmp_path / "k.mlir").write_text(KERNEL)
    np.save(tmp_path / "e5.npy", np.ones((4, 16), ml_dtypes.float8_e5m2))
    np.save(tmp_path / "e4.npy", np.ones((4, 16), ml_dtypes.float8_e4m3fn))
    r = _fetchc(["run", "k.mlir", "--arg", "a=e5.npy", "--arg", "g=1", "-o", "o.npz"], tmp_path)
    assert r.returncode == 1 and "'e5.npy', an array of shape (4, 16) and dtype float8_e5m2" in r.stderr, r.stderr
    r = _fetchc(["run", "k.mlir", "--arg", "a=e4.npy", "--arg", "g=1", "-o", "o.npz"], tmp_path)
    assert r.returncode == 0, r.stderr
    assert np.array_equal(np.load(tmp_path / "o.npz")["o"], np.ones((4, 16), np.float32))


# --------------------------------------------------------------------------
# Numbers and scalars
# --------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["1_000", "1_0.5", "\u0661\u0662\u0663", "\uff11", "1e1_0", "0x1_0p0", "\u00a01",
                                  "in f", "1e", "--1", "0x", ".", "e5", "nan(1)", "infinit"])
def test_text_that_is_not_a_number(text):
    with pytest.raises(InputError, match="must be a number"):
        scalar_value("g", text)


@pytest.mark.parametrize(
    "text,want",
    [("1000", 1000.0), ("+.5", 0.5), ("5.", 5.0), ("-1E-3", -1e-3), ("0x1.8p-3", 0.1875), ("0X.8P1", 1.0),
     ("0x10", 16.0), ("INF", np.inf), ("-Infinity", -np.inf), (" 2\t", 2.0)],
)
def test_text_that_is_a_number(text, want):
    assert scalar_value("g", text) == np.float32(want)


def test_a_scalar_array_is_read_as_an_f32_tensor_is():
    """uint32 arrays are raw bits for tensors: for a 0-d array too (it was
    read by value: 0x3F800000 became 1065353216.0)."""
    assert scalar_value("g", np.array(0x3F800000, np.uint32)) == np.float32(1.0)
    assert scalar_value("g", np.array(0.25, np.float32)) == np.float32(0.25)
    assert scalar_value("g", np.array(0.25, ">f4")) == np.float32(0.25)
    for dt in (np.float64, np.int32, np.float16, np.int64):
        with pytest.raises(InputError, match="nothing is converted by value"):
            scalar_value("g", np.array(1, dt))
    assert scalar_value("g", np.uint32(3)) == np.float32(3.0)  # a number: its value


def test_scalar_npy_on_the_command_line(tmp_path):
    (tmp_path / "k.mlir").write_text(KERNEL)
    np.save(tmp_path / "a.npy", np.full((4, 16), 0x38, np.uint8))  # 1.0 in f8E4M3FN
    np.save(tmp_path / "bits.npy", np.array(0x40000000, np.uint32))  # 2.0
    np.save(tmp_path / "wide.npy", np.array(2.0, np.float64))
    np.save(tmp_path / "vec.npy", np.zeros(2, np.float32))
    r = _fetchc(["run", "k.mlir", "--arg", "a=a.npy", "--arg", "g=bits.npy", "-o", "o.npz"], tmp_path)
    assert r.returncode == 0, r.stderr
    assert np.array_equal(np.load(tmp_path / "o.npz")["o"], np.full((4, 16), 2.0, np.float32))
    r = _fetchc(["run", "k.mlir", "--arg", "a=a.npy", "--arg", "g=wide.npy", "-o", "o2.npz"], tmp_path)
    assert r.returncode == 1 and "dtype float64" in r.stderr and "nothing is converted by value" in r.stderr
    r = _fetchc(["run", "k.mlir", "--arg", "a=a.npy", "--arg", "g=vec.npy", "-o", "o2.npz"], tmp_path)
    assert r.returncode == 1 and "needs one number" in r.stderr, r.stderr
    r = _fetchc(["run", "k.mlir", "--arg", "a=a.npy", "--arg", "g=1_000", "-o", "o2.npz"], tmp_path)
    assert r.returncode == 1 and "must be a number, got '1_000'" in r.stderr, r.stderr
    assert not (tmp_path / "o2.npz").exists()


def test_arg_value_that_is_not_a_number_names_no_file():
    assert parse_arg_specs(["g=1_000", "h=\u0661"]) == {"g": "1_000", "h": "\u0661"}

"""How values of the hardware's element types are held in numpy arrays.

* :func:`numpy_dtype`: the canonical dtype of one value (``ml_dtypes`` for the
  narrow floats and ``int4``; one 4-bit value per item).
* :func:`sim_dtype`, :func:`to_sim_encoding`, :func:`from_sim_encoding`: the
  output encoding of ``fetchc sim`` / ``fetchc run`` (ir.md §5): ``f32``,
  ``i32``, ``i8``, ``i16`` as themselves; ``bf16`` and the 8-bit floats as
  raw bits in ``uint16`` / ``uint8``; ``i5`` as ``int8``; ``i9`` as
  ``int16``; 4-bit codes (``i4`` too: its two's-complement code) in
  ``uint8``.
* :func:`pack_elements`: the DM bytes of a tensor (hardware.md §3:
  little-endian; 4-bit types two per byte, element ``2i`` in the low nibble).

This module imports numpy and ml_dtypes; the compile path never imports it.
"""

from __future__ import annotations

import sys
from functools import cache

import ml_dtypes
import numpy as np

from fetchc.target.facts import ElementType

__all__ = ["numpy_dtype", "sim_dtype", "to_sim_encoding", "from_sim_encoding", "pack_elements", "UINT"]

UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
"""Unsigned integer dtype of each byte width."""

_CANONICAL = {
    "i4": ml_dtypes.int4,
    "i8": np.int8,
    "i16": np.int16,
    "i32": np.int32,
    "i5": np.int8,
    "i9": np.int16,
    "f4E2M1FN": ml_dtypes.float4_e2m1fn,
    "f8E4M3FN": ml_dtypes.float8_e4m3fn,
    "f8E5M2": ml_dtypes.float8_e5m2,
    "bf16": ml_dtypes.bfloat16,
    "f32": np.float32,
    "f8E8M0FNU": ml_dtypes.float8_e8m0fnu,
}


@cache
def numpy_dtype(elem: ElementType) -> np.dtype:
    """The numpy dtype holding one canonical value of ``elem`` (``i5`` as
    ``int8``, ``i9`` as ``int16``)."""
    return np.dtype(_CANONICAL[elem.name])


def sim_dtype(elem: ElementType) -> np.dtype:
    """The numpy dtype ``fetchc sim`` uses for ``elem`` (ir.md §5): ``uint8``
    for 4-bit codes and 8-bit float bits, ``uint16`` for ``bf16`` bits, else
    ``elem.np_dtype`` (``f32``, ``i32``, ``i8``, ``i16``; ``i5`` → ``int8``;
    ``i9`` → ``int16``)."""
    if elem.is_subbyte:
        return np.dtype(np.uint8)
    if elem.is_float and elem.bits in (8, 16):
        return np.dtype(UINT[elem.bits // 8])
    return np.dtype(elem.np_dtype)


def to_sim_encoding(arr: np.ndarray, elem: ElementType, packet_size: int | None = None) -> np.ndarray:
    """Convert canonical values (an array of ``elem.np_dtype``: ``ml_dtypes``
    types for the narrow floats and ``int4``, one value per item) to the
    ``ir.md`` §5 encoding (:func:`sim_dtype`).  Shape is kept, or becomes
    ``(-1, packet_size)`` when ``packet_size`` is given.  Returns a new array.
    Raises ``ValueError`` when ``arr``'s dtype is not ``elem.np_dtype``."""
    arr = np.asarray(arr)
    if arr.dtype != elem.np_dtype:
        raise ValueError(f"expected an array of {elem} ({elem.np_dtype}), got {arr.dtype}")
    if elem.is_subbyte:
        out = arr.view(np.uint8) & np.uint8(0x0F)
    elif elem.is_float and elem.bits in (8, 16):
        out = arr.view(UINT[elem.bits // 8]).copy()
    else:
        out = arr.copy()
    return out if packet_size is None else out.reshape(-1, packet_size)


def from_sim_encoding(enc: np.ndarray, elem: ElementType) -> np.ndarray:
    """Inverse of :func:`to_sim_encoding`: canonical values of ``elem`` (same
    shape).  4-bit codes keep their low nibble.  Raises ``ValueError`` for a
    wrong dtype."""
    enc = np.asarray(enc)
    want = sim_dtype(elem)
    if enc.dtype != want:
        raise ValueError(f"expected the {want} encoding of {elem}, got {enc.dtype}")
    if elem.is_subbyte:
        return (enc & np.uint8(0x0F)).view(elem.np_dtype)
    if elem.is_float and elem.bits in (8, 16):
        return enc.view(elem.np_dtype).copy()
    return enc.astype(elem.np_dtype)


def typed_view(enc: np.ndarray, elem: ElementType) -> np.ndarray:
    """``enc`` (the :func:`sim_dtype` encoding of ``elem``) as the Python API
    returns it: ``bf16`` and the 8-bit floats as a view of the same bits in
    their ``ml_dtypes`` type (``ml_dtypes.bfloat16``, ``float8_e4m3fn``...),
    every other type unchanged (4-bit types stay their ``uint8`` codes).
    Raises ``ValueError`` for a wrong dtype."""
    enc = np.asarray(enc)
    if enc.dtype != sim_dtype(elem):
        raise ValueError(f"expected the {sim_dtype(elem)} encoding of {elem}, got {enc.dtype}")
    if elem.is_float and elem.bits in (8, 16):
        return enc.view(numpy_dtype(elem))
    return enc


def pack_elements(values: np.ndarray, elem: ElementType) -> np.ndarray:
    """The DM bytes (``uint8``, 1-D) holding ``values`` (canonical, flattened
    in C order) as the hardware stores them: little-endian; 4-bit types two
    per byte, element ``2i`` in the low nibble (an odd count leaves the last
    high nibble 0).  Raises ``ValueError`` for a wrong dtype or on a
    big-endian host."""
    v = np.ascontiguousarray(values).reshape(-1)
    if v.dtype != elem.np_dtype:
        raise ValueError(f"expected an array of {elem} ({elem.np_dtype}), got {v.dtype}")
    if sys.byteorder != "little":  # pragma: no cover - every supported host is little-endian
        raise ValueError("packing DM bytes needs a little-endian host (DM and seq.bin are little-endian)")
    if elem.is_subbyte:
        codes = v.view(np.uint8) & np.uint8(0x0F)
        if codes.size % 2:
            codes = np.concatenate([codes, np.zeros(1, np.uint8)])
        return (codes[0::2] | (codes[1::2] << np.uint8(4))).astype(np.uint8)
    return v.view(np.uint8).copy()

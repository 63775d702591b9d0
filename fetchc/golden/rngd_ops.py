"""What the downstream ``rngd`` ops compute, once, for both golden paths:
the interpreter (:mod:`fetchc.golden.interp`, one op at a time on whole
arrays) and ``fetchc run`` (:mod:`fetchc.golden.run`, which fuses the
multiplies of one stream into one pass, :mod:`fetchc.golden.scale_chain`).

Spec: ir.md §2 (the ``rngd`` dialect), hardware.md §2.2a and §4.

========================  ====================================================
op                        meaning (values in canonical dtypes, ``float32`` for f32)
========================  ====================================================
``rngd.switch``,          identity (:data:`PASS_THROUGH`); ``to_trf`` /
``rngd.to_trf``,          ``to_vrf``: the register file holds the stream
``rngd.to_vrf``
``rngd.collect``          the same elements in the same order, in the result
                          stream's shape (:func:`collect`): its input type,
                          or the flit form (hardware.md §2.5)
``rngd.transpose``        a row-major **reshape** to the result stream's shape
                          (:func:`transpose`): the IR does not say which
                          permutation the Transpose Engine applies
``rngd.block_scale``      ``x × f(s)`` per block of ``block`` elements of the
                          innermost dim, by the Vector Engine multiply;
                          ``f`` decodes the scales (:func:`scale_factors`:
                          ``f8E8M0FNU`` as ``2^(e-127)``, ``f32`` as it is);
                          a VRF tensor of scales holds them in the values'
                          stream order (:func:`vrf_block_scales`)
``rngd.tensor_scale``     ``x × g``, the same multiply (:func:`tensor_factor`)
``rngd.cast``             the Cast Engine's ``f32 → bf16`` (:func:`narrow`:
                          the adapter's cast code 6, hardware.md §2.6)
``rngd.commit``           the stream's elements in row-major order become the
                          memref's in row-major order (:func:`committed`)
``arith.constant``        an ``f32`` constant is a scalar operand
========================  ====================================================

Every function accepts leading batch dims (``lead``) in front of the
stream's own shape, as ``fetchc run`` keeps one slice per leading index
(ir.md §2a).  This module imports numpy.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from fetchc.dialects.rngd import SwitchOp, ToTrfOp, ToVrfOp, VrfType
from fetchc.dialects.stream import StreamType
from fetchc.target import BF16, F8E8M0FNU, F32, element_type, numerics

__all__ = [
    "PASS_THROUGH",
    "block_scale",
    "collect",
    "committed",
    "narrow",
    "scale_factors",
    "tensor_factor",
    "tensor_scale",
    "transpose",
    "vrf_block_scales",
]

PASS_THROUGH = (SwitchOp, ToTrfOp, ToVrfOp)
"""The ops whose result is their input's value (``rngd.collect`` may
reshape it: :func:`collect`)."""


def collect(values: np.ndarray, result: StreamType, lead: tuple[int, ...] = ()) -> np.ndarray:
    """``rngd.collect``: ``values`` (``lead`` + the input stream's shape) in
    ``lead`` + ``result``'s time then packet dims.  The Collect Engine moves
    no element (hardware.md §2.5): its flit form splits each packet, flattened
    row-major, into flits that become the innermost time dim, which is a
    row-major reshape; with its input type it is the identity.  Returns a
    C-contiguous array (a view when ``values`` is one)."""
    return np.ascontiguousarray(values).reshape(tuple(lead) + tuple(result.time) + tuple(result.packet))


def transpose(values: np.ndarray, result: StreamType, lead: tuple[int, ...] = ()) -> np.ndarray:
    """``rngd.transpose``: ``values`` (``lead`` + the input stream's shape)
    reshaped in row-major order to ``lead`` + ``result``'s time then packet
    dims.  Returns a C-contiguous array (a view when ``values`` is one)."""
    return np.ascontiguousarray(values).reshape(tuple(lead) + tuple(result.time) + tuple(result.packet))


def scale_factors(scale: np.ndarray, scale_type: StreamType | VrfType) -> np.ndarray:
    """The ``float32`` factors of a ``rngd.block_scale`` scale stream or VRF
    tensor (any shape): ``f8E8M0FNU`` (canonical or raw ``uint8`` bits)
    decoded as ``2^(e-127)`` (``0xFF`` → ``0x7FC00000``; hardware.md §4),
    ``f32`` values as they are (the multiply reads a subnormal as zero)."""
    if element_type(scale_type.element_type) == F8E8M0FNU:
        return numerics.e8m0_to_f32(scale)
    return np.ascontiguousarray(scale, dtype=np.float32)


def tensor_factor(g: Any) -> np.float32:
    """The ``f32`` operand of ``rngd.tensor_scale`` (a Python or numpy
    number rounded to f32).  Raises ``ValueError`` for a non-number."""
    return numerics.scalar_f32(g)


def vrf_block_scales(scale: np.ndarray, x_shape: tuple[int, ...], block: int, lead: tuple[int, ...] = ()) -> np.ndarray:
    """A VRF tensor of block scales (``lead`` + its own shape) as the
    lockstep scale stream of values shaped ``lead`` + ``x_shape``: ``lead``
    + ``x_shape`` with the last dim divided by ``block``.  The VRF holds
    scale ``j`` for the ``j``-th block of ``block`` consecutive values of the
    value stream flattened time-major (hardware.md §2.6, §4a), and blocks
    never straddle the innermost dim, so this is a row-major reshape.
    Raises ``ValueError`` when the counts differ or ``block`` does not
    divide the last dim."""
    if block < 1 or not x_shape or x_shape[-1] % block:
        raise ValueError(f"block {block} does not divide the last dim of shape {x_shape}")
    want = tuple(lead) + tuple(x_shape[:-1]) + (x_shape[-1] // block,)
    a = np.ascontiguousarray(scale)
    if a.size != int(np.prod(want)):
        raise ValueError(f"a VRF tensor of {a.size} block scales for {want} blocks")
    return a.reshape(want)


def block_scale(x: np.ndarray, scale: np.ndarray, scale_type: StreamType | VrfType, block: int) -> np.ndarray:
    """``rngd.block_scale`` on whole arrays: ``x`` (``float32``, the value
    stream's shape) times the factors of ``scale``: a lockstep stream (shape
    ``x.shape`` with the last dim divided by ``block``) or, for a
    :class:`~fetchc.dialects.rngd.VrfType`, a VRF tensor in the values'
    stream order (:func:`vrf_block_scales`), by
    :func:`fetchc.target.numerics.block_scale`.  Returns a new array.
    Raises ``ValueError`` for mismatched shapes."""
    if isinstance(scale_type, VrfType):
        scale = vrf_block_scales(scale, tuple(np.shape(x)), block)
    return numerics.block_scale(x, scale_factors(scale, scale_type), block)


def tensor_scale(x: np.ndarray, g: Any) -> np.ndarray:
    """``rngd.tensor_scale`` on a whole array (``float32``):
    :func:`fetchc.target.numerics.tensor_scale` by :func:`tensor_factor`."""
    return numerics.tensor_scale(x, tensor_factor(g))


def narrow(values: np.ndarray) -> np.ndarray:
    """``rngd.cast``, the Cast Engine's ``f32 → bf16`` (hardware.md §2.6):
    :func:`fetchc.target.numerics.cast` with the adapter's cast code 6 rule
    (round to nearest even, a subnormal becomes a zero of its sign, NaN
    ``0x7FC0``, overflow ±inf).  ``values``: ``float32`` or its raw
    ``uint32`` bits, any shape.  Returns ``ml_dtypes.bfloat16``, same shape."""
    return numerics.cast(values, F32, BF16)


def committed(values: np.ndarray, shape: tuple[int, ...], lead: tuple[int, ...] = ()) -> np.ndarray:
    """``rngd.commit``: the stream's elements (``lead`` + stream shape) in
    row-major order as the memref's (``lead`` + ``shape``).  Raises
    ``ValueError`` when the element counts differ."""
    return np.asarray(values).reshape(tuple(lead) + tuple(shape))

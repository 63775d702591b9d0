"""Write the .npy inputs of the fetchc run / sim lit tests into DIR.

Every value is chosen by hand; the CHECK lines of the tests spell out what
the kernels must make of them (hardware.md §2.2a, §4).

Usage: python make_inputs.py DIR
"""

import os
import sys

import ml_dtypes
import numpy as np

d = sys.argv[1]
os.makedirs(d, exist_ok=True)


def save(name, a):
    np.save(os.path.join(d, name), a)


# NVFP4 codes 0..15 twice (E2M1: 0 0.5 1 1.5 2 3 4 6, then the negatives).
codes = np.tile(np.arange(16, dtype=np.uint8), 2).reshape(1, 32)
save("w_codes.npy", codes)  # one code per element, uint8 0-15
save("w_packed.npy", (codes[:, 0::2] | (codes[:, 1::2] << 4)).astype(np.uint8))  # (1, 16): 0x10 0x32 ...
save("w_ml.npy", codes.view(ml_dtypes.float4_e2m1fn))  # np.save makes a |V1 array of it
# Block scales: 1.0 (0x38) and 2.0 (0x40).
save("s_raw.npy", np.array([[0x38, 0x40]], np.uint8))
save("s_ml.npy", np.array([[1.0, 2.0]], ml_dtypes.float8_e4m3fn))  # |V1
save("s_nan.npy", np.array([[0x30, 0x7F]], np.uint8))  # 0.5 and NaN

# i4 values -8..7 and 7..-8.
q = np.stack([np.arange(-8, 8), np.arange(7, -9, -1)]).astype(np.int8)
save("q_int8.npy", q)  # one value per element, int8 -8..7
u = (q.astype(np.uint8) & 0x0F)
save("q_packed.npy", (u[:, 0::2] | (u[:, 1::2] << 4)).astype(np.uint8))  # (2, 8)

# bf16: 1.0, -2.0, the smallest subnormals of both signs, +inf, two NaNs, 0.
x = np.array([[0x3F80, 0xC000, 0x0001, 0x8001, 0x7F80, 0x7F81, 0xFFFF, 0x0000],
              [0x4049, 0x3EAB, 0x007F, 0x0080, 0xFF80, 0x8000, 0x7FC0, 0x3C00]], np.uint16)  # fmt: skip
save("x_raw.npy", x)  # raw bits
save("x_ml.npy", x.view(ml_dtypes.bfloat16))  # np.save makes a |V2 array of it

# f8E5M2: all of 0x00-0x0F and 0x70-0x7F (subnormals, inf 0x7C, NaNs 0x7D-0x7F).
a = np.concatenate([np.arange(0x00, 0x10), np.arange(0x70, 0x80)]).astype(np.uint8).reshape(1, 32)
save("a_raw.npy", a)
save("a_ml.npy", a.view(ml_dtypes.float8_e5m2))  # np.save writes descr '<f1', which np.load cannot read

# Wrong inputs.
save("w_wrong_shape.npy", np.zeros((1, 31), np.uint8))
save("s_f32.npy", np.zeros((1, 2), np.float32))
with open(os.path.join(d, "not_npy.npy"), "wb") as f:
    f.write(b"this is not an .npy file")

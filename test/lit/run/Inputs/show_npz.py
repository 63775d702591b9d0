"""Print an .npz (or .npy) for FileCheck: each array's name, shape and dtype,
then its rows (last dim) one per line.  float32 as Python floats (NaN as
nan:0x<bits>; with --hex as float.hex()), unsigned integers (raw bits) in
hex, signed ones in decimal.

Usage: python show_npz.py [--hex] FILE
"""

import sys

import numpy as np


HEX = "--hex" in sys.argv[1:]
PATH = [a for a in sys.argv[1:] if a != "--hex"][0]


def show(name, a):
    print(f"{name}: shape {tuple(a.shape)} {a.dtype}")
    rows = a.reshape(-1, a.shape[-1]) if a.ndim else a.reshape(1, 1)
    for r in rows:
        if a.dtype == np.float32:
            cells = [f"nan:{int(v.view(np.uint32)):#010x}" if np.isnan(v) else (float(v).hex() if HEX else repr(float(v)))
                     for v in r]
        elif a.dtype.kind == "u":
            cells = [f"{int(v):#0{2 + 2 * a.dtype.itemsize}x}" for v in r]
        else:
            cells = [str(int(v)) for v in r]
        print(" ".join(cells))


data = np.load(PATH)
if isinstance(data, np.ndarray):
    show("array", data)
else:
    with data as z:
        for k in z.files:
            show(k, z[k])

# A stand-in for the Python source of a kernel compiler: the locations of
# Inputs/locations.mlir point at these lines (mlir-opt and fetchc show them).
def kernel(a, b):
    x = fetch(a)
    y = cast(x, i16)
    commit(y, b)


def helper(x):
    return cast(x, i16)


def inner(x):
    return helper(x)

"""Names that leave fetchc (issue 26 item 8; ir.md §2a, ``fetchc/names.py``).

A program is named ``function/index`` (``m/function/index`` in a nested
module): a ``seq.bin`` string, a ``--program NAME`` and the key of its array
in ``fetchc sim -o``'s ``.npz``; a tensor's name keys ``fetchc run -o``'s
``.npz``.  Kernels named ``@""``, ``@"."``, ``@".."``, ``@"/etc/x"``,
``@"C:"`` used to compile into programs ``sim -o`` then refused; now the
compiler refuses them, located at the function (or the argument), saying
which names work, and every name it accepts works with ``sim -o`` and
``--program``.
"""

from __future__ import annotations

import numpy as np
import pytest
from samples import DECODE

import fetchc
from fetchc.cli import main
from fetchc.diagnostics import DiagnosticError
from fetchc.npyio import load_npy, npz_member_names

WORKS = "holds no NUL or backslash, does not start with '/' or a drive letter ('C:') and has no empty, '.' or '..'"


def _error(text: str):
    with pytest.raises(DiagnosticError) as e:
        fetchc.compile(text, filename="n.mlir", cache=False)
    (d,) = e.value.diagnostics
    return d


@pytest.mark.parametrize(
    "name, program, why",
    [
        ('""', "/0", "is an absolute path"),
        ('"."', "./0", "has an empty, '.' or '..' path component"),
        ('".."', "../0", "has an empty, '.' or '..' path component"),
        ('"/etc/x"', "/etc/x/0", "is an absolute path"),
        ('"C:"', "C:/0", "is an absolute path"),
        ('"a//b"', "a//b/0", "has an empty, '.' or '..' path component"),
        ('"a\\5Cb"', "a\\b/0", "contains a backslash"),
        ('"a\\00b"', "a\x00b/0", "contains a NUL character"),  # escaped when printed
    ],
)
def test_a_kernel_whose_program_names_cannot_leave_fetchc_is_refused_at_the_function(name, program, why):
    d = _error(DECODE.replace("@decode", "@" + name))
    assert d.loc == ("n.mlir", 1, 1)
    assert d.message.startswith(f"'func.func' op cannot name its programs \"{program}\", ...: "), d.message
    assert why in d.message and WORKS in d.message and "rename the function (" in d.message


def test_a_nested_module_name_is_part_of_the_program_name():
    d = _error('builtin.module {\n  builtin.module @".." {\n' + DECODE + "  }\n}\n")
    assert d.loc == ("n.mlir", 3, 1)
    assert 'cannot name its programs "../decode/0"' in d.message
    assert "rename the function or an enclosing builtin.module" in d.message


@pytest.mark.parametrize(
    "args, col, named",
    [
        ("%.: memref<64x16xf4E2M1FN>", 19, '%. is named "." by its SSA name'),
        ('%w: memref<64x16xf4E2M1FN> {rngd.name = "../w"}', 19, '%w is named "../w" by its rngd.name'),
        ('%w: memref<64x16xf4E2M1FN> {rngd.name = "/tmp/w"}', 19, '%w is named "/tmp/w" by its rngd.name'),
    ],
)
def test_a_tensor_whose_name_cannot_key_an_npz_is_refused_at_the_argument(args, col, named):
    text = DECODE.replace("%w: memref<64x16xf4E2M1FN>", args).replace("fetch.fetch %w", "fetch.fetch %" + args[1])
    d = _error(text)
    assert d.loc == ("n.mlir", 1, col)
    assert d.message.startswith(f"'func.func' op {named}: a tensor's name is a --arg NAME"), d.message
    assert WORKS in d.message


NAMES = ["a/b", "file", "layer 1", "x.npy", "allow_pickle", "é", "-", "a.b/c..d"]


@pytest.fixture(scope="module")
def codes(tmp_path_factory):
    path = tmp_path_factory.mktemp("in") / "w.npy"
    np.save(path, np.arange(64 * 8, dtype=np.uint8).reshape(64, 8))
    return path


@pytest.mark.parametrize("name", NAMES)
def test_every_kernel_name_that_compiles_works_with_sim_and_program(name, codes, tmp_path):
    text = DECODE.replace("@decode", '@"' + name + '"')
    src, binary = tmp_path / "k.mlir", tmp_path / "k.bin"
    src.write_text(text)
    assert main([str(src), "-o", str(binary)]) == 0
    assert [p.name for p in fetchc.compile(text, cache=False).programs] == [name + "/0"]
    assert npz_member_names([name + "/0"]) == {name + "/0": name + "/0.npy"}
    whole, one = tmp_path / "out.npz", tmp_path / "one.npy"
    assert main(["sim", str(binary), "--arg", f"w={codes}", "-o", str(whole)]) == 0
    # --program=NAME: a name may start with "-", which argparse would take for an option otherwise
    assert main(["sim", str(binary), "--arg", f"w={codes}", f"--program={name}/0", "-o", str(one)]) == 0
    with np.load(whole) as z:
        assert list(z.keys()) == [name + "/0"]
        assert np.array_equal(z[name + "/0"], load_npy(str(one)))

"""The compile benchmark's workloads (tools/bench_compile.py) are what they
claim: valid kernels that fit one slice's DM, the distinct chains all
different, the model-like kernels differing only in names."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

import fetchc

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))
from bench_compile import chains_module, distinct_module, model_module  # noqa: E402


def _fits_one_slice(result: fetchc.CompileResult) -> bool:
    return all(t.dm_base + t.bytes <= 1 << 19 for k in result.seqbin.manifest.kernels for t in k.tensors)


@pytest.mark.parametrize("seed", [0, 1])
def test_distinct_chains_compile_and_differ(seed):
    text, ops = distinct_module(120, seed=seed)
    result = fetchc.compile(text, filename="distinct.mlir")
    assert _fits_one_slice(result)
    bodies = re.findall(r"^  %a\d+ = fetch\.fetch %\w+ (\{.*)$", text, re.M)
    assert len(bodies) >= 80  # the single-line fetches (tiled reads span two lines)
    # no two fetches alike once the chain index is taken out of the names
    assert len(set(bodies)) == len(bodies)
    assert len({p.base for p in result.programs}) > len(result.programs) // 4
    assert ops > 400


def test_chains_fit_one_slice_per_function():
    result = fetchc.compile(chains_module(40)[0], filename="chains.mlir")
    assert _fits_one_slice(result) and len(result.programs) == 60  # 10 chains of each kind: 2+1+2+1 programs


def test_model_kernels_differ_only_in_names():
    text, _ = model_module(2)
    result = fetchc.compile(text, filename="model.mlir")
    assert _fits_one_slice(result) and len(result.seqbin.manifest.kernels) == 14
    funcs = re.split(r"(?=^func\.func)", text, flags=re.M)[1:]
    shapes = {re.sub(r"@l\d+_\w+|%l\d+_\w+?_", "N", f) for f in funcs}
    assert len(shapes) == 3  # q/k/v/o, gate/up, down

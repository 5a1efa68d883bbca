"""Transformer pieces: Megatron's two all-reduces, vocab parallelism, reshapes, training."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import jax
import numpy as np
import pytest

from meshify.rewrite import convert_source
from meshify.runtime.hlo import collectives, summarize
from tests.cases import transformer_cases as cases

ROOT = Path(__file__).resolve().parent.parent
B, L, D, H, K, F, V = 4, 8, 32, 8, 4, 64, 64


def _rng(seed=0):
    return np.random.default_rng(seed)


def _block_args():
    r = _rng()
    n = lambda *s: (r.standard_normal(s) * 0.3).astype(np.float32)  # noqa: E731
    return [n(B, L, D), 1 + n(D), n(D, H, K), n(D, H, K), n(D, H, K), n(H, K, D), 1 + n(D), n(D, F), n(F, D)]


def _ce_args(with_unembed=True):
    r = _rng(1)
    tokens = r.integers(0, V, (B, L)).astype(np.int32)
    targets = r.integers(0, V, (B, L)).astype(np.int32)
    embed = (r.standard_normal((V, D)) * 0.3).astype(np.float32)
    args = [tokens, targets, embed]
    if with_unembed:
        args.append((r.standard_normal((D, V)) * 0.3).astype(np.float32))
    return args


@pytest.fixture(scope="module")
def converted():
    """The cases module converted to a file and imported (the converted-file path)."""
    path = ROOT / "tests" / "cases" / "transformer_cases.py"
    out = Path(__import__("tempfile").mkdtemp()) / "transformer_cases_sharded.py"
    out.write_text(convert_source(path.read_text(), "tests/cases/transformer_cases.py").text)
    spec = importlib.util.spec_from_file_location("transformer_cases_sharded", out)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _close(got, want, rtol=1e-5):
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * max(1.0, float(np.abs(want).max())))


@pytest.mark.parametrize("name, args", [("block", _block_args), ("vocab_ce", _ce_args),
                                        ("one_hot_ce", lambda: _ce_args(False)),
                                        ("heads_roundtrip", lambda: [_rng(2).standard_normal((B, L, D)).astype(np.float32),
                                                                     _rng(3).standard_normal((D, 64)).astype(np.float32)])])
def test_matches_reference_through_decorator_and_converted_file(name, args, converted) -> None:
    values = args()
    want = getattr(cases, name).reference(*values)
    _close(getattr(cases, name)(*values), want)
    _close(getattr(converted, name)(*values), want)


@pytest.mark.parametrize("name, args, argnums", [("block", _block_args, tuple(range(9))),
                                                 ("vocab_ce", _ce_args, (2, 3)),
                                                 ("one_hot_ce", lambda: _ce_args(False), (2,))])
def test_gradients_match_single_device(name, args, argnums) -> None:
    values = args()
    fn = getattr(cases, name)
    scalar = (lambda *a: (fn(*a) ** 2).sum()) if name == "block" else fn
    reference = (lambda *a: (fn.reference(*a) ** 2).sum()) if name == "block" else fn.reference
    got = jax.jit(jax.grad(scalar, argnums=argnums))(*values)
    want = jax.grad(reference, argnums=argnums)(*values)
    for g, w in zip(got, want, strict=True):
        _close(g, w, rtol=1e-4)


def test_block_forward_holds_exactly_two_all_reduces_over_model() -> None:
    """The Megatron optimum: one all-reduce after attention, one after the FFN."""
    values = _block_args()
    found = collectives(cases.block.lower(*values).compile().as_text())
    assert [c.kind for c in found] == ["all-reduce", "all-reduce"], found
    per_device = f"f32[{B // 2},{L},{D}]"
    assert all(c.shape_text == per_device for c in found), found


def _gathers_of_vocab(hlo: str) -> list:
    return [c for c in collectives(hlo) if c.kind == "all-gather"
            and any(int(d) % V == 0 or int(d) % (V // 4) == 0 and int(d) >= V
                    for d in c.shape_text.split("[")[1].split("]")[0].split(",") if d)]


def test_vocab_parallel_loss_never_gathers_table_or_logits() -> None:
    values = _ce_args()
    forward = cases.vocab_ce.lower(*values).compile().as_text()
    backward = jax.jit(jax.grad(cases.vocab_ce, argnums=(2, 3))).lower(*values).compile().as_text()
    for hlo in (forward, backward):
        assert not [c for c in collectives(hlo) if c.kind == "all-gather"], summarize(collectives(hlo))


def test_reshape_sizes_become_per_shard_sizes() -> None:
    """Split heads over 'model' (4) and batch over 'batch' (2): literal 8 -> 2; b -> b's shard, checked for
    divisibility when the function runs (mr.shard_size); no collective."""
    source = cases.heads_roundtrip.source
    assert 'y.reshape(mr.shard_size(b, 2, "batch"), l, 2, -1)' in source, source
    assert 'h.reshape(mr.shard_size(b, 2, "batch"), l, -1)' in source, source
    assert "jax.lax" not in source and "all_gather" not in source, source


def test_merging_a_split_minor_dim_is_an_error(tmp_path) -> None:
    from meshify.errors import UnsupportedError

    path = tmp_path / "m.py"
    path.write_text("import jax.numpy as jnp\nfrom meshify import Tensor, mesh\n\n"
                    '@mesh(model=4, rules={"d_head": "model"})\n'
                    'def f(h: Tensor["b", "heads", "d_head"]) -> Tensor["b", "d_model"]:\n'
                    '    z: Tensor["b", "d_model"] = h.reshape(h.shape[0], -1)\n'
                    "    return z\n")
    with pytest.raises(UnsupportedError, match="not the major"):
        convert_source(path.read_text(), str(path))


def test_mixed_precision_partial_sums_accumulate_in_float32() -> None:
    r = _rng(4)
    values = [r.standard_normal(s).astype(np.float32) for s in [(B, D), (D, F), (F, D)]]
    # A bf16 partial sum is added in f32 and cast back, as jnp.sum accumulates on one device
    # (checked on the program as lowered, before XLA's own choices).
    lowered = cases.mixed_precision.lower(*values).as_text()
    assert lowered.count("stablehlo.all_reduce") == 1
    after = lowered[lowered.index("stablehlo.all_reduce"):]
    signature = after[after.index("}) : ("):].splitlines()[0]
    assert f"-> tensor<{B // 2}x{D}xf32>" in signature, signature
    _close(cases.mixed_precision(*values), cases.mixed_precision.reference(*values), rtol=2e-2)


def test_transformer_lm_trains_and_matches_one_device_losses() -> None:
    proc = subprocess.run([sys.executable, "examples/transformer_lm.py", "--steps", "6", "--reference"],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "max relative difference of per-step losses" in proc.stdout


@pytest.mark.slow
def test_transformer_lm_50_steps_loss_falls_and_matches() -> None:
    proc = subprocess.run([sys.executable, "examples/transformer_lm.py", "--steps", "50", "--reference"],
                          cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout + proc.stderr

"""Real model code: pytree parameters, helper functions, scan, static flags, dropout (examples/gpt2.py)."""

from __future__ import annotations

import difflib
import re
import subprocess
import sys
from pathlib import Path

import jax
import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent


def _model_section(text: str) -> list[str]:
    return text[text.index("class Config(NamedTuple):"):text.index("SIZES = ") if "SIZES" in text
                else len(text)].rstrip().splitlines()


def test_gpt2_differs_from_the_plain_version_by_hints_only() -> None:
    plain = _model_section((ROOT / "examples" / "gpt2_plain.py").read_text())
    hinted = _model_section((ROOT / "examples" / "gpt2.py").read_text())
    changed = [line for line in difflib.ndiff(plain, hinted) if line[:2] in ("- ", "+ ")]
    assert changed, "the two versions should differ by hints"
    for line in changed:
        body = line[2:]
        if line.startswith("+ "):
            assert "Annotated[jax.Array, " in body or body.startswith("@mesh("), line
        else:
            assert "jax.Array" in body, line
    # Taking the hints away again gives the plain code back.
    unhinted = [re.sub(r"Annotated\[jax\.Array, [^\]]*\]", "jax.Array", l) for l in hinted
                if not l.startswith("@mesh(")]
    assert unhinted == plain


def _run_gpt2(*args: str) -> str:
    proc = subprocess.run([sys.executable, "examples/gpt2.py", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=900)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


def test_gpt2_logits_match_one_device_with_and_without_dropout_and_training_matches() -> None:
    out = _run_gpt2("--steps", "3", "--reference")
    assert "dropout off: logits max abs difference" in out and "dropout on : logits max abs difference" in out
    worst = float(re.search(r"per-step losses from one-device training: (\S+)", out).group(1))
    assert worst <= 1e-4


@pytest.mark.slow
def test_gpt2_20_steps_match_one_device_losses() -> None:
    out = _run_gpt2("--steps", "20", "--reference")
    worst = float(re.search(r"per-step losses from one-device training: (\S+)", out).group(1))
    assert worst <= 1e-4


def test_gpt2_gradients_are_the_same_pytree_with_the_parameter_shardings() -> None:
    sys.path.insert(0, str(ROOT / "examples"))
    try:
        import gpt2 as model
    finally:
        sys.path.pop(0)
    params = model.init_params()
    tokens, targets = next(model.batches(1))
    key = jax.random.key(0)
    cfg = model.Config(dropout=0.0)
    placed = model.gpt2.place(params, tokens, targets, key, cfg, False)[0]
    grads = jax.jit(jax.grad(lambda p: model.gpt2(p, tokens, targets, key, cfg, False)[0]))(placed)
    want = jax.grad(lambda p: model.gpt2.reference(p, tokens, targets, key, cfg, False)[0])(params)
    assert type(grads) is model.GPT2 and type(grads.blocks.attn) is model.Attention
    shardings = model.gpt2.sharded.shardings["params"]
    for got, ref, sharding in zip(jax.tree.leaves(grads), jax.tree.leaves(want), jax.tree.leaves(shardings)):
        assert got.sharding.is_equivalent_to(sharding, got.ndim)
        np.testing.assert_allclose(np.asarray(got), np.asarray(ref), rtol=1e-4, atol=1e-6)


def test_generated_gpt2_size_is_reported() -> None:
    from meshify.rewrite import convert_source

    text = convert_source((ROOT / "examples" / "gpt2.py").read_text(), "examples/gpt2.py").text
    assert text.count("jax.lax.scan(") == 1
    assert "# meshify: block specialised for" in text

"""``jax.lax.pad`` with (low, high, interior) triples on dims that are not split, beside split ones: RWKV's token
shift along time written with a negative high pad (``jax.lax.pad(x, 0.0, ((0, 0, 0), (1, -1, 0), (0, 0, 0)))``,
torch's ``ZeroPad2d((0, 0, 1, -1))``), local with the batch and the features split; a partial sum padded by 0
stays partial (``g``), by another value is summed first (``h``, interior padding too).  Was refused: 'jax.lax.pad
has no meshify rule'."""
import jax
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"d_model": "model"})
def f(x: Tensor["batch", "length", "d_model"], mix: Tensor["d_model"]) -> Tensor["batch", "length", "d_model"]:
    xx = jax.lax.pad(x, 0.0, ((0, 0, 0), (1, -1, 0), (0, 0, 0)))
    return x * mix + xx * (1 - mix)


@mesh(batch=2, model=4, rules={"d_model": "model"})
def g(x: Tensor["batch", "length", "d_model"], w: Tensor["d_model", "d_ff"]) -> Tensor["batch", "length", "d_ff"]:
    return jax.lax.pad(x @ w, 0.0, ((0, 0, 0), (2, -2, 0), (0, 0, 0))) * 3.0


@mesh(batch=2, model=4, rules={"d_model": "model"})
def h(x: Tensor["batch", "length", "d_model"], w: Tensor["d_model", "d_ff"]):
    return jax.lax.pad(x @ w, 1.5, ((0, 0, 0), (1, 0, 1), (0, 1, 0)))


def inputs():
    rng = np.random.default_rng(7)
    x = rng.standard_normal((4, 6, 8)).astype(np.float32)
    mix = rng.uniform(size=(8,)).astype(np.float32)
    w = rng.standard_normal((8, 5)).astype(np.float32)
    return {"f": (x, mix), "g": (x, w), "h": (x, w)}

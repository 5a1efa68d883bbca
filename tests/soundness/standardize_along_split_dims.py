"""``jax.nn.standardize`` along a split dim: a layer norm over a split ``d_model`` (``algorithm="fast"``, JAX's
default: the mean of squares less the squared mean, clipped at 0; and ``"stable"``; rows far from 0 only with
``"stable"``: ``"fast"`` cancels there, on one device too, and its rounding depends on the order of the sums),
``epsilon`` given, a negative axis, the input a partial sum (``x @ w`` contracting a split ``d_ff``), on 2x4 and
1x8 (bfloat16: ``standardize_low_precision``).  Each row's statistics are psums of the blocks' sums and counts
(``mr.standardize``); before, "jax.nn.standardize along split dim 'd'" was refused with a fix unsplitting it."""
import jax
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"d": "model", "d_ff": None})
def norm(x: Tensor["batch", "seq", "d"], g: Tensor["d"], b: Tensor["d"]):
    fast = jax.nn.standardize(x, axis=-1) * g + b
    stable = jax.nn.standardize(x, axis=2, epsilon=1e-3, algorithm="stable")
    return fast, stable, jax.nn.standardize(x * 3.0 + 100.0, axis=-1, epsilon=0.5, algorithm="stable")


@mesh(model=8, rules={"d_ff": "model", "batch": None})
def partial(x: Tensor["batch", "d_ff"], w: Tensor["d_ff", "d"], h: Tensor["batch", "d_ff"]):
    return jax.nn.standardize(x @ w, axis=-1), jax.nn.standardize(h, 1)


def inputs():
    rng = np.random.default_rng(7)

    def r(*shape, scale=1.0, shift=0.0):
        return (rng.standard_normal(shape) * scale + shift).astype(np.float32)

    x = r(4, 3, 16, scale=2.0, shift=1.0)
    x[1, 2] = 5.0  # a constant row: variance 0, epsilon alone
    return {"norm": (x, r(16), r(16)), "partial": (r(4, 16), r(16, 8, scale=0.5), r(4, 16, shift=3.0))}

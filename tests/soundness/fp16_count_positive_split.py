"""Sums of comparisons and of integers over a split dim stay integer sums (no float accumulation)."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(model=4, rules={"d": "model"})
def f(x: Tensor["batch", "d"], n: Tensor["batch", "d"]) -> tuple[Tensor["batch"], Tensor["batch"]]:
    return jnp.sum(x > 0, axis=1), jnp.sum(n * 2, axis=1)


def inputs():
    rng = np.random.default_rng(3)
    return (rng.standard_normal((2, 8)).astype(np.float16), rng.integers(-5, 5, (2, 8)).astype(np.int8))

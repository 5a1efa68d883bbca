"""jax.nn.logsumexp(x, axis=-1, return_sign=True) over a split dim."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"d": "model"})
def f(x: Tensor["batch", "d"]) -> Tensor["batch"]:
    lse, sign = jax.nn.logsumexp(x, axis=-1, return_sign=True)
    return sign * lse


def inputs():
    rng = np.random.default_rng(564)
    return (rng.standard_normal((4, 8)).astype(np.float32),)

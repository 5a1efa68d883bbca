"""jax.nn.logsumexp(x, -1, None, True): keepdims positional, over a split dim."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"d": "model"})
def f(x: Tensor["batch", "d"]) -> Tensor["batch", "d"]:
    return x - jax.nn.logsumexp(x, -1, None, True)


def inputs():
    rng = np.random.default_rng(984)
    return (rng.standard_normal((4, 8)).astype(np.float32),)

"""jnp.std of float16 activations over a split dim (jnp computes it in float32 and rounds once)."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"
TOL = 2e-3


@mesh(batch=2, model=4, rules={"d": "model"})
def f(x: Tensor["batch", "d"]) -> Tensor["batch"]:
    return jnp.std(x, axis=-1)


def inputs():
    rng = np.random.default_rng(7004)
    return ((rng.standard_normal((4, 16)) * 300 + 2000).astype(np.float16),)

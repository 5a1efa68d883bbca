"""x.reshape(B, n_heads, -1) of a split array without naming the new dims: the split d_model is the major
factor, so the heads dim takes its split (an inferred name, heads?), checked divisible at call time."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"d_model": "model"})
def f(x: Tensor["batch", "d_model"], n_heads: int) -> Tensor["batch"]:
    B = x.shape[0]
    h = x.reshape(B, n_heads, -1)
    return jnp.sum(h, axis=(1, 2))


def inputs():
    return np.random.default_rng(64).standard_normal((4, 32)).astype(np.float32), 8

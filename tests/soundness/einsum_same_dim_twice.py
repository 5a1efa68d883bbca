"""Self-similarity einsum("bqd,bkd->bqk", x, x) where both positions carry the same dim name, split (sequence parallel)."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(model=4, rules={"length": "model"})
def f(x: Tensor["batch", "length", "d"]) -> Tensor["batch", "length"]:
    s = jnp.einsum("bqd,bkd->bqk", x, x)
    return jnp.sum(s, axis=-1)


def inputs():
    return (np.random.default_rng(146).standard_normal((2, 8, 3)).astype(np.float32),)

"""A module-level array W, named first (w: Tensor[...] = W), times a batch-split activation."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"

W = jnp.asarray(np.random.default_rng(110).standard_normal((8, 16)).astype(np.float32))


@mesh(batch=2, model=4, rules={"e": "model"})
def f(x: Tensor["batch", "d"]) -> Tensor["batch", "e"]:
    w: Tensor["d", "e"] = W
    return jnp.tanh(x @ w)


def inputs():
    return (np.random.default_rng(111).standard_normal((4, 8)).astype(np.float32),)

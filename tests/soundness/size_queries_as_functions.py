"""Sizes asked as functions, as numpy-style code asks them: ``len(x)``, ``jnp.shape(x)``, ``jnp.size(x)``,
``jnp.size(x, 1)``, ``np.shape(x)[0]``, ``jnp.ndim(x)``, on a value split over both axes; each means the
global size, as ``x.shape[0]`` does (``jnp.arange(len(x))`` lines up with the split batch).  Before, "no
meshify rule" (found by a user-style attack)."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"d": "model"})
def f(x: Tensor["batch", "d"]) -> Tensor["batch", "d"]:
    n, d = jnp.shape(x)
    rows = jnp.arange(len(x))[:, None] / len(x)
    scale = jnp.size(x) / (n * jnp.size(x, 1)) + np.shape(x)[0] / n + jnp.ndim(x)
    return x * rows * scale + jnp.sum(x, axis=-1, keepdims=True) / d


def inputs():
    return (np.random.default_rng(313).standard_normal((4, 8)).astype(np.float32),)

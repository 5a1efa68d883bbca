"""One helper reading x.shape[0] of a split dim, called from @mesh functions on meshes of different sizes."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


def per_example(x):
    n = x.shape[0]
    return x / n


@mesh(batch=2)
def f(x: Tensor["batch", "d"]) -> Tensor["batch", "d"]:
    return per_example(x) + 1.0


@mesh(batch=8)
def g(x: Tensor["batch", "d"]) -> Tensor["batch", "d"]:
    return per_example(x) * 2.0


def inputs():
    x = np.random.default_rng(1).standard_normal((8, 4)).astype(np.float32)
    return {"f": (x,), "g": (x,)}

"""Two @mesh functions on meshes of different sizes, one calling the other, both reaching one helper."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


def scale_by_count(x):
    return x * x.shape[0] - jnp.sum(x, axis=0)


@mesh(batch=4)
def inner(x: Tensor["batch", "d"]) -> Tensor["batch", "d"]:
    return scale_by_count(x)


@mesh(batch=8)
def f(x: Tensor["batch", "d"]) -> Tensor["batch", "d"]:
    return inner(x) + scale_by_count(x)


def inputs():
    x = np.random.default_rng(12).standard_normal((8, 4)).astype(np.float32)
    return {"inner": (x,), "f": (x,)}

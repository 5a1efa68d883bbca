"""Helper defaults naming hinted module-level arrays (b=B, w=W): each is that whole array with its hinted
dims, sliced locally where the other operand is split (d over 'model'); passed explicitly, the argument
wins; two meshes share the helpers (different versions)."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"

B: Tensor["d"] = jnp.asarray(np.linspace(-1.0, 1.0, 8, dtype=np.float32))
W: Tensor["d", "h"] = jnp.asarray(np.linspace(-1.0, 1.0, 32, dtype=np.float32).reshape(8, 4))


def add_bias(x, b=B):
    return x + b


def proj(x, w=W, *, scale=2.0):
    return (x @ w) * scale


@mesh(batch=2, model=4, rules={"d": "model"})
def f(x: Tensor["batch", "d"]) -> Tensor["batch", "h"]:
    return proj(add_bias(x)) + proj(add_bias(x, x), scale=3.0)


@mesh(batch=8)
def g(x: Tensor["batch", "d"]) -> Tensor["batch", "h"]:
    return proj(add_bias(x))


def inputs():
    x = np.random.default_rng(163).standard_normal((8, 8)).astype(np.float32)
    return {"f": (x,), "g": (x,)}

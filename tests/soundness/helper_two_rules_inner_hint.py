"""A helper whose annotated intermediate depends on the rules, called with the same argument layouts under two rule sets."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


def split_heads(x):
    b = x.shape[0]
    h: Tensor["batch", "heads", "d_head"] = x.reshape(b, 4, -1)
    return jnp.sum(jnp.tanh(h), axis=-1)


@mesh(batch=2, model=4, rules={"heads": "model"})
def f(x: Tensor["batch", "d"]) -> Tensor["batch", "heads"]:
    return split_heads(x)


@mesh(batch=2, model=4)
def g(x: Tensor["batch", "d"]) -> Tensor["batch", "heads"]:
    return split_heads(x)


def inputs():
    x = np.random.default_rng(4).standard_normal((4, 16)).astype(np.float32)
    return {"f": (x,), "g": (x,)}

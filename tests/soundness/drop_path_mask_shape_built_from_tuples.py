"""timm's drop_path: the mask's shape built as ``(x.shape[0],) + (1,) * (x.ndim - 1)``, held in a name or
written in the call, in a helper; a shape joined from a slice of x.shape and ones; as training runs it."""

import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


def drop_path(x, key, rate):
    keep_prob = 1.0 - rate
    shape = (x.shape[0],) + (1,) * (x.ndim - 1)
    mask = jax.random.bernoulli(key, keep_prob, shape)
    return x / keep_prob * mask


@mesh(batch=2, model=4, rules={"c": "model"})
def block(x: Tensor["batch", "h", "c"], key: Tensor[()], w: Tensor["c", "c2"]):
    k1, k2 = jax.random.split(key)
    y = x + drop_path(jnp.tanh(x), k1, 0.3)
    scale = jax.random.uniform(k2, x.shape[:1] + (1, 1)) + 0.5
    return (y * scale) @ w


def inputs():
    rng = np.random.default_rng(0)
    return {"block": (rng.normal(size=(8, 4, 16)).astype(np.float32), jax.random.key(3),
                      (rng.normal(size=(16, 8)) / 4).astype(np.float32))}

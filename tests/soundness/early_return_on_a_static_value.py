"""An early return on a static value, as residual blocks write their downsampling path: ``if stride != 1: return
h + x @ proj`` then ``return h + x`` (which would not even fit the layouts when the early return is taken), in a
helper called with stride 2 and stride 1, and on a module constant in the @mesh function.  What follows a taken
early return never runs in that version, so it is kept as written.  Before, "'+' lines up dim 'c1' of 'x' with dim
'c2'" at the fall-through (the ResNet attack); ``if "proj" in p:`` of a block's dict likewise reads its keys (was
"comparison on a tuple or pytree")."""
from typing import TypedDict

import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"
STRIDE = 2


def block(x, w, proj, stride):
    h = jnp.tanh(x @ w)
    if stride != 1:
        return h + x @ proj
    return h + x


@mesh(batch=2, model=4, rules={"c2": "model"})
def net(x: Tensor["batch", "c1"], w1: Tensor["c1", "c2"], p: Tensor["c1", "c2"], w2: Tensor["c2", "c2"]):
    y = block(x, w1, p, 2)
    return block(y, w2, None, 1).sum(axis=-1)


@mesh(batch=8)
def top(x: Tensor["batch", "c1"], w: Tensor["c1", "c2"], p: Tensor["c1", "c2"]):
    h = x @ w
    if STRIDE != 1:
        return jnp.tanh(h + x @ p)
    return h + x


class Down(TypedDict):
    w: Tensor["c1", "c1"]
    proj: Tensor["c1", "c1"]


class Plain(TypedDict):
    w: Tensor["c1", "c1"]


def keyed_block(x, p):
    h = jnp.tanh(x @ p["w"])
    if "proj" in p:  # an optional key of the block's dict: known for each block's structure
        return h + x @ p["proj"]
    return h + x


@mesh(batch=8)
def keyed(x: Tensor["batch", "c1"], a: Down, b: Plain):
    return keyed_block(keyed_block(x, a), b)


def inputs():
    rng = np.random.default_rng(83)
    x = rng.standard_normal((8, 4)).astype(np.float32)
    w1, p = (rng.standard_normal((4, 8)).astype(np.float32) / 2 for _ in range(2))
    sq = rng.standard_normal((4, 4)).astype(np.float32) / 2
    return {"net": (x, w1, p, rng.standard_normal((8, 8)).astype(np.float32) / 3), "top": (x, w1, p),
            "keyed": (x, {"w": sq, "proj": sq.T}, {"w": sq})}

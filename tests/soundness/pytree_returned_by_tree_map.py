"""A NamedTuple of parameters returned as ``jax.tree.map`` makes it (an EMA, a scaled copy), directly and beside a
loss, with a field holding a tuple of blocks: it leaves as it is (no field needs completing).  Before, meshify
rebuilt it as ``P(w1=<the lambda>, w2=p, b=<the tree_map>)`` and JAX raised a raw TypeError (CLIP attack); a
tuple field was refused."""
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


class P(NamedTuple):
    w1: Tensor["d", "ff"]
    w2: Tensor["ff", "d"]
    b: Tensor["d"]


class Two(NamedTuple):
    head: Tensor["d"]
    pair: tuple[P, P]


@mesh(batch=2, model=4, rules={"ff": "model"})
def scaled(p: P, x: Tensor["batch", "d"]):
    s = jnp.mean(x)
    return jax.tree_util.tree_map(lambda leaf: leaf * s, p)


@mesh(batch=2, model=4, rules={"ff": "model"})
def ema(avg: Two, new: Two, x: Tensor["batch", "d"], decay: float = 0.9):
    loss = jnp.sum(jax.nn.relu(x @ new.pair[0].w1) @ new.pair[1].w2)
    return loss, jax.tree.map(lambda a, n: decay * a + (1 - decay) * n, avg, new)


def inputs():
    rng = np.random.default_rng(91)

    def p():
        return P(rng.standard_normal((4, 8)).astype(np.float32), rng.standard_normal((8, 4)).astype(np.float32),
                 rng.standard_normal(4).astype(np.float32))

    def two():
        return Two(rng.standard_normal(4).astype(np.float32), (p(), p()))

    x = rng.standard_normal((4, 4)).astype(np.float32)
    return {"scaled": (p(), x), "ema": (two(), two(), x)}

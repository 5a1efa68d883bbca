"""A pytree returned whose field is a list of blocks as long as each call's (an EMA of params with ``blocks:
list[Block]``, made by ``jax.tree.map``), directly, named, under a return hint, beside a loss, in a dict: out_specs
``mr.Each(Block(w=P(...)))``, spelled out by the runtime for each call's length; lists come back as lists.  Before,
"a NamedTuple or dataclass result is not rebuilt by meshify yet" (the U-Net attack: spelled out field by field)."""
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


class Block(NamedTuple):
    w: Tensor["ch", "ch_out"]
    b: Tensor["ch_out"]


class Params(NamedTuple):
    head: Tensor["ch_out"]
    blocks: list[Block]


@mesh(batch=2, model=4, rules={"ch": "model"})
def ema(avg: Params, new: Params, decay: float = 0.9):
    return jax.tree.map(lambda a, n: decay * a + (1 - decay) * n, avg, new)


@mesh(batch=2, model=4, rules={"ch": "model"})
def step(params: Params, x: Tensor["batch", "ch"]) -> tuple[Tensor[()], Params]:
    def loss(p):
        h = x
        for blk in p.blocks:
            h = jnp.tanh(h @ blk.w + blk.b) @ blk.w.T
        return jnp.mean(h ** 2) + jnp.sum(p.head ** 2)

    value, grads = jax.value_and_grad(loss)(params)
    return value, jax.tree.map(lambda p, g: p - 0.1 * g, params, grads)


@mesh(batch=2, model=4, rules={"ch": "model"})
def as_dict(params: Params):
    scaled = jax.tree.map(lambda p: p * 2.0, params)
    return {"head": scaled.head, "blocks": scaled.blocks}


def inputs():
    rng = np.random.default_rng(47)

    def params(n):
        return Params(rng.standard_normal(4).astype(np.float32),
                      [Block((0.3 * rng.standard_normal((8, 4))).astype(np.float32),
                             rng.standard_normal(4).astype(np.float32)) for _ in range(n)])

    x = rng.standard_normal((4, 8)).astype(np.float32)
    return {"ema": (params(3), params(3)), "step": (params(2), x), "as_dict": (params(2),)}

"""Gradient clipping by global norm inside the @mesh train step (``optax.tree.norm(grads)``, optax.global_norm before it, then each gradient
scaled by ``min(1, max_norm / norm)``) over parameters split differently (a Megatron MLP's weights over 'model',
norms whole, a vocab-split head) with a list of blocks, returning the new parameters: ``mr.global_norm`` sums each
leaf's squares locally and completes them by one psum per set of axes.  Before, "optax.global_norm has no rule"
(the CLIP attack: clipping moved outside the function)."""
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import optax

from meshify import Tensor, mesh

EXPECT = "match"


class Block(NamedTuple):
    w1: Tensor["d", "ff"]
    w2: Tensor["ff", "d"]
    scale: Tensor["d"]


class Params(NamedTuple):
    blocks: list[Block]
    head: Tensor["d", "vocab"]


@mesh(batch=2, model=4, rules={"ff": "model", "vocab": "model"})
def step(params: Params, x: Tensor["batch", "d"], max_norm: float = 0.5):
    def loss(p):
        h = x
        for b in p.blocks:
            h = h + jax.nn.relu(h @ b.w1) @ b.w2 * b.scale
        return jnp.mean(jax.nn.logsumexp(h @ p.head, axis=-1))

    value, grads = jax.value_and_grad(loss)(params)
    norm = optax.tree.norm(grads)
    clipped = jax.tree.map(lambda g: g * jnp.minimum(1.0, max_norm / norm), grads)
    return value, norm, jax.tree.map(lambda p, g: p - 0.1 * g, params, clipped)


def inputs():
    rng = np.random.default_rng(71)

    def r(*shape):
        return (0.3 * rng.standard_normal(shape)).astype(np.float32)

    return {"step": (Params([Block(r(4, 8), r(8, 4), 1 + r(4)) for _ in range(2)], r(4, 16)), r(4, 4))}

# Bad input: a list of per-layer blocks whose bias is optional (each item could be None or not).
# expect: AnnotationError at 15:20 naming items with an optional array field (Block.b)
from typing import NamedTuple

import jax.numpy as jnp
from meshify import Tensor, mesh


class Block(NamedTuple):
    w: Tensor["d", "d"]
    b: Tensor["d"] | None = None


@mesh(data=2, model=4, rules={"batch": "data"})
def f(blocks: list[Block], x: Tensor["batch", "d"]):
    for blk in blocks:
        x = jnp.tanh(x @ blk.w + (0 if blk.b is None else blk.b))
    return x

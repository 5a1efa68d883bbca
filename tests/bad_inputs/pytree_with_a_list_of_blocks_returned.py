# Bad input: a NamedTuple returned whose field is a list of blocks as long as each call's (EMA of params).
# expect: UnsupportedError at 21:12 naming [b.w for b in new_ema.blocks]
from typing import NamedTuple

import jax
from meshify import Tensor, mesh


class Block(NamedTuple):
    w: Tensor["ch", "ch_out"]


class Params(NamedTuple):
    b: Tensor["ch_out"]
    blocks: list[Block]


@mesh(batch=2, model=4, rules={"ch": "model"})
def f(ema: Params, params: Params, decay: float):
    new_ema = jax.tree.map(lambda e, p: decay * e + (1 - decay) * p, ema, params)
    return new_ema

# Bad input: a library loss that runs a scan (optax.ctc_loss) on each device's rows: its carry starts replicated.
# expect: CallError at 20:5 naming a loop inside code that runs on each device's block
# call: lg=8x6x5 lp=8x6 lb=8x3 lbp=8x3
from typing import Annotated

import jax
import jax.numpy as jnp
import optax
from meshify import Tensor, mesh


@mesh(batch=8)
def f(lg: Tensor["batch", "time", "vocab"], lp: Tensor["batch", "time"], lb: Tensor["batch", "label"],
      lbp: Tensor["batch", "label"]) -> Tensor[()]:
    return jnp.mean(row(lg, lp, lb, lbp))


@jax.vmap
def row(lg, lp, lb, lbp) -> Annotated[jax.Array, ()]:
    return optax.ctc_loss(lg[None], lp[None], lb[None], lbp[None])[0]

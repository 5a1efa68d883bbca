# Bad input: an optax optimizer's update called inside the @mesh function on split gradients.
# expect: UnsupportedError at 24:26 naming call tx.update in a jax.jit step
from typing import NamedTuple

import jax
import jax.numpy as jnp
import optax

from meshify import Tensor, mesh


class P(NamedTuple):
    w1: Tensor["d", "f"]
    w2: Tensor["f", "d"]


tx = optax.adamw(1e-3)


@mesh(data=2, model=4, rules={"batch": "data", "f": "model"})
def step(p: P, opt_state, x: Tensor["batch", "d"]):
    # (the fix must not be "unsplit 'f'": an optimizer's step is called outside, around the @mesh function)
    loss, g = jax.value_and_grad(lambda q: jnp.mean((jnp.tanh(x @ q.w1) @ q.w2) ** 2))(p)
    updates, opt_state = tx.update(g, opt_state, p)
    return optax.apply_updates(p, updates), opt_state, loss

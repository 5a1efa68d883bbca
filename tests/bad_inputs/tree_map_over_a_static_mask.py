# Bad input: a trainable mask built outside and passed as a static argument (optax.masked's style), mapped beside
# the parameters: its structure is unknown when rewriting (the fix: build it inside from the hinted pytree).
# expect: UnsupportedError at 18:86 naming a static value whose structure meshify cannot read
from typing import TypedDict

import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


class Params(TypedDict):
    w: Tensor["d", "f"]
    lora_a: Tensor["d", "rank"]


@mesh(data=2, model=4, rules={"batch": "data", "f": "model"})
def f(params: Params, x: Tensor["batch", "d"], mask=None):
    params = jax.tree.map(lambda p, m: p if m else jax.lax.stop_gradient(p), params, mask)
    return jnp.mean(jnp.tanh(x @ params["w"]).sum(-1) * (x @ params["lora_a"]).sum(-1))

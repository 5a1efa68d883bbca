# Bad input: weight decay by key name in a for loop over a TypedDict's keys, in the caller's order (the fix: sorted).
# expect: UnsupportedError at 17:14 naming a Python loop over the pytree 'params'
from typing import TypedDict

import jax.numpy as jnp
from meshify import Tensor, mesh


class Params(TypedDict):
    w: Tensor["d", "f"]
    lora_a: Tensor["d", "rank"]


@mesh(data=2, model=4, rules={"batch": "data", "f": "model"})
def f(params: Params, x: Tensor["batch", "d"]):
    wd = []
    for k in params:
        wd.append(jnp.sum(params[k] ** 2))
    return jnp.mean((x @ params["w"]) ** 2) + 1e-2 * wd[0]

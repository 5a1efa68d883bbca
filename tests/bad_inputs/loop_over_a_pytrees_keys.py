# Bad input: weight decay by key name, iterating a TypedDict's keys (the fix: a key-path mask over its leaves).
# expect: UnsupportedError at 16:47 naming a Python loop over the pytree 'params'
from typing import TypedDict

import jax.numpy as jnp
from meshify import Tensor, mesh


class Params(TypedDict):
    w: Tensor["d", "f"]
    lora_a: Tensor["d", "rank"]


@mesh(data=2, model=4, rules={"batch": "data", "f": "model"})
def f(params: Params, x: Tensor["batch", "d"]):
    wd = sum(jnp.sum(params[k] ** 2) for k in params if "lora" in k)
    return jnp.mean((x @ params["w"]) ** 2) + 1e-2 * wd

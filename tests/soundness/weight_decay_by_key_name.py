"""Weight decay by key name over a TypedDict's keys, ``sum(jnp.sum(params[k] ** 2) for k in params if "lora" in
k)``: a sum takes the keys in any order, the filter reads each key.  Before: refused ("a Python loop over the pytree
'params'"; it was the bad input loop_over_a_pytrees_keys)."""
from typing import TypedDict

import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


class Params(TypedDict):
    w: Tensor["d", "f"]
    lora_a: Tensor["d", "rank"]
    lora_b: Tensor["rank", "f"]


@mesh(data=2, model=4, rules={"batch": "data", "f": "model"})
def f(params: Params, x: Tensor["batch", "d"]):
    wd = sum(jnp.sum(params[k] ** 2) for k in params if "lora" in k)
    return jnp.mean((x @ params["w"] + x @ params["lora_a"] @ params["lora_b"]) ** 2) + 1e-2 * wd


def inputs():
    rng = np.random.default_rng(80)
    params = {"lora_b": rng.standard_normal((2, 8)).astype(np.float32), "w": rng.standard_normal((4, 8)).astype(np.float32),
              "lora_a": rng.standard_normal((4, 2)).astype(np.float32)}
    return (params, rng.standard_normal((4, 4)).astype(np.float32))

"""A dict parameter updated key by key in `for k, v in sorted(params.items())` while the body rebinds `params`:
the items are read before the loop.  Before: read after the rebinding (wrong numbers; attack on today's
features)."""
from typing import TypedDict
import jax, jax.numpy as jnp, numpy as np
from meshify import Tensor, mesh
EXPECT = "match"

class Params(TypedDict):
    up: Tensor["d", "f"]
    bias: Tensor["f"]
    down: Tensor["f", "d"]

def loss(p, x):
    return jnp.mean(jnp.tanh(x @ p["up"] + p["bias"]) @ p["down"])

@mesh(data=2, model=4, rules={"batch": "data", "f": "model"})
def upd(params: Params, x: Tensor["batch", "d"]):
    grads = jax.grad(loss)(params, x)
    new = dict(params)
    for k, v in sorted(params.items()):
        new[k] = v - 0.1 * grads[k]
    return new

@mesh(data=2, model=4, rules={"batch": "data", "f": "model"})
def upd2(params: Params, x: Tensor["batch", "d"]):
    grads = jax.grad(loss)(params, x)
    for k in sorted(params):
        params = {**params, k: params[k] - 0.1 * grads[k]}
    return params

@mesh(data=2, model=4, rules={"batch": "data", "f": "model"})
def upd3(params: Params, x: Tensor["batch", "d"]):
    t = 0.0
    for k, v in sorted(params.items()):
        t = t + jnp.sum(v)
        params = jax.tree.map(lambda a: a * 2.0, params)
    return t

def inputs():
    rng = np.random.default_rng(10)
    params = {"down": rng.standard_normal((8, 4)).astype(np.float32),
              "bias": rng.standard_normal((8,)).astype(np.float32),
              "up": rng.standard_normal((4, 8)).astype(np.float32)}
    return {k: (params, rng.standard_normal((4, 4)).astype(np.float32)) for k in ("upd", "upd2", "upd3")}

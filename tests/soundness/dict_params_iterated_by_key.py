"""Dict parameters gone over key by key, as hand-written training steps do: an SGD update as a dict comprehension
over ``params.items()`` (any order: the dict made is the same), a weight-decay mask over the keys with a filter,
an L2 penalty ``for k in sorted(params)``, an L1 penalty ``sum(... for v in params.values())``, a comprehension
over a literal tuple of keys, ``[... for k, v in sorted(params.items())]`` stacked (sorted: JAX's
order, the same whatever order the caller built the dict in); the caller's dict in another order than the hint's.
Before: "a Python loop over the pytree 'params' (its keys or items) is not modelled", and dict comprehensions near
arrays refused."""
from typing import TypedDict

import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


class Params(TypedDict):
    up: Tensor["d", "f"]
    bias: Tensor["f"]
    down: Tensor["f", "d"]


def loss(p, x):
    return jnp.mean(jnp.tanh(x @ p["up"] + p["bias"]) @ p["down"])


@mesh(data=2, model=4, rules={"batch": "data", "f": "model"})
def step(params: Params, x: Tensor["batch", "d"]):
    grads = jax.grad(loss)(params, x)
    decay = {k: "bias" not in k for k in params}
    new = {k: v - 0.1 * grads[k] - (0.01 * v if decay[k] else 0.0) for k, v in params.items()}
    l2 = 0.0
    for k in sorted(new):
        l2 = l2 + jnp.sum(new[k] ** 2)
    sums = jnp.stack([jnp.sum(v) for _, v in sorted(params.items())])
    kept = {name: w * 2.0 for name, w in new.items() if name != "bias"}
    named = {k: params[k] + grads[k] for k in ("up", "down")}
    l1 = sum(jnp.sum(jnp.abs(v)) for v in params.values())  # (a sum takes them in any order)
    return new, kept, named, l2 + jnp.sum(sums * jnp.arange(3.0)) + l1


@mesh(data=2, model=4, rules={"batch": "data", "f": "model"})
def stats(params: Params, x: Tensor["batch", "d"]):
    """Metrics under keys computed from the parameters' (f-strings, concatenation), as logging code names them."""
    norms = {f"{k}_norm": jnp.sqrt(jnp.sum(v * v)) for k, v in params.items()}
    means = {"mean/" + k: jnp.mean(params[k]) for k in sorted(params) if k != "bias"}
    return {**norms, **means}


def inputs():
    rng = np.random.default_rng(74)
    params = {"down": 0.3 * rng.standard_normal((8, 4)).astype(np.float32),
              "bias": rng.standard_normal((8,)).astype(np.float32),
              "up": 0.3 * rng.standard_normal((4, 8)).astype(np.float32)}  # (not the hint's order)
    x = rng.standard_normal((4, 4)).astype(np.float32)
    return {"step": (params, x), "stats": (params, x)}

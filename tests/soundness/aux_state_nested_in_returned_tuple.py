"""A loss helper returning BatchNorm-style state and metrics nested in its aux: ``return l, ({"m": s["m"] * 0.9 +
jnp.mean(x, axis=0)}, {"loss": l})`` (partial sums over the split batch inside a tuple inside the tuple), through
``jax.value_and_grad(..., has_aux=True)`` and a ``lax.scan`` over micro-batches, in float32 and bfloat16 (a sum
formed in float32 is completed in the helper, where its dtype is known).  Before, "whose item 1 holds a partial sum
whose operands' dtype meshify cannot read here", with a fix naming what was already written (the ResNet attack)."""
from typing import TypedDict

import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"
TOL = 3e-2


class S(TypedDict):
    m: Tensor["c"]


def loss_aux(w, s, x):
    l = jnp.mean(jnp.tanh(x * w) ** 2)
    return l, ({"m": s["m"] * 0.9 + jnp.mean(x, axis=0)}, {"loss": l})


@mesh(batch=8, rules={"micro_batch": "batch"})
def step(w: Tensor["c"], s: S, x: Tensor["batch", "c"]):
    xs: Tensor["micro", "micro_batch", "c"] = jnp.swapaxes(x.reshape(-1, 2, x.shape[-1]), 0, 1)

    def body(carry, xb):
        grads, s = carry
        (l, (s, metrics)), g = jax.value_and_grad(loss_aux, has_aux=True)(w, s, xb)
        return (grads + g, s), metrics["loss"]

    (g, s), losses = jax.lax.scan(body, (jnp.zeros_like(w), s), xs)
    return g, s["m"], losses


@mesh(batch=8)
def step_bf16(w: Tensor["c"], s: S, x: Tensor["batch", "c"]):
    xb = x.astype(jnp.bfloat16)
    (l, (s, metrics)), g = jax.value_and_grad(loss_aux, has_aux=True)(w.astype(jnp.bfloat16),
                                                                       {"m": s["m"].astype(jnp.bfloat16)}, xb)
    return l, g, s["m"], metrics["loss"]


def inputs():
    rng = np.random.default_rng(89)
    w = rng.standard_normal(4).astype(np.float32)
    s = {"m": rng.standard_normal(4).astype(np.float32)}
    x = rng.standard_normal((16, 4)).astype(np.float32)
    return {"step": (w, s, x), "step_bf16": (w, s, x)}

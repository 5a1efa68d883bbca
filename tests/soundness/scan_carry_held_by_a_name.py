"""RWKV's WKV state built in a name before the scan (``init = (jnp.zeros((B, C)), jnp.zeros((B, C)))``), the body
splitting it as its channels are: each item read off the name and sliced on its way into the loop, as a
tuple literal's items are."""

from typing import Annotated

import jax
import jax.numpy as jnp
import numpy as np

from meshify import mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"att": "model"})
def f(k: Annotated[jax.Array, "batch", "length", "att"], decay: Annotated[jax.Array, "att"]):
    B, T, C = k.shape
    init = (jnp.zeros((B, C)), jnp.zeros((B, C)))

    def step(state, kt):
        aa, bb = state
        aa = aa * jnp.exp(-decay) + jnp.exp(kt)
        bb = bb * jnp.exp(-decay) + kt * jnp.exp(kt)
        return (aa, bb), bb / aa

    state, out = jax.lax.scan(step, init, jnp.swapaxes(k, 0, 1))
    return jnp.swapaxes(out, 0, 1), state[0]


def inputs():
    rng = np.random.default_rng(0)
    return rng.normal(size=(4, 6, 8)).astype(np.float32) * 0.5, np.abs(rng.normal(size=(8,))).astype(np.float32)

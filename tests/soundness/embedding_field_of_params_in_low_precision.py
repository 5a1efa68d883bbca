"""A vocab-parallel embedding read off a NamedTuple field (``p.embed[tokens]``), added to a heads-split projection
and RMS-normed, in bfloat16; and ``return jax.value_and_grad(loss_fn)(params)`` of a loss reading it.  The lookup's
dtype was unknown (a field's array indexed by ids had no dtype carrier): "cannot tell the dtype of 'x', a partial
sum" and "a tuple, and has no return hint" (attack on KV-cache decoding).  Negative ids (in range: past the end,
JAX's own second derivative reads the clamped rows its first derivative drops, so the test's gradient of the
returned gradients would compare against that)."""
from typing import Annotated, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from meshify import mesh

EXPECT = "match"
TOL = 2e-2


class Params(NamedTuple):
    embed: Annotated[jax.Array, "vocab", "d_model"]
    wo: Annotated[jax.Array, "heads", "d_model"]
    scale: Annotated[jax.Array, "d_model"]


def rms_norm(x, scale, eps=1e-6):
    var = jnp.mean(jnp.square(x.astype(jnp.float32)), axis=-1, keepdims=True)
    return (x * jax.lax.rsqrt(var + eps)).astype(x.dtype) * scale


@mesh(batch=2, model=4, rules={"heads": "model", "vocab": "model"})
def block(p: Params, tokens: Annotated[jax.Array, "batch", "seq"], a: Annotated[jax.Array, "batch", "seq", "heads"]):
    x = p.embed[tokens]
    x = x + jnp.einsum("blh,hd->bld", a, p.wo)
    return rms_norm(x, p.scale)


@mesh(batch=2, model=4, rules={"vocab": "model", "heads": "model"})
def loss_and_grad(params: Params, tokens: Annotated[jax.Array, "batch", "seq"]):
    def loss_fn(p):
        return jnp.mean(rms_norm(p.embed[tokens], p.scale).astype(jnp.float32) ** 2)
    return jax.value_and_grad(loss_fn)(params)


def inputs():
    rng = np.random.default_rng(65)
    p = Params(*(jnp.asarray(rng.standard_normal(s), jnp.bfloat16) for s in ((32, 16), (8, 16), (16,))))
    tokens = rng.integers(-32, 32, (8, 4)).astype(np.int32)
    a = jnp.asarray(rng.standard_normal((8, 4, 8)), jnp.bfloat16)
    return {"block": (p, tokens, a), "loss_and_grad": (p, tokens)}

"""Mixed precision as jmp/flax-style code writes it: parameters cast to bfloat16 by
``jax.tree.map(lambda x: x.astype(dtype) if jnp.issubdtype(x.dtype, jnp.floating) else x, tree)``, an RMS norm
computed in float32 and cast back by ``x.dtype``, ``jnp.result_type``/``jnp.promote_types``/``jnp.finfo`` of
split arrays' dtypes, and ``x.dtype == jnp.bfloat16`` choosing a cast.  Before: "a conditional expression on a
traced array" (``jnp.issubdtype`` was taken for a function that may return an array) and "jax.numpy.result_type
has no meshify rule" with a fix to unsplit batch."""
from typing import Annotated, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from meshify import mesh

EXPECT = "match"
TOL = 2e-2


class P(NamedTuple):
    w1: Annotated[jax.Array, "d", "ff"]
    w2: Annotated[jax.Array, "ff", "d"]
    g: Annotated[jax.Array, "d"]


def cast(tree, dtype):
    return jax.tree.map(lambda x: x.astype(dtype) if jnp.issubdtype(x.dtype, jnp.floating) else x, tree)


def rms(x, g, eps=1e-6):
    x32 = x.astype(jnp.float32)
    return (x32 * jax.lax.rsqrt(jnp.mean(x32 ** 2, -1, keepdims=True) + eps)).astype(x.dtype) * g


@mesh(batch=2, model=4, rules={"ff": "model"})
def loss(p: P, x: Annotated[jax.Array, "batch", "d"], y: Annotated[jax.Array, "batch", "d"]
         ) -> Annotated[jax.Array, ()]:
    pc = cast(p, jnp.bfloat16)
    h = rms(x.astype(jnp.bfloat16), pc.g)
    h = jax.nn.gelu(jnp.dot(h, pc.w1, precision=jax.lax.Precision.HIGHEST)) @ pc.w2
    return jnp.mean((h.astype(jnp.float32) - y) ** 2)


@mesh(batch=2, model=4, rules={"ff": "model"})
def casts(x: Annotated[jax.Array, "batch", "ff"], i: Annotated[jax.Array, "batch", "ff"]
          ) -> Annotated[jax.Array, "batch", "ff"]:
    dt = jnp.result_type(x)
    y = x.astype(jnp.promote_types(x.dtype, jnp.float32)) * 2
    if jnp.issubdtype(i.dtype, jnp.integer):
        y = y + i.astype(y.dtype)
    z = jnp.where(y > 3, y, jnp.finfo(y.dtype).min / 2)
    return z.astype(dt) if x.dtype == jnp.bfloat16 else z.astype(jnp.result_type(x, i))


def inputs():
    rng = np.random.default_rng(5)

    def r(*shape):
        return (rng.standard_normal(shape) * 0.5).astype(np.float32)

    return {"loss": (P(r(16, 32), r(32, 16), np.ones(16, np.float32)), r(4, 16), r(4, 16)),
            "casts": (r(4, 8), np.arange(32, dtype=np.int32).reshape(4, 8) % 5)}

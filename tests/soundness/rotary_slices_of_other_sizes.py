"""Slices of a head dim that do not join back to it, and updates of strided entries (attack on today's rotary
support): even entries of a shortened dim joined with its odd ones (6 of 8: an inferred dim, lined up with a
weight's 'rot'), halves cut at a bound rebound between the cuts (7 entries), ``x.at[..., 1::2].set(e * 2 + o)``
with the even entries first in the sum.  Before: the joined dims were named 'head_dim' (a refusal naming
'head_dim' against 'rot'), and the update was refused by operand order."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(data=2, model=4, rules={"batch": "data", "heads": "model"})
def shortened(x: Tensor["batch", "heads", "head_dim"], w: Tensor["rot", "out"]):
    r = x[..., : x.shape[-1] - 2]
    y = jnp.concatenate([r[..., ::2], r[..., 1::2]], axis=-1)
    return y @ w


@mesh(data=2, model=4, rules={"batch": "data", "heads": "model"})
def rebound(x: Tensor["batch", "heads", "head_dim"], w: Tensor["seven", "out"]):
    half = x.shape[-1] // 2
    a = x[..., :half]
    half = half + 1
    y = jnp.concatenate([x[..., half:], a], axis=-1)
    return y @ w


@mesh(data=2, model=4, rules={"batch": "data", "heads": "model"})
def strided_update(x: Tensor["batch", "heads", "head_dim"]):
    e, o = x[..., ::2], x[..., 1::2]
    return x.at[..., 1::2].set(e * 2.0 + o).at[..., ::2].add(o * e)


def inputs():
    rng = np.random.default_rng(75)
    x = rng.standard_normal((4, 8, 8)).astype(np.float32)
    return {"shortened": (x, rng.standard_normal((6, 3)).astype(np.float32)),
            "rebound": (x, rng.standard_normal((7, 3)).astype(np.float32)), "strided_update": (x,)}

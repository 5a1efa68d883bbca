"""A helper returning a NamedTuple built of partial sums (``Stats(jnp.sum(h, axis=0), peak=...)``: a sum over
split batch, a contraction over split d) beside whole values: a caller cannot read a float32-accumulated sum's
dtype back out of a NamedTuple, so each partial sum is completed in the helper, in float32 then cast back to
bfloat16 as one device sums.  Before, refused (dict helpers completed theirs; found by the attack on today's
forms, session 17); f runs bfloat16 (sums bfloat16 cannot hold per device), g float32 through the same helper."""
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


class Stats(NamedTuple):
    total: jax.Array
    peak: jax.Array
    proj: jax.Array


def stats(x, w):
    h = x @ w
    return Stats(jnp.sum(h, axis=0), peak=jnp.max(h), proj=h * 0.5)


@mesh(batch=2, model=4, rules={"d": "model"})
def f(x: Tensor["batch", "d"], w: Tensor["d", "e"]):
    out = stats(x, w)
    return out.total * 2.0, out.peak, out.proj


@mesh(batch=2, model=4, rules={"d": "model"})
def g(x: Tensor["batch", "d"], w: Tensor["d", "e"]):
    out = stats(x, w)
    return out.total + out.peak


def _args():
    x = np.ones((4, 8))
    w = np.zeros((8, 4))
    w[0::4], w[1::4] = 256.0, 1.0      # devices 0 and 2 along 'model': 257, which bfloat16 cannot hold
    w[2::4], w[3::4] = -128.0, -128.0  # devices 1 and 3: -256
    return x.astype(jnp.bfloat16), w.astype(jnp.bfloat16)


def inputs():
    rng = np.random.default_rng(406)
    return {"f": _args(), "g": (rng.standard_normal((4, 8)).astype(np.float32),
                                rng.standard_normal((8, 4)).astype(np.float32))}

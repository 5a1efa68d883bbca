"""Halves and quarters of a split feature dim taken by slicing, as public code writes them: RealNVP's coupling
``x1, x2 = x[..., : d // 2], x[..., d // 2:]``, HF's ``rotate_half`` (``x[..., : x.shape[-1] // 2]``, then
``jnp.concatenate((-x2, x1), -1)``) with the head dim split, and middle quarters ``x[:, q:3 * q]``; 2x4 and over all
8 devices.  Before: refused at the call, '... would come from devices farther than the next one (a halo must be at
most one block)'.  Now a slice whose bounds are multiples of the shards is a section of the dim, as jnp.split cuts
one: its chunks move to the devices holding its blocks (mr.split_sections' ppermutes), never the whole dim."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


def coupling(x, w_s, w_t):
    d = x.shape[-1]
    x1, x2 = x[..., : d // 2], x[..., d // 2:]
    h = jnp.tanh(x1 @ w_s)
    y2 = x2 * jnp.exp(h) + x1 @ w_t
    return jnp.concatenate([x1, y2], axis=-1), jnp.sum(h, axis=-1)


def rotate_half(x):
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2 :]
    return jnp.concatenate((-x2, x1), axis=-1)


@mesh(batch=2, model=4, rules={"feat": "model"})
def f(x: Tensor["batch", "feat"], w_s: Tensor["half", "half_out"], w_t: Tensor["half", "half_out"]):
    return coupling(x, w_s, w_t)


@mesh(batch=8, rules={"feat": "batch", "batch": None})
def g(x: Tensor["batch", "feat"], w_s: Tensor["half", "half_out"], w_t: Tensor["half", "half_out"]):
    return coupling(x, w_s, w_t)


@mesh(batch=2, model=4, rules={"hd": "model"})
def rope(x: Tensor["batch", "t", "hd"]) -> Tensor["batch", "t", "hd"]:
    return x * jnp.cos(x) + rotate_half(x) * jnp.sin(x)


@mesh(batch=2, model=4, rules={"hd": "model"})
def quarters(x: Tensor["batch", "hd"]):
    q = x.shape[-1] // 4
    return x[:, q:3 * q] * 2.0 + jax.nn.relu(x[:, 2 * q:]), x[:, :q]


def inputs():
    rng = np.random.default_rng(3215)

    def r(*shape):
        return (rng.standard_normal(shape) * 0.5).astype(np.float32)

    return {"f": (r(4, 8), r(4, 4), r(4, 4)), "g": (r(2, 32), r(16, 16), r(16, 16)), "rope": (r(4, 3, 16),),
            "quarters": (r(4, 32),)}

"""Joins of strided and cut slices over a split head dim and over an unsplit one (the attack on today's features):
even+even, odd+even, halves cut by a bound, hstack and ``jnp.concat`` (the new alias, no rule before), stride-4
joins, frequencies ``jnp.arange(1, D, 2)`` (named by the odd entries they count; before: unnamed, refused on the
converted path)."""
import jax, jax.numpy as jnp, numpy as np
from meshify import Tensor, mesh
EXPECT = "match"

@mesh(data=2, model=4, rules={"batch": "data", "hd": "model"})
def ee(x: Tensor["batch", "hd"]):
    return jnp.concatenate([x[:, ::2], x[:, ::2]], axis=1) + x

@mesh(data=2, model=4, rules={"batch": "data", "hd": "model"})
def oe(x: Tensor["batch", "hd"]):
    return jnp.concatenate([x[:, 1::2], x[:, ::2]], axis=1) * x

@mesh(data=2, model=4, rules={"batch": "data", "hd": "model"})
def halves_same(x: Tensor["batch", "hd"]):
    h = x.shape[1] // 2
    return jnp.concatenate([x[:, :h], x[:, :h]], axis=1) - x

@mesh(data=2, model=4, rules={"batch": "data", "hd": "model"})
def stacked(x: Tensor["batch", "hd"]):
    return jnp.stack([x[:, ::2], x[:, 1::2]], axis=-1).reshape(x.shape) + x

@mesh(data=2, model=4, rules={"batch": "data", "hd": "model"})
def hstack(x: Tensor["batch", "hd"]):
    return jnp.hstack([x[:, 1::2], x[:, ::2]]) + x, jnp.concat([x[:, ::2], x[:, 1::2]], axis=-1) * 3 + x

@mesh(data=2, model=4, rules={"batch": "data", "hd": "model"})
def odd4(x: Tensor["batch", "hd"]):
    return jnp.concatenate([x[:, ::4], x[:, 1::4], x[:, 2::4], x[:, 3::4]], axis=1) + x

@mesh(data=2, model=4, rules={"batch": "data", "hd": "model"})
def arange_join(x: Tensor["batch", "hd"]):
    D = x.shape[1]
    inv = jnp.concatenate([jnp.arange(0, D, 2) * 0.05, jnp.arange(1, D, 2) * 0.07])
    return x * inv

def inputs():
    rng = np.random.default_rng(62)
    x = rng.standard_normal((4, 16)).astype(np.float32)
    return {k: (x,) for k in ("ee", "oe", "stacked", "odd4")}

"""Gemma's rotary embedding as its public code writes it: ``jnp.arange(0, head_dim // 2)`` (an explicit start
of 0) and ``timescale[jnp.newaxis, jnp.newaxis, :]`` beside split positions.  ``jnp.arange(0, n)`` was opaque of
unknown shape where ``jnp.arange(n)`` was named ("cannot infer the dims of 'timescale[jnp.newaxis, jnp.newaxis,
:]'").  ``g`` splits the head dim itself: ``jnp.arange(0, n)`` meets it as ``jnp.arange(n)`` does.  Found by the attack on
new model styles (session 18)."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"heads": "model"})
def f(x: Tensor["batch", "length", "heads", "d_head"], positions: Tensor["batch", "length"]):
    head_dim = x.shape[-1]
    fraction = 2 * jnp.arange(0, head_dim // 2) / head_dim
    timescale = 10000 ** fraction
    sinusoid_inp = positions[..., jnp.newaxis] / timescale[jnp.newaxis, jnp.newaxis, :]
    sinusoid_inp = sinusoid_inp[..., jnp.newaxis, :]
    sin = jnp.sin(sinusoid_inp)
    cos = jnp.cos(sinusoid_inp)
    first_half, second_half = jnp.split(x, 2, axis=-1)
    first_part = first_half * cos - second_half * sin
    second_part = second_half * cos + first_half * sin
    return jnp.concatenate([first_part, second_part], axis=-1)


@mesh(batch=2, model=4, rules={"d_head": "model"})
def g(x: Tensor["batch", "length", "d_head"]):
    head_dim = x.shape[-1]
    return (x * jnp.arange(0, head_dim)[jnp.newaxis, jnp.newaxis, :]).sum(-1) + (x * jnp.arange(0.0, 16)).sum(-1)


def inputs():
    rng = np.random.default_rng(440)
    x = rng.standard_normal((4, 8, 8, 16)).astype(np.float32)
    positions = np.broadcast_to(np.arange(8), (4, 8)).astype(np.int32)
    return {"f": (x, positions), "g": (rng.standard_normal((4, 8, 16)).astype(np.float32),)}

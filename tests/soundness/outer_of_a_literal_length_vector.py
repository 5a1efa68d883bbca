"""jnp.outer of a vector of a literal length (``jnp.arange(0, 4, 2)`` from a config's size) and a named one:
DeepSeek's rotary table ``jnp.outer(jnp.arange(seqlen), freqs)`` built in the top-level function from
``tokens.shape[1]`` and a config int, passed to a helper and broadcast (``cos[None, :, None, :]``) against
queries with the batch and heads split.  The literal vector is named by its length (``2?``); refused before
('cannot infer the dims of cos'), the outer having given a value of unknown dims.  Also the literal vector
first, its dim lined up with a split one (each device's block is checked against the whole length)."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"
ROPE_DIM = 4


def precompute_freqs(dim, seqlen, theta):
    freqs = 1.0 / (theta ** (jnp.arange(0, dim, 2, dtype=jnp.float32) / dim))
    angles = jnp.outer(jnp.arange(seqlen, dtype=jnp.float32), freqs)
    return jnp.cos(angles), jnp.sin(angles)


def apply_rotary_emb(x, cos, sin):
    x1, x2 = x[..., 0::2], x[..., 1::2]
    cos, sin = cos[None, :, None, :], sin[None, :, None, :]
    return jnp.stack([x1 * cos - x2 * sin, x1 * sin + x2 * cos], axis=-1).reshape(x.shape)


@mesh(data=2, model=4, rules={"batch": "data", "heads": "model", "d": "model"})
def f(q: Tensor["batch", "length", "heads", "rope"], tokens: Tensor["batch", "length"], w: Tensor["d", "length"]):
    cos, sin = precompute_freqs(ROPE_DIM, tokens.shape[1], 10000.0)
    table = jnp.outer(jnp.arange(8, dtype=jnp.float32), jnp.sum(tokens, axis=0) * 0.1)   # [8?, length], 8? lined up with d
    return apply_rotary_emb(q, cos, sin) * jnp.arange(1, 5, dtype=jnp.float32), jnp.tanh(table * w)


def inputs():
    rng = np.random.default_rng(3)
    return (rng.standard_normal((4, 8, 8, ROPE_DIM)).astype(np.float32), rng.integers(0, 5, (4, 8)).astype(np.float32),
            rng.standard_normal((8, 8)).astype(np.float32))

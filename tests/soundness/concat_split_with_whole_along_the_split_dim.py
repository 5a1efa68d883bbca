"""A split feature vector joined with whole columns along its split dim, as a user writes it (DLRM's
``jnp.concatenate([dense, z[:, li, lj]], axis=1)``, issue #14): ``jnp.concatenate`` with a whole operand
before, after and on both sides (negative axis), ``jnp.hstack``, ``jnp.append(axis=-1)``,
``jax.lax.concatenate`` (no rule before: refused), two split operands beside a whole one, two split alike
(kept split, re-blocked), and a stack of two split vectors merged back by a reshape with the split dim major,
on a 2x4 and a 1x8 mesh.  The whole columns (6 of them: no multiple of 4 or 8, their size unknown when
rewriting) cannot be cut into the blocks of the split dim: the split operands are gathered along it (named in
the comment) and the join done whole; it used to be cut anyway and fail when called ("6 is not a multiple of
the 4 devices"), or be refused.  Each result then meets a weight split along the joined dim, and the
gradients flow back through the gather."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


def _joins(a, b, w, v):
    first = jnp.concatenate([a, w], axis=1)
    last = jnp.concatenate([w, a * 2.0], axis=-1)
    around = jnp.concatenate([w, jnp.tanh(a), w], axis=-1)
    stacked = jnp.hstack([a, w])
    appended = jnp.append(b, w, axis=-1)
    pairs = jnp.stack([a, b], axis=-1)
    merged = pairs.reshape(pairs.shape[0], -1)  # [d, 2] merged: the split d major, it stays split
    two = jnp.concatenate([a, w, b], axis=1)
    lax_whole = jax.lax.concatenate([w, a], 1)
    lax_alike = jax.lax.concatenate([a, b * 3.0], 1)  # split alike: kept split, re-blocked
    return (first @ v + last @ v + lax_whole @ v + jnp.sum(lax_alike * jnp.cos(lax_alike), axis=1, keepdims=True)
            + around[:, :first.shape[1]] @ v + stacked @ v + appended @ v
            + jnp.sum(merged, axis=1, keepdims=True) + jnp.sum(two ** 2, axis=1, keepdims=True) * 0.1)


@mesh(batch=2, model=4, rules={"d": "model", "out": "model"})
def f(a: Tensor["batch", "d"], b: Tensor["batch", "d"], w: Tensor["batch", "e"],
      v: Tensor["de", "out"]) -> Tensor["batch", "out"]:
    return _joins(a, b, w, v)


@mesh(batch=1, model=8, rules={"d": "model", "out": "model"})
def g(a: Tensor["batch", "d"], b: Tensor["batch", "d"], w: Tensor["batch", "e"],
      v: Tensor["de", "out"]) -> Tensor["batch", "out"]:
    return _joins(a, b, w, v)


def inputs():
    rng = np.random.default_rng(1436)

    def args(d):
        return (rng.standard_normal((4, d)).astype(np.float32), rng.standard_normal((4, d)).astype(np.float32),
                rng.standard_normal((4, 6)).astype(np.float32),
                (rng.standard_normal((d + 6, 8)) / 4).astype(np.float32))

    return {"f": args(8), "g": args(16)}

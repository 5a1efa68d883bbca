"""Masks and weights of fewer dims than the array they apply to, as code broadcasts them: a padding mask
``[batch, keys]`` against scores ``[batch, heads, q, keys]`` with ``mask[:, None, None, :]``, a mask of the
trailing dims only, with the masked dims split (keys over 'model') and not (the batch over 'data'): sum,
mean, max, softmax, log_softmax and logsumexp(b=), with rows masked out entirely.  Before, "give where= the
dims of the array"."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(data=2, model=4, rules={"batch": "data", "keys": "model"})
def f(s: Tensor["batch", "heads", "q", "keys"], pad: Tensor["batch", "keys"], col: Tensor["keys"],
      w: Tensor["q", "keys"]) -> tuple[Tensor["batch", "heads", "q", "keys"], Tensor["batch", "heads", "q"],
                                       Tensor["batch", "heads"], Tensor["batch", "heads", "q"], Tensor[()]]:
    p = jax.nn.softmax(s, axis=-1, where=pad[:, None, None, :])
    lp = jax.nn.log_softmax(s, axis=-1, where=col)
    lse = jax.nn.logsumexp(s, axis=-1, b=jnp.abs(w) + 0.1)
    m = jnp.mean(s, axis=(2, 3), where=pad[:, None, None, :])
    top = jnp.max(s, axis=-1, where=col, initial=-3.0)
    total = jnp.sum(s, where=col) + jnp.sum(jnp.where(jnp.isfinite(lp), lp, 0.0))
    return p, lse, jnp.where(jnp.isnan(m), -9.0, m), top, total


def inputs():
    rng = np.random.default_rng(29)
    s = rng.standard_normal((4, 2, 3, 8)).astype(np.float32)
    pad = rng.random((4, 8)) > 0.3
    pad[0] = False               # a sequence of padding only
    col = np.ones(8, bool)
    col[:2] = False              # the first device's keys masked out
    return s, pad, col, rng.standard_normal((3, 8)).astype(np.float32)

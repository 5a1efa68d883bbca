"""Functions that work along one dim, each row on its own, along an unsplit dim of values split elsewhere:
``jnp.sort``, ``jnp.argsort``, ``x.sort(descending=True)``, ``jnp.diff`` (linear: a partial sum passes through),
``jnp.median(keepdims=True)``, ``jax.nn.glu``, ``jax.lax.cumsum(reverse=True)``, ``jax.lax.cummax``; batch and
d_ff split; gradients through all.  Before, each was "no meshify rule" with a fix to unsplit batch, which
they do not work along (found by the user-style attack)."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def f(x: Tensor["batch", "seq", "d"], w: Tensor["d", "d_ff"], w2: Tensor["d_ff", "d"]) -> Tensor["batch", "d"]:
    h = jnp.tanh(x @ w)
    ranked = jnp.sort(h, axis=1) * 0.5 + h.sort(axis=1, descending=True) * 0.25
    order = jnp.argsort(h, axis=1).astype(h.dtype) / 6.0
    tail = jax.lax.cumsum(h, axis=1, reverse=True) + jax.lax.cummax(h, axis=1)
    mid = jnp.median(h, axis=1, keepdims=True) + jnp.median(h, axis=(1,))[:, None, :]
    y = (ranked + order + tail - mid) @ w2
    steps = jnp.diff(x @ w @ w2, axis=1)
    gated = jax.nn.glu(x @ w @ w2, axis=1)
    return jnp.sum(y, axis=1) + jnp.sum(steps, axis=1) + jnp.sum(gated, axis=1)


def inputs():
    rng = np.random.default_rng(316)
    return (rng.standard_normal((4, 6, 8)).astype(np.float32), rng.standard_normal((8, 16)).astype(np.float32) * 0.4,
            rng.standard_normal((16, 8)).astype(np.float32) * 0.4)

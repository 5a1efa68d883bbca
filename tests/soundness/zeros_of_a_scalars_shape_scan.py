"""``jnp.zeros(s.shape)`` of a scalar ``s`` (shape ()) made a value of unknown dims (an empty shape was
taken for none), so a scan carrying it stacked unnamed outputs and ``ys @ w`` was refused (fuzz seed 2037
program 705)."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(model=8, rules={"batch": "model"})
def f(x0: Tensor["batch"], x1: Tensor["batch"], x2: Tensor["layer"], x3: Tensor["layer", "batch"]):
    v0 = jnp.einsum("a,a->", x0, x1)
    v2, v3 = jax.lax.scan(lambda h, w: (jnp.tanh(h * w), h), jnp.zeros(v0.shape, v0.dtype) + 0.5, x2)
    return v3 @ x3 + v2


def inputs():
    rng = np.random.default_rng(26)
    return (rng.standard_normal(8).astype(np.float32), rng.standard_normal(8).astype(np.float32),
            rng.standard_normal(2).astype(np.float32), rng.standard_normal((2, 8)).astype(np.float32))

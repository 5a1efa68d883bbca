"""A @jax.jit helper called on split operands."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@jax.jit
def gated(x, w):
    return jax.nn.silu(x @ w)


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def f(x: Tensor["batch", "d"], w: Tensor["d", "d_ff"], v: Tensor["d_ff", "d"]) -> Tensor["batch", "d"]:
    return gated(x, w) @ v


def inputs():
    rng = np.random.default_rng(132)
    return (rng.standard_normal((4, 8)).astype(np.float32), rng.standard_normal((8, 16)).astype(np.float32),
            rng.standard_normal((16, 8)).astype(np.float32))

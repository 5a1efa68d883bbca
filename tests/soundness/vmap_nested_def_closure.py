"""A nested def closing over a split weight, mapped with jax.vmap at the call site: meshify walks
row() for one row of x (whole), its partial sum over 'model' reduced inside (was refused as a
nested def used as a value: a local block of the weight must never pass through unseen)."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"f": "model"})
def f(x: Tensor["n", "d"], w1: Tensor["d", "f"], w2: Tensor["f", "d"]) -> Tensor["n", "d"]:
    def row(r):
        return jnp.tanh(r @ w1) @ w2

    return jax.vmap(row)(x)


def inputs():
    rng = np.random.default_rng(1408)
    return (rng.standard_normal((4, 8)).astype(np.float32), rng.standard_normal((8, 16)).astype(np.float32),
            rng.standard_normal((16, 8)).astype(np.float32))

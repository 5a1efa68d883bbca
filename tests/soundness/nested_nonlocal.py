"""A nested def that rebinds a variable of the enclosing function (nonlocal): refused, since the
enclosing function's layouts are tracked statement by statement."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "error"


@mesh(batch=2, model=4, rules={"f": "model"})
def f(x: Tensor["batch", "d"], w: Tensor["d", "f"]) -> Tensor["batch", "f"]:
    h = x @ w

    def bump():
        nonlocal h
        h = jnp.tanh(h)
        return h

    bump()
    return h


def inputs():
    rng = np.random.default_rng(1406)
    return (rng.standard_normal((4, 8)).astype(np.float32), rng.standard_normal((8, 16)).astype(np.float32))

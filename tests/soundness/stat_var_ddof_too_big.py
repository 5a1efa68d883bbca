"""jnp.var(ddof=n) with n the whole count over a split dim: NaN/inf exactly where jnp gives them."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"
GRAD = False


@mesh(batch=2, model=4, rules={"d": "model"})
def f(x: Tensor["batch", "d"]) -> tuple[Tensor["batch"], Tensor["batch"]]:
    return jnp.var(x, axis=1, ddof=8), jnp.var(x, axis=1, ddof=9)


def inputs():
    rng = np.random.default_rng(7006)
    return (rng.standard_normal((4, 8)).astype(np.float32),)

"""jnp.var and jnp.std of int32 counts over a split dim (the result is float32)."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"d": "model"})
def f(x: Tensor["batch", "d"]) -> tuple[Tensor["batch"], Tensor["batch"]]:
    return jnp.var(x, axis=1), jnp.std(x, axis=1, ddof=1)


def inputs():
    rng = np.random.default_rng(7005)
    return (rng.integers(-50, 50, (4, 8)).astype(np.int32),)

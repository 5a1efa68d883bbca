"""jnp.prod of int8 over a split dim (promoted to int32, as jnp does), keepdims, negative axis; x.prod()."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"d": "model"})
def f(x: Tensor["batch", "d"]) -> tuple[Tensor["batch", "d"], Tensor[()]]:
    return x * jnp.prod(x, axis=-1, keepdims=True), x.prod()


def inputs():
    rng = np.random.default_rng(7013)
    return (rng.integers(-3, 4, (4, 8)).astype(np.int8),)

"""A tuple-typed parameter: pair: tuple[Tensor["batch", "d"], Tensor["batch", "d"]]."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"d": "model"})
def f(pair: tuple[Tensor["batch", "d"], Tensor["batch", "d"]]) -> Tensor["batch"]:
    a, b = pair
    return jnp.sum(a * b, axis=1)


def inputs():
    rng = np.random.default_rng(82)
    return ((rng.standard_normal((4, 8)).astype(np.float32), rng.standard_normal((4, 8)).astype(np.float32)),)

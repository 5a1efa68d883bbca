"""A loss written as sum([...]) of scalar partial sums (the usual 'total = sum(losses)')."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=8)
def f(x: Tensor["batch", "d"], y: Tensor["batch", "d"]) -> Tensor[()]:
    losses = [jnp.mean(x * x), jnp.mean(jnp.abs(y))]
    return sum(losses)


def inputs():
    rng = np.random.default_rng(45)
    return rng.standard_normal((8, 4)).astype(np.float32), rng.standard_normal((8, 4)).astype(np.float32)

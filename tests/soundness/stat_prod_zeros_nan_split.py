"""jnp.prod over a split dim with zeros, negatives, inf and NaN in different shards; with gradients."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"d": "model"})
def f(x: Tensor["batch", "d"]) -> Tensor["batch"]:
    return jnp.prod(x, axis=1)


def inputs():
    rng = np.random.default_rng(7012)
    x = (rng.uniform(0.5, 1.5, (6, 8)) * rng.choice([-1, 1], (6, 8))).astype(np.float32)
    x[1, 2] = 0.0
    x[2, 0] = 0.0
    x[2, 7] = 0.0
    x[3, 5] = np.inf
    x[4, 3] = np.nan
    x[5, 1] = np.inf
    x[5, 6] = 0.0
    return (x,)

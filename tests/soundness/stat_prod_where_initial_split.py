"""jnp.prod(where=mask, initial=...) over a split dim: masked-out entries count as 1, initial once."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"d": "model"})
def f(x: Tensor["batch", "d"], m: Tensor["batch", "d"]) -> Tensor["batch"]:
    return jnp.prod(x, axis=1, where=m > 0, initial=2.0)


def inputs():
    rng = np.random.default_rng(7014)
    return (rng.uniform(0.5, 1.5, (4, 8)).astype(np.float32), rng.standard_normal((4, 8)).astype(np.float32))

"""jax.nn.logsumexp(x, axis=-1, b=w) (weighted) over a split dim."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"d": "model"})
def f(x: Tensor["batch", "d"], w: Tensor["batch", "d"]) -> Tensor["batch"]:
    return jax.nn.logsumexp(x, axis=-1, b=w)


def inputs():
    rng = np.random.default_rng(595)
    return rng.standard_normal((4, 8)).astype(np.float32), rng.uniform(0.5, 2.0, (4, 8)).astype(np.float32)

"""jnp.var(x, axis=0, ddof=1) over an unsplit dim while d is split."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"d": "model"})
def f(x: Tensor["n", "d"]) -> Tensor["d"]:
    return jnp.var(x, axis=0, ddof=1)


def inputs():
    rng = np.random.default_rng(532)
    return (rng.standard_normal((4, 8)).astype(np.float32),)

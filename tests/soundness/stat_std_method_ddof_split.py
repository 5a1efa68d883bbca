"""x.std(axis=1, ddof=1) and x.var(1) (methods, positional axis) over a split dim."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"d": "model"})
def f(x: Tensor["batch", "d"]) -> Tensor["batch"]:
    return x.std(axis=1, ddof=1) + x.var(1)


def inputs():
    rng = np.random.default_rng(7003)
    return (rng.standard_normal((4, 8)).astype(np.float32),)

"""The nuclear norm of a split matrix needs its singular values: refused, at ord."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "error"


@mesh(batch=2, model=4, rules={"d": "model"})
def f(x: Tensor["batch", "d"]) -> Tensor[()]:
    return jnp.linalg.norm(x, "nuc")


def inputs():
    rng = np.random.default_rng(7011)
    return (rng.standard_normal((4, 8)).astype(np.float32),)

"""Position weights from jnp.arange(8) (a literal) times x with that dim split."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"d": "model"})
def f(x: Tensor["batch", "d"]) -> Tensor["batch"]:
    return jnp.sum(x * jnp.arange(8), axis=1)


def inputs():
    return (np.random.default_rng(92).standard_normal((4, 8)).astype(np.float32),)

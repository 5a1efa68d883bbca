"""A reduction of a value built by a call without a rule: jnp.sum(jnp.repeat(m[None], 2, axis=0), axis=0)."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"d": "model"})
def f(m: Tensor["batch", "d"]) -> Tensor["batch", "d"]:
    return jnp.sum(jnp.repeat(m[None], 2, axis=0), axis=0)


def inputs():
    return (np.random.default_rng(98).standard_normal((4, 8)).astype(np.float32),)

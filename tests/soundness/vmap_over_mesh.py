"""jax.vmap over a @mesh function (an extra leading dim its hints do not name)."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"d": "model"})
def f(x: Tensor["batch", "d"]) -> Tensor["batch"]:
    return jnp.sum(x * x, axis=-1)


def scenario(mod, pick):
    (xs,) = inputs()
    return jax.vmap(pick(mod.f))(xs)


def inputs():
    return (np.random.default_rng(166).standard_normal((3, 4, 8)).astype(np.float32),)

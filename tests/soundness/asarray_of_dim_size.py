"""``jnp.asarray(x.shape[-1], jnp.float32) ** -0.5`` (attention's scale written as an array) with the dim
split: a 0-d array of the global size on every device, not an array of unknown dims."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"d": "model"})
def f(x: Tensor["batch", "d"]) -> Tensor["batch", "d"]:
    scale = jnp.asarray(x.shape[-1], jnp.float32) ** -0.5
    return x * scale * jnp.sqrt(jnp.asarray(x.shape[0], dtype=jnp.float32))


def inputs():
    return (np.random.default_rng(2).standard_normal((4, 8)).astype(np.float32),)

"""jnp.concatenate([a, b], axis=-1) along a dim that is split in both operands."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"d": "model"})
def f(a: Tensor["batch", "d"], b: Tensor["batch", "d"]) -> Tensor[()]:
    c = jnp.concatenate([a, b * 2.0], axis=-1)
    return jnp.sum(c * jnp.arange(16.0))


def inputs():
    rng = np.random.default_rng(163)
    return rng.standard_normal((4, 8)).astype(np.float32), rng.standard_normal((4, 8)).astype(np.float32)

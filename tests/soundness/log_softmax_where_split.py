"""jax.nn.log_softmax(x, axis=-1, where=mask) over a split dim, masked entries zeroed by the caller."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"d": "model"})
def f(x: Tensor["batch", "d"], mask: Tensor["batch", "d"]) -> Tensor["batch", "d"]:
    return jnp.where(mask, jax.nn.log_softmax(x, axis=-1, where=mask), 0.0)


def inputs():
    rng = np.random.default_rng(312)
    x = rng.standard_normal((4, 8)).astype(np.float32)
    return x, x > -0.3

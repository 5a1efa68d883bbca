"""jax.nn.softmax(x, -1, mask): where passed positionally, over a split dim."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"d": "model"})
def f(x: Tensor["batch", "d"], mask: Tensor["batch", "d"]) -> Tensor["batch", "d"]:
    return jax.nn.softmax(x, -1, mask)


def inputs():
    rng = np.random.default_rng(187)
    x = rng.standard_normal((4, 8)).astype(np.float32)
    return x, x > -0.3

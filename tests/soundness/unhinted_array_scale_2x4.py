"""An array passed for a parameter without a Tensor hint, on a 2x4 mesh: jnp.sum(x * scale, axis=1)."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "error"


@mesh(batch=2, model=4, rules={"d": "model"})
def f(x: Tensor["batch", "d"], scale) -> Tensor["batch"]:
    return jnp.sum(x * scale, axis=1)


def inputs():
    rng = np.random.default_rng(81)
    return rng.standard_normal((4, 8)).astype(np.float32), rng.standard_normal((4, 1)).astype(np.float32)

"""Control: x[None] and x[:, None] on split arrays."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"d": "model"})
def f(x: Tensor["batch", "d"], y: Tensor["batch", "d"]) -> Tensor["batch", "d"]:
    return jnp.sum(x[None] * y[None], axis=0) + jnp.mean(x[:, None] * y[:, None], axis=1)


def inputs():
    rng = np.random.default_rng(101)
    return rng.standard_normal((4, 8)).astype(np.float32), rng.standard_normal((4, 8)).astype(np.float32)

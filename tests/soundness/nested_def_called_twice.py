"""A nested def called twice with the same layouts, and a third time with another (a split dim
where the first calls have none): emitted once per layout."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"f": "model"})
def f(x: Tensor["batch", "d"], w1: Tensor["d", "f"], w2: Tensor["f", "d"]) -> Tensor["batch", "d"]:
    def rms(y, eps=1e-6):
        return y / jnp.sqrt(jnp.mean(y * y, axis=-1, keepdims=True) + eps)

    h = jax.nn.relu(rms(x) @ w1)
    h = rms(h)
    y = x + h @ w2
    return rms(y)


def inputs():
    rng = np.random.default_rng(1403)
    return (rng.standard_normal((4, 8)).astype(np.float32), rng.standard_normal((8, 16)).astype(np.float32),
            rng.standard_normal((16, 8)).astype(np.float32))

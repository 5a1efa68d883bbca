"""A nested def closing over a weight split over 'model' (and a partial sum of the enclosing
function): the closure is read as the enclosing function holds it where the def is called."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"f": "model"})
def f(x: Tensor["batch", "d"], w1: Tensor["d", "f"], w2: Tensor["f", "d"]) -> Tensor["batch", "d"]:
    partial = jnp.einsum("bf,fd->bd", jax.nn.relu(x @ w1), w2)

    def project(y):
        return jnp.tanh(y @ w1) @ w2 + partial

    return project(x) * 2.0


def inputs():
    rng = np.random.default_rng(1404)
    return (rng.standard_normal((4, 8)).astype(np.float32), rng.standard_normal((8, 16)).astype(np.float32),
            rng.standard_normal((16, 8)).astype(np.float32))

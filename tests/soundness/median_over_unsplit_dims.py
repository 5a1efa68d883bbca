"""``jnp.median`` over several dims, all unsplit: each device's block as written (``axis=(1, 2)``, negative
axes, ``keepdims=True``), of a value split over batch and d_ff and of a partial sum (completed first).
Before, "over several dims" was refused whatever the layout (found by the second attack of session 16)."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def f(x: Tensor["batch", "seq", "d", "e"], w: Tensor["e", "d_ff"], v: Tensor["d_ff", "e"]):
    h = x @ w
    return jnp.median(x, axis=(1, 2)), jnp.median(h, axis=(1, -2), keepdims=True), jnp.median(h @ v, axis=(2, 1))


def inputs():
    rng = np.random.default_rng(411)
    return (rng.standard_normal((4, 6, 5, 8)).astype(np.float32), rng.standard_normal((8, 16)).astype(np.float32),
            rng.standard_normal((16, 8)).astype(np.float32) * 0.3)

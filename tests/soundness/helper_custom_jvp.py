"""A jax.custom_jvp helper (a softplus whose derivative is deliberately halved) on a split activation."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@jax.custom_jvp
def soft(x):
    return jnp.log1p(jnp.exp(x))


@soft.defjvp
def _soft_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return soft(x), 0.5 * jax.nn.sigmoid(x) * t


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def f(x: Tensor["batch", "d"], w: Tensor["d", "d_ff"]) -> Tensor["batch", "d_ff"]:
    return soft(x @ w)


def inputs():
    rng = np.random.default_rng(131)
    return rng.standard_normal((4, 8)).astype(np.float32), rng.standard_normal((8, 16)).astype(np.float32)

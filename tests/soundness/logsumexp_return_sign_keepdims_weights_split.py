"""jax.scipy.special.logsumexp(x, axis=1, b=w, keepdims=True, return_sign=True) with signed weights over a split dim,
and a mask: magnitudes and signs as one device computes them (signs of negative sums, no NaN)."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"d": "model"})
def f(x: Tensor["batch", "d"], w: Tensor["batch", "d"]) -> Tensor["batch", "one"]:
    lse, sign = jax.scipy.special.logsumexp(x, axis=1, b=w, keepdims=True, return_sign=True)
    masked, s2 = jax.nn.logsumexp(x, axis=-1, where=x > -1.0, return_sign=True)
    return sign * jnp.exp(lse) + (s2 * masked)[:, None]


def inputs():
    rng = np.random.default_rng(3502)
    return rng.standard_normal((4, 8)).astype(np.float32), rng.standard_normal((4, 8)).astype(np.float32)

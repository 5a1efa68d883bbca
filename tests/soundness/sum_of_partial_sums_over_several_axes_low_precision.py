"""``jnp.sum(v) + jnp.sum(x @ w) + jnp.sum(x) - jnp.sum(v * v)``, ``v`` float32 partial over 'data', the float16
terms partial over 'model': the two float16 terms are completed by one psum (sum_of_partial_sums_over_
several_axes.py), formed in float32 and cast back to the dtype the sum has where they stand (float32: the
float32 term before them).  Each float16 term is 40000 and fits float16; their sum, 80000, does not: cast back to
float16, as their own dtype alone would say, it overflowed where one device adds them in float32."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"
TOL = 2e-2  # float16 terms: one device rounds each to float16, the sharded program their sum once


@mesh(data=2, model=4, rules={"batch": "data", "f": "model"})
def f(x: Tensor["row", "f"], w: Tensor["f", "d"], v: Tensor["batch", "d"]):
    return jnp.sum(v) + jnp.sum(x @ w) + jnp.sum(x) - jnp.sum(v * v)


def inputs():
    x = np.full((4, 16), 625.0, np.float16)  # jnp.sum(x) == 40000
    w = np.full((16, 8), 0.125, np.float16)  # each entry of x @ w 1250, their sum 40000
    v = np.random.default_rng(3503).standard_normal((4, 8)).astype(np.float32)
    return (x, w, v)

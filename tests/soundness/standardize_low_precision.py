"""``jax.nn.standardize`` of bfloat16 rows along a split dim: the statistics summed in float32 as ``jnp.mean``
sums them, the result bfloat16 (its rounding: XLA may keep excess precision between the bfloat16 ops of a
compiled program, where the eager reference rounds each, hence the tolerance)."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"
TOL = 2e-2


@mesh(batch=2, model=4, rules={"d": "model"})
def f(x: Tensor["batch", "d"]):
    return jax.nn.standardize(x, axis=-1), jax.nn.standardize(x, axis=-1, algorithm="stable")


def inputs():
    rng = np.random.default_rng(8)
    return (jnp.asarray(rng.standard_normal((4, 16)) * 2.0 + 2.0, jnp.bfloat16),)

"""A bfloat16 image parameter: avg pool 2x2 (reduce_window add) and a bf16 conv, 2x4."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"
TOL = 3e-2


@mesh(h=2, w=4)
def f(x: Tensor["batch", "h", "w", "c"], k: Tensor["kh", "kw", "c", "c"]) -> Tensor["batch", "h2", "w2", "c"]:
    y = jax.lax.conv_general_dilated(x, k, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))
    p: Tensor["batch", "h2", "w2", "c"] = jax.lax.reduce_window(y, 0.0, jax.lax.add, (1, 2, 2, 1),
                                                                 (1, 2, 2, 1), "VALID") / 4
    return p


def inputs():
    rng = np.random.default_rng(16)
    return (jnp.asarray(rng.standard_normal((2, 16, 16, 3)), jnp.bfloat16),
            jnp.asarray(rng.standard_normal((3, 3, 3, 3)) / 3, jnp.bfloat16))

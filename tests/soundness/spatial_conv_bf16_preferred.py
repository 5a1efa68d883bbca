"""bfloat16 images, conv accumulating in float32 (preferred_element_type), then max pool, 2x2x2."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"
TOL = 2e-2


@mesh(batch=2, h=2, w=2)
def f(x: Tensor["batch", "h", "w", "c"], k: Tensor["kh", "kw", "c", "d"]) -> Tensor["batch", "h2", "w2", "d"]:
    y = jax.lax.conv_general_dilated(x.astype(jnp.bfloat16), k.astype(jnp.bfloat16), (1, 1), "SAME",
                                     dimension_numbers=("NHWC", "HWIO", "NHWC"), preferred_element_type=jnp.float32)
    p: Tensor["batch", "h2", "w2", "d"] = jax.lax.reduce_window(y, -jnp.inf, jax.lax.max, (1, 2, 2, 1), (1, 2, 2, 1),
                                                                  "VALID")
    return p


def inputs():
    rng = np.random.default_rng(15)
    return (rng.standard_normal((2, 16, 16, 3)).astype(np.float32), (rng.standard_normal((3, 3, 3, 4)) / 3).astype(np.float32))

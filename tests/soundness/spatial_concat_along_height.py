"""Two images stacked along the split height (jnp.concatenate axis=1), then a 3x3 conv, 2x4."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(h=2, w=4)
def f(a: Tensor["batch", "h", "w", "c"], b: Tensor["batch", "h", "w", "c"],
      k: Tensor["kh", "kw", "c", "c"]) -> Tensor["batch", "h2", "w", "c"]:
    cat: Tensor["batch", "h2", "w", "c"] = jnp.concatenate([a, b], axis=1)
    return jax.lax.conv_general_dilated(cat, k, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))


def inputs():
    rng = np.random.default_rng(35)
    return (rng.standard_normal((2, 8, 16, 3)).astype(np.float32), rng.standard_normal((2, 8, 16, 3)).astype(np.float32),
            rng.standard_normal((3, 3, 3, 3)).astype(np.float32))

"""Manual SAME padding then VALID conv on 2x4: the padded 18 columns do not split into 4 (refused or run).

Refused by design, at the call (pointing at jnp.pad): 18 padded columns do not split into 4 blocks."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "error"


@mesh(h=2, w=4)
def f(x: Tensor["batch", "h", "w", "c"], k: Tensor["kh", "kw", "c", "d"]) -> Tensor["batch", "h", "w", "d"]:
    xp = jnp.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)), constant_values=0.5)
    return jax.lax.conv_general_dilated(xp, k, (1, 1), "VALID", dimension_numbers=("NHWC", "HWIO", "NHWC"))


def inputs():
    rng = np.random.default_rng(6)
    return (rng.standard_normal((2, 16, 16, 3)).astype(np.float32), rng.standard_normal((3, 3, 3, 4)).astype(np.float32))

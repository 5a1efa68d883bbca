"""Manual SAME padding: jnp.pad with a tuple of tuples, then a VALID 3x3 conv (size 16 -> 18 -> 16), 2x2x2 mesh.

Refused until session 11 (the VALID conv turns the 2 blocks of 9 padded rows into 16, off the shard
boundaries); now the output is re-blocked (8 rows per device) and it matches one device."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, h=2, w=2)
def f(x: Tensor["batch", "h", "w", "c"], k: Tensor["kh", "kw", "c", "d"]) -> Tensor["batch", "h", "w", "d"]:
    xp = jnp.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)))
    return jax.lax.conv_general_dilated(xp, k, (1, 1), "VALID", dimension_numbers=("NHWC", "HWIO", "NHWC"))


def inputs():
    rng = np.random.default_rng(5)
    return (rng.standard_normal((2, 16, 16, 3)).astype(np.float32), rng.standard_normal((3, 3, 3, 4)).astype(np.float32))

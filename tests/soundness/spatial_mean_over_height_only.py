"""A column profile: jnp.mean over the split height only, then max over the split width, 2x4."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(h=2, w=4)
def f(x: Tensor["batch", "h", "w", "c"]) -> Tensor["batch", "c"]:
    prof = jnp.mean(x, axis=1)
    return jnp.max(prof, axis=1) - jnp.min(prof, axis=1)


def inputs():
    rng = np.random.default_rng(38)
    return (rng.standard_normal((2, 16, 16, 3)).astype(np.float32),)

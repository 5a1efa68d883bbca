"""U-Net decoder: bilinear jax.image.resize upsampling then skip concat along channels (NCHW), 2x2x2."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, h=2, w=2)
def f(low: Tensor["batch", "c", "hh", "ww"], skip: Tensor["batch", "c", "h", "w"],
      k: Tensor["o", "c2", "kh", "kw"]) -> Tensor["batch", "o", "h", "w"]:
    n, c, h, w = skip.shape
    up: Tensor["batch", "c", "h", "w"] = jax.image.resize(low, (n, c, h, w), "bilinear")
    cat: Tensor["batch", "c2", "h", "w"] = jnp.concatenate([up, skip], axis=1)
    return jax.lax.conv_general_dilated(cat, k, (1, 1), "SAME", dimension_numbers=("NCHW", "OIHW", "NCHW"))


def inputs():
    rng = np.random.default_rng(18)
    return (rng.standard_normal((2, 3, 8, 8)).astype(np.float32), rng.standard_normal((2, 3, 16, 16)).astype(np.float32),
            (rng.standard_normal((4, 6, 3, 3)) / 3).astype(np.float32))

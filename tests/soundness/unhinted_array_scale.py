"""An array passed for a parameter without a Tensor hint: jnp.sum(x * scale), scale of shape [batch, 1]; batch=8 devices (local batch 1)."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "error"  # scale is a static by the contract, with dims meshify cannot know


@mesh(batch=8)
def f(x: Tensor["batch", "d"], scale) -> Tensor[()]:
    return jnp.sum(x * scale)


def inputs():
    rng = np.random.default_rng(80)
    return rng.standard_normal((8, 4)).astype(np.float32), rng.standard_normal((8, 1)).astype(np.float32)

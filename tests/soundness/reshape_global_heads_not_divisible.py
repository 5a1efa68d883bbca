"""x.reshape(B, N_HEADS, -1) with a module-level head count (6) that the 'model' axis (4) does not divide."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "error"

N_HEADS = 6


@mesh(batch=2, model=4, rules={"d_model": "model", "heads": "model"})
def f(x: Tensor["batch", "d_model"]) -> Tensor["batch", "heads", "d_head"]:
    B = x.shape[0]
    h: Tensor["batch", "heads", "d_head"] = x.reshape(B, N_HEADS, -1)
    return h * 2.0


def inputs():
    return (np.random.default_rng(63).standard_normal((4, 24)).astype(np.float32),)

"""``jax.lax.pad`` along a split dim (time split over 'seq'): its rows would move between the devices, which
this op's rule does not model; refused at the padding config with the fix (jnp.pad exchanges the halo)."""
import jax
import numpy as np

from meshify import Tensor, mesh

EXPECT = "error"


@mesh(seq=4)
def f(x: Tensor["batch", "seq", "d_model"]) -> Tensor["batch", "seq", "d_model"]:
    return x + jax.lax.pad(x, 0.0, ((0, 0, 0), (1, -1, 0), (0, 0, 0)))


def inputs():
    return (np.random.default_rng(8).standard_normal((2, 8, 4)).astype(np.float32),)

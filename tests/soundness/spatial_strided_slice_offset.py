"""Strided slices with offsets: the odd rows x[:, 1::2] minus the even x[:, ::2] (a Haar-like detail), and a
stride-4 slice x[:, 2::4] that needs rows of the next block, 2x4 over height and width."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(h=2, w=4)
def f(x: Tensor["batch", "h", "w"]) -> tuple[Tensor["batch", "h2", "w"], Tensor["batch", "h4", "w4"]]:
    detail: Tensor["batch", "h2", "w"] = x[:, 1::2] - x[:, ::2]
    coarse: Tensor["batch", "h4", "w4"] = jnp.tanh(x[:, 2::4, 1::4])
    return detail, coarse


def inputs():
    rng = np.random.default_rng(39)
    return (rng.standard_normal((2, 16, 32)).astype(np.float32),)

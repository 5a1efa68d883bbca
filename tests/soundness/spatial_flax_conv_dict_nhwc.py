"""Flax-like conv helper taking a params dict (kernel, bias), NHWC, two layers, 2x4 mesh over height x width."""
from typing import TypedDict

import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


class Conv(TypedDict):
    kernel: Tensor["kh", "kw", "c", "c"]
    bias: Tensor["c"]


def conv(p, x):
    y = jax.lax.conv_general_dilated(x, p["kernel"], window_strides=(1, 1), padding="SAME",
                                     dimension_numbers=("NHWC", "HWIO", "NHWC"))
    return y + p["bias"]


@mesh(h=2, w=4)
def f(x: Tensor["batch", "h", "w", "c"], p1: Conv, p2: Conv) -> Tensor["batch", "h", "w", "c"]:
    return conv(p2, jax.nn.relu(conv(p1, x)))


def inputs():
    rng = np.random.default_rng(1)
    k = lambda: {"kernel": rng.standard_normal((3, 3, 4, 4)).astype(np.float32) / 3,
                 "bias": rng.standard_normal((4,)).astype(np.float32)}
    return (rng.standard_normal((2, 16, 16, 4)).astype(np.float32), k(), k())

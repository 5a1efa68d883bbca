"""Grouped and depthwise convolutions with their channels split, as Mamba (causal conv1d over a split
d_inner) and ConvNeXt (7x7 depthwise over split channels) shard them: each device holds whole groups, so it
convolves them locally with its share of feature_group_count (x.shape[-1], or a literal). A channel
multiplier of 2, a grouped conv of 8 groups, a kernel whole on every device, gradients."""

import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"d_inner": "model", "d_mult": "model"})
def mamba_conv(x: Tensor["batch", "length", "d_inner"], w: Tensor["d_conv", "d_inner"],
               w2: Tensor["d_conv", "one", "d_mult"], wg: Tensor["d_conv", "per_group", "d_inner"]):
    causal = jax.lax.conv_general_dilated(x, w[:, None, :], (1,), [(w.shape[0] - 1, 0)],
                                          dimension_numbers=("NWC", "WIO", "NWC"), feature_group_count=x.shape[-1])
    doubled = jax.lax.conv_general_dilated(x, w2, (1,), "SAME", dimension_numbers=("NWC", "WIO", "NWC"),
                                           feature_group_count=32)
    grouped = jax.lax.conv_general_dilated(x, wg, (1,), "SAME", dimension_numbers=("NWC", "WIO", "NWC"),
                                           feature_group_count=8)
    return jax.nn.silu(causal) + grouped, doubled


@mesh(batch=2, model=4, rules={"channels": "model"})
def convnext_dw(x: Tensor["batch", "height", "width", "channels"], k: Tensor["kh", "kw", "one", "channels"]):
    y = jax.lax.conv_general_dilated(x, k, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"),
                                     feature_group_count=x.shape[-1])
    return y * jax.nn.sigmoid(y)


def inputs():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(8, 12, 32)).astype(np.float32)
    w = (rng.normal(size=(4, 32)) / 2).astype(np.float32)
    w2 = (rng.normal(size=(4, 1, 64)) / 2).astype(np.float32)
    wg = (rng.normal(size=(4, 4, 32)) / 3).astype(np.float32)
    img = rng.normal(size=(4, 6, 6, 16)).astype(np.float32)
    k = (rng.normal(size=(7, 7, 1, 16)) / 7).astype(np.float32)
    return {"mamba_conv": (x, w, w2, wg), "convnext_dw": (img, k)}

"""A merged batch x time dim split back into its parts in the reshape that merges heads x head_size (RWKV-5's
group norm: ``out.reshape(B * T, H, N)``, normalised per head, then ``.reshape(B, T, H * N)``), with the batch and
the heads split (2x4) or the heads alone (1x8): each merge undone is its own group, so each split enters its group
as the major part; was refused ('split dim heads is not the major (first) part').  ``g`` names the result with a
hint, ``h`` runs on 1x8."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


def group_norm(out):
    B, T, H, N = out.shape
    y = out.reshape(B * T, H, N)
    y = (y - y.mean(axis=-1, keepdims=True)) / jnp.sqrt(y.var(axis=-1, keepdims=True) + 1e-5)
    return y.reshape(B, T, H * N)


@mesh(batch=2, model=4, rules={"heads": "model"})
def f(x: Tensor["batch", "length", "heads", "head_size"]) -> Tensor["batch", "length", "features"]:
    return group_norm(x) * 2.0


@mesh(batch=2, model=4, rules={"heads": "model"})
def g(x: Tensor["batch", "length", "heads", "head_size"]) -> Tensor["batch", "length", "features"]:
    B, T, H, N = x.shape
    y = x.reshape(B * T, H, N)
    z: Tensor["batch", "length", "features"] = jnp.tanh(y).reshape(B, T, H * N)
    return z + 1.0


@mesh(batch=1, model=8, rules={"heads": "model"})
def h(x: Tensor["batch", "length", "heads", "head_size"]) -> Tensor["batch", "length", "features"]:
    return group_norm(x)


def inputs():
    x = np.random.default_rng(0).standard_normal((4, 6, 8, 3)).astype(np.float32)
    return {"f": (x,), "g": (x,), "h": (x,)}

"""One reshape merging two pairs of dims, each into a size that multiplies theirs (``B * T`` and ``H * N`` of ``B, T,
H, N = out.shape``): a group norm over heads as JAX ports of torch's GroupNorm write it, ``group_norm(out.reshape(B *
T, H * N), H)`` with a helper reshaping ``(n, groups, c // groups)`` and back, then ``.reshape(B, T, H * N)``; with
the batch and the heads split (f, 2x4) or the heads alone (h, 1x8), and the features merged first into a size read
off another dim (g: ``out.reshape(B, T, C)``, C of d_model, then ``.reshape(T * B, C)``, the product in the other
order).  Each product names the dims it merges, so each pair is its own group, its split the major part; was
refused ('split dim heads is not the major (first) part')."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


def group_norm(x, groups, eps=1e-5):
    n, c = x.shape
    x = x.reshape(n, groups, c // groups)
    x = (x - x.mean(axis=-1, keepdims=True)) / jnp.sqrt(x.var(axis=-1, keepdims=True) + eps)
    return x.reshape(n, c)


@mesh(batch=2, model=4, rules={"heads": "model"})
def f(out: Tensor["batch", "length", "heads", "head_size"]) -> Tensor["batch", "length", "features"]:
    B, T, H, N = out.shape
    return group_norm(out.reshape(B * T, H * N), H).reshape(B, T, H * N)


@mesh(batch=2, model=4, rules={"heads": "model"})
def g(out: Tensor["batch", "length", "heads", "head_size"], x: Tensor["batch", "length", "d_model"]
      ) -> Tensor["batch", "length", "d_model"]:
    B, T, C = x.shape
    H = out.shape[2]
    y = out.reshape(B, T, C)
    return group_norm(y.reshape(T * B, C), H).reshape(B, T, C) * x


@mesh(batch=1, model=8, rules={"heads": "model"})
def h(out: Tensor["batch", "length", "heads", "head_size"]) -> Tensor["batch", "length", "features"]:
    B, T, H, N = out.shape
    return group_norm(out.reshape(B * T, H * N), H).reshape(B, T, H * N)


def inputs():
    rng = np.random.default_rng(3)
    out = rng.standard_normal((4, 6, 8, 3)).astype(np.float32)
    x = rng.standard_normal((4, 6, 24)).astype(np.float32)
    return {"f": (out,), "g": (out, x), "h": (out,)}

"""Attention heads cut out of a hinted [batch, seq, d] with d split over 'model', the sizes before the split dim
written as literals of the config or read off another array, as many ports write them:
``x.reshape(4, 8, 8, 16)``, ``x.reshape(B, L, H, -1)`` with ``B, L`` module constants, ``x.reshape(m.shape[0],
m.shape[1], H, -1)`` with ``m`` a mask of [batch, seq], ``x.reshape(b, 8, H, -1)`` with ``b`` read off an array
of other dims, on 2x4 and 1x8.  Before: refused at rewrite time ('read the size').  A split dim enters
a merge only as its major part, so the sizes before it keep batch and seq, checked when the function runs against
the array's sizes (``mr.kept_dims``); see reshape_hinted_dim_size_keeping_no_dim for a size that does not."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"

B, L, H = 4, 8, 8


@mesh(batch=2, model=4, rules={"d": "model", "heads": "model"})
def f(x: Tensor["batch", "seq", "d"], w: Tensor["d", "d"], m: Tensor["batch", "seq"]) -> Tensor["batch", "seq", "d"]:
    q = x.reshape(4, 8, 8, 16)
    k = (x @ w).reshape(B, L, H, -1)
    v = x.reshape(m.shape[0], m.shape[1], H, x.shape[-1] // H)
    att = jax.nn.softmax(jnp.einsum("bqhd,bkhd->bhqk", q, k) / 4.0 + m[:, None, None, :], axis=-1)
    out = jnp.einsum("bhqk,bkhd->bqhd", att, v)
    return out.reshape(B, L, -1) + jnp.tanh(x)


@mesh(data=1, model=8, rules={"batch": "data", "d": "model"})
def g(x: Tensor["batch", "seq", "d"], ids: Tensor["rows", "cols"]) -> Tensor["batch", "seq", "d"]:
    b, t = ids.shape
    h = jnp.tanh(x).reshape(-1, t, H, 16) * x.reshape(b, 8, H, x.shape[-1] // H)
    return h.reshape(x.shape)


def inputs():
    rng = np.random.default_rng(11)
    x = rng.standard_normal((4, 8, 128)).astype(np.float32)
    return {"f": (x, (rng.standard_normal((128, 128)) * 0.1).astype(np.float32),
                  rng.standard_normal((4, 8)).astype(np.float32)),
            "g": (x, np.zeros((4, 8), np.int32))}

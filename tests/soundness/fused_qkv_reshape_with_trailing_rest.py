"""``(win @ w_qkv).reshape(win.shape[0], 4, 3, 8, -1)`` of [windows, tok?, qkv] with the fused features split over
8 devices: the 4 keeps the window's tokens (a dim meshify inferred, checked when the function runs), and the
features are cut into 3 sections of 8 heads and their -1 width.  Before: the trailing -1 was taken to keep the
split features (as in ``table.reshape(N, N, -1)``), which left the tokens to become 4 x 3 x 8, refused.  The merge
back, ``.reshape(-1, 4, 8 * d)``, keeps the windows (-1) and the tokens (4) the same way."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

WS = 2


def windows(x, ws):
    B, H, W, C = x.shape
    x = x.reshape(B, H // ws, ws, W // ws, ws, C)
    return x.transpose(0, 1, 3, 2, 4, 5).reshape(-1, ws * ws, C)


EXPECT = "match"


@mesh(model=8, rules={"qkv": "model", "inner": "model"})
def f(x: Tensor["batch", "h", "w", "c"], wqkv: Tensor["c", "qkv"], wo: Tensor["inner", "c"]):
    win = windows(x, WS)
    t = (win @ wqkv).reshape(win.shape[0], 4, 3, 8, -1)
    q, k, v = t[:, :, 0], t[:, :, 1], t[:, :, 2]
    a = jax.nn.softmax(jnp.einsum("bqhd,bkhd->bhqk", q, k), -1)
    o = jnp.einsum("bhqk,bkhd->bqhd", a, v)
    o = o.reshape(-1, 4, 8 * q.shape[-1])
    return (o @ wo).mean()


def inputs():
    rng = np.random.default_rng(5)
    return (rng.standard_normal((4, 4, 4, 16)).astype(np.float32),
            (rng.standard_normal((16, 96)) * 0.3).astype(np.float32),
            (rng.standard_normal((32, 16)) * 0.3).astype(np.float32))

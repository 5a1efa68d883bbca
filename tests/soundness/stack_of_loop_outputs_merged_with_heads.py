"""RWKV-5's WKV recurrence as many ports write it before lax.scan: a Python loop over time appending each step's
per-head output to a list, then ``jnp.stack(outs, 1).reshape(B, T, H * N)``, the heads made by
``(x @ w).reshape(B, T, H, N)`` with ``H, N = time_decay.shape`` read off a parameter and the features split over
'model' (the heads an inferred dim taking the split), the time read off the input (``B, T, _ = x.shape``) or a
Python number the loop runs over (``g``, also merged with the batch and cut back by a trailing -1 that keeps the
merged heads, a dim meshify inferred).  The stacked dim is new, of the list's length; merging it back with the
batch and the heads' parts must keep the heads split."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


def wkv_loop(r, k, v, w, u):
    B, T, H, N = r.shape
    state = jnp.zeros((B, H, N, N), r.dtype)
    outs = []
    for t in range(T):
        kv = k[:, t, :, :, None] * v[:, t, :, None, :]
        outs.append(jnp.einsum("bhi,bhij->bhj", r[:, t], u[..., None] * kv + state))
        state = w[..., None] * state + kv
    return jnp.stack(outs, 1)


@mesh(batch=2, model=4, rules={"attn": "model", "heads": "model"})
def f(x: Tensor["batch", "time", "d"], wr: Tensor["d", "attn"], wk: Tensor["d", "attn"], wv: Tensor["d", "attn"],
      td: Tensor["heads", "hs"], tf: Tensor["heads", "hs"], wo: Tensor["attn", "d"]) -> Tensor["batch", "time", "d"]:
    B, T, _ = x.shape
    H, N = td.shape
    r = (x @ wr).reshape(B, T, H, N)
    k = (x @ wk).reshape(B, T, H, N)
    v = (x @ wv).reshape(B, T, H, N)
    out = wkv_loop(r, k, v, jnp.exp(-jnp.exp(td)), tf)
    return out.reshape(B, T, H * N) @ wo


@mesh(data=1, model=8, rules={"batch": "data", "attn": "model", "heads": "model"})
def g(x: Tensor["batch", "time", "d"], wr: Tensor["d", "attn"], td: Tensor["heads", "hs"], steps: int = 5
      ) -> Tensor["batch", "time", "d"]:
    B = x.shape[0]
    H, N = td.shape
    r = (x[:, :steps] @ wr).reshape(B, steps, H, N)
    outs = []
    acc = jnp.zeros((B, H, N), x.dtype)
    for t in range(steps):
        acc = acc * jnp.exp(-jnp.exp(td)) + r[:, t]
        outs.append(acc)
    y = jnp.stack(outs, axis=1).reshape(B, steps, H * N)
    z = jnp.stack(outs, 1).reshape(B * steps, H * N).reshape(B, steps, -1)  # the -1: the heads' features
    return (y + z) @ wr.T


def inputs():
    rng = np.random.default_rng(21)
    x = rng.standard_normal((4, 6, 16)).astype(np.float32)
    ws = [(rng.standard_normal((16, 32)) * 0.2).astype(np.float32) for _ in range(3)]
    td = (rng.standard_normal((8, 4)) * 0.3).astype(np.float32)
    return {"f": (x, *ws, td, (rng.standard_normal((8, 4)) * 0.3).astype(np.float32),
                  (rng.standard_normal((32, 16)) * 0.2).astype(np.float32)),
            "g": (x, ws[0], td)}

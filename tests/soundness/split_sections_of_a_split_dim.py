"""``jnp.split`` along a split dim, as GPT-2's fused ``c_attn`` writes it: ``q, k, v = jnp.split(x @ w_qkv, 3,
-1)`` with the fused dim split over 'model' (4 devices: 3 sections, every device holding pieces of whole
sections), then heads reshaped out of each section; a fused SwiGLU ``gate, up = jnp.split(x @ w_gu, 2, axis=2)``
(2 sections over 4 devices), ``jnp.array_split`` into 4 (as many sections as devices) and a split along the
second dim of a value also split over 'data'.  Each section keeps the split: ``mr.split_sections`` moves
chunks between devices (ppermutes), never the whole dim.  Before, refused ("each device holds one block of
the fused dim, not a piece of every section"); gradients through all."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"qkv": "model", "d_ff2": "model", "d_ff": "model", "cols": "model"})
def f(x: Tensor["batch", "seq", "d"], w_qkv: Tensor["d", "qkv"], w_gu: Tensor["d", "d_ff2"],
      w_down: Tensor["d_ff", "d"], m: Tensor["batch", "cols"]):
    B, T, C = x.shape
    q, k, v = jnp.split(x @ w_qkv, 3, -1)
    q = q.reshape(B, T, 4, C // 4)
    k = k.reshape(B, T, 4, C // 4)
    v = v.reshape(B, T, 4, C // 4)
    att = jax.nn.softmax(jnp.einsum("bthd,bshd->bhts", q, k) / 2.0, axis=-1)
    o = jnp.einsum("bhts,bshd->bthd", att, v).reshape(B, T, C)
    gate, up = jnp.split(x @ w_gu, 2, axis=2)
    mlp = (jax.nn.silu(gate) * up) @ w_down
    parts = jnp.array_split(m, 4, axis=1)
    return o, mlp, parts[0] * 2.0 + parts[3], jnp.split(m, 2, axis=-1)[1]


def inputs():
    rng = np.random.default_rng(404)
    return (rng.standard_normal((4, 6, 8)).astype(np.float32), rng.standard_normal((8, 24)).astype(np.float32) * 0.3,
            rng.standard_normal((8, 32)).astype(np.float32) * 0.3, rng.standard_normal((16, 8)).astype(np.float32) * 0.3,
            rng.standard_normal((4, 32)).astype(np.float32))

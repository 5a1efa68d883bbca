"""Heads split from d_model by reshape and transposed as many codebases do (x.reshape(B, T, H, D)
.transpose(0, 2, 1, 3)), a concatenate of two head groups, jnp.stack of q and k norms, jnp.clip and
jnp.maximum, a strided slice on an unsplit dim."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"
H = 4


@mesh(data=2, model=4, rules={"batch": "data", "heads": "model"})
def f(x: Tensor["batch", "seq", "d_model"], wq: Tensor["d_model", "heads", "d_head"],
      wk: Tensor["d_model", "heads", "d_head"]):
    B, T, _ = x.shape
    q = jnp.einsum("btd,dhk->bthk", x, wq).transpose(0, 2, 1, 3)
    k = jnp.einsum("btd,dhk->bthk", x, wk).transpose(0, 2, 1, 3)
    s = jnp.einsum("bhqk,bhsk->bhqs", q, k) / np.sqrt(q.shape[-1])
    s = jnp.clip(s, -5.0, 5.0)
    p = jax.nn.softmax(s, axis=-1)
    o = jnp.einsum("bhqs,bhsk->bhqk", p, k)
    both = jnp.concatenate([o, q], axis=-1)
    norms = jnp.stack([jnp.linalg.norm(q, axis=-1), jnp.linalg.norm(k, axis=-1)])
    return jnp.sum(jnp.maximum(both, 0.0)[:, :, ::2]) + jnp.mean(norms)


def inputs():
    rng = np.random.default_rng(9)
    return (rng.standard_normal((2, 6, 8)).astype(np.float32), 0.4 * rng.standard_normal((8, 4, 2)).astype(np.float32),
            0.4 * rng.standard_normal((8, 4, 2)).astype(np.float32))

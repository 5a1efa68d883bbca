"""``s.reshape(-1, 2, n, L, L)`` of attention scores [batch, heads, tok, tok] with the heads split, where ``n``
made the heads dim in an earlier reshape: meshify keeps ``n`` as the heads (timm's ``attn.view(-1, nW, num_heads,
N, N)``, see the zoo's swin) and checks it when the function runs.  Here ``n`` was halved in between: the reshape
would merge heads into the batch, which the heads' blocks cannot do: refused when traced (``mr.kept_size``), never
a silently different array."""
from typing import Annotated

import jax
import jax.numpy as jnp
import numpy as np

from meshify import mesh

EXPECT = "error"


@mesh(batch=2, model=4, rules={"heads": "model"})
def f(x: Annotated[jax.Array, "batch", "tok", "feat"], bias: Annotated[jax.Array, "heads"], n: int = 4):
    B, L, F = x.shape
    q = x.reshape(B, L, n, F // n) + bias[:, None]
    s = jnp.einsum("blhd,bkhd->bhlk", q, q)
    n = n // 2
    return s.reshape(-1, 2, n, L, L) * 2.0


def inputs():
    rng = np.random.default_rng(0)
    return rng.standard_normal((2, 4, 16)).astype(np.float32), rng.standard_normal(4).astype(np.float32)

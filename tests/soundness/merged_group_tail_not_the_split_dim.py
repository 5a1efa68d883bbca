"""``s.reshape(-1, 2, n, L, K)`` of attention scores [batch, heads, q, k] with the heads split: meshify keeps
``n`` as the heads (timm's ``attn.view(-1, nW, num_heads, N, N)``, see swin_shifted_windows_heads_split), and
checks it when the function runs.  Here ``n`` is half the heads: the reshape would merge heads into the batch, which
the heads' blocks cannot do: refused when traced (``mr.kept_size``), never a silently different array."""
from typing import Annotated

import jax
import numpy as np

from meshify import mesh

EXPECT = "error"


@mesh(batch=2, model=4, rules={"heads": "model"})
def f(s: Annotated[jax.Array, "batch", "heads", "q", "k"], n: int = 4):
    _, _, L, K = s.shape
    return s.reshape(-1, 2, n, L, K) * 2.0


def inputs():
    return (np.random.default_rng(0).standard_normal((4, 8, 4, 4)).astype(np.float32),)

# Bad input: an annotated assignment renames a dim a reshape merged (batch x beam) after one of its parts.
# expect: LayoutError at 14:49 naming merged by a reshape
from typing import Annotated

import jax
import jax.numpy as jnp
from meshify import mesh

@mesh(model=4, rules={"vocab": "model"})
def f(tok: Annotated[jax.Array, "batch"], logits: Annotated[jax.Array, "batch", "beam", "vocab"]):
    B = tok.shape[0]
    _, K, V = logits.shape
    flat = logits.reshape(B * K, V)
    y: Annotated[jax.Array, "batch", "vocab"] = flat
    return y.reshape(B, K, V).max(1)

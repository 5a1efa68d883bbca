# Bad input: a naming hint calls the dim a reshape merges (batch x beam) 'batch', one of its parts: a name with two
# sizes, which a later reshape reading batch's size off another array split wrong (silently, in beam search).
# expect: LayoutError at 14:52 naming merges 'batch' x 'beam' into one dim
from typing import Annotated

import jax
import jax.numpy as jnp
from meshify import mesh

@mesh(model=4, rules={"vocab": "model"})
def f(tok: Annotated[jax.Array, "batch"], logits: Annotated[jax.Array, "batch", "beam", "vocab"]):
    B = tok.shape[0]
    _, K, V = logits.shape
    flat: Annotated[jax.Array, "batch", "vocab"] = logits.reshape(B * K, V)
    return jnp.max(flat.reshape(B, K, V), axis=1)

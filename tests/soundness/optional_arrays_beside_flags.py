"""HF's forward: optional arrays (``attention_mask=None``, ``head_mask=None``, filled in when None) beside bool
flags whose values choose the results through a helper (``output_attentions``): rewritten once per
combination of the arrays' None-ness and the flags' values, each an ``@f.variant``, the runtime picking the
version per call.  Before, flag versions were tried only for a function without optional arrays ("the branches
of this conditional expression have different layouts")."""
from typing import Optional

import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


def layer(x, w, mask, output_attentions):
    a = jax.nn.softmax(x @ w + (1.0 - mask) * -1e9, axis=-1)
    h = jnp.tanh(a @ w.T) + x
    return (h, a) if output_attentions else (h,)


@mesh(batch=2, model=4, rules={"e": "model"})
def forward(x: Tensor["batch", "d"], w: Tensor["d", "e"], attention_mask: Optional[Tensor["batch", "e"]] = None,
            head_mask: Optional[Tensor["e"]] = None, output_attentions: bool = False):
    if attention_mask is None:
        attention_mask = jnp.ones((x.shape[0], w.shape[1]), x.dtype)
    if head_mask is not None:
        attention_mask = attention_mask * head_mask
    return layer(x, w, attention_mask, output_attentions)


def inputs():
    rng = np.random.default_rng(281)
    return (rng.standard_normal((4, 8)).astype(np.float32), (rng.standard_normal((8, 16)) / 3).astype(np.float32))


def scenario(mod, pick):
    """Every combination of the two optional arrays and the flag."""
    x, w = inputs()
    mask = (np.arange(16)[None, :] < np.array([[16], [9], [12], [3]])).astype(np.float32)
    heads = (np.arange(16) % 3 != 0).astype(np.float32)
    out = {}
    for m in (None, mask):
        for hm in (None, heads):
            for flag in (False, True):
                out[f"{m is None}-{hm is None}-{flag}"] = pick(mod.forward)(x, w, m, hm, output_attentions=flag)
    return out

"""Top-k filtering by a threshold read off logits sorted over a vocab split on 'model': ``s[:, 4:5]``, ``s[:, -1:]``,
``s[:, 4][:, None]`` broadcast against the split logits; a reshaped ``arange(n).reshape((-1, 1))`` beside split
rows.  Before: the one-entry slice kept the vocab's name and was cut as if split ("cannot split axis 1 of a [2, 1]
array"), and a size-1 reshape dim was lined up with a split dim (attack, fuzz seed 190)."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"vocab": "model"})
def filtered(x: Tensor["batch", "vocab"]):
    s = jnp.sort(x, axis=-1, descending=True)
    kept = jnp.where(x < s[:, 4:5], -jnp.inf, x)
    t = jnp.sort(x, axis=-1)[:, ::-1]
    return kept, x - t[:, -1:], jnp.where(x < t[:, 4][:, None], 0.0, x) * 2


@mesh(model=8, rules={"seq": "model"})
def ranked(x: Tensor["d", "seq"]):
    r = jnp.argmax(x > jnp.arange(x.shape[0]).reshape((-1, 1)) * 0.1, axis=0)
    return 1.0 / (r + 1) + x.sum(0)


def inputs():
    rng = np.random.default_rng(69)
    x = rng.standard_normal((4, 32)).astype(np.float32)
    x[1, 3] = np.nan
    return {"filtered": (x,), "ranked": (rng.standard_normal((3, 16)).astype(np.float32),)}

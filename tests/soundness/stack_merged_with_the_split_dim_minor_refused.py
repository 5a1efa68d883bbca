"""``jnp.stack([a, b], axis=1).reshape(B, -1)`` of two arrays split along their last dim: the merge puts the
split dim after the stacked one (the merged dim is [a | b], a concatenate along the split dim), which no
block of each device can hold.  Refused at the reshape, the fix naming ``jnp.concatenate([...], axis=...)``
first (it runs: concat_split_with_whole_along_the_split_dim, concat_split_axis)."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "error"


@mesh(batch=2, model=4, rules={"d": "model"})
def f(a: Tensor["batch", "d"], b: Tensor["batch", "d"]):
    s = jnp.stack([a, b], axis=1)
    return s.reshape(s.shape[0], -1)


def inputs():
    rng = np.random.default_rng(1440)
    return rng.standard_normal((4, 8)).astype(np.float32), rng.standard_normal((4, 8)).astype(np.float32)

"""A float16 attention mask broadcast over split heads: jnp.where with finfo.min, then softmax(where=) of it."""

import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"heads": "model"})
def f(s: Tensor["batch", "heads", "q", "k"], mask: Tensor["batch", "q", "k"]) -> Tensor["batch", "heads", "q", "k"]:
    m = mask[:, None, :, :]
    s = jnp.where(m, s, jnp.finfo(s.dtype).min)
    return jax.nn.softmax(s, axis=-1, where=m)


def inputs():
    rng = np.random.default_rng(15)
    m = rng.random((2, 5, 5)) > 0.3
    m[:, :, 0] = True
    return rng.standard_normal((2, 8, 5, 5)).astype(np.float16), m

"""A window read by ``x[:, off + jnp.arange(4)]`` (and ``jnp.take(x, off + jnp.arange(4), axis=1)``, an ``idx``
bound first, ``scale * jnp.ones((8,))`` beside a named dim) with ``off`` a traced scalar: a literal-shaped array
shifted by a scalar keeps its shape, so the ids are whole on every device with a dim named after them, looked up
along a split ``seq`` too.  Before, "index 'off + jnp.arange(4)' is an array whose dims meshify cannot infer"."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"seq": "model"})
def window(x: Tensor["batch", "seq", "d"], off: Tensor[()], scale: Tensor[()]):
    idx = off + jnp.arange(4)
    return (x[:, off + jnp.arange(4)], jnp.take(x, off + jnp.arange(4), axis=1, mode="clip"), x[:, idx].sum(1),
            x * (scale * jnp.ones((8,))))


@mesh(model=8, rules={"seq": None, "batch": "model"})
def whole(x: Tensor["batch", "seq", "d"], off: Tensor[()]):
    return x[:, (off + jnp.arange(3)) * 2]


def inputs():
    rng = np.random.default_rng(41)
    x = rng.standard_normal((8, 16, 8)).astype(np.float32)
    return {"window": (x, np.int32(5), np.float32(1.5)), "whole": (x, np.int32(3))}

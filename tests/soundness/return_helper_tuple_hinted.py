"""``return head(x, w)`` of a helper's tuple against a ``tuple[...]`` return hint, as code returns what a
helper gives: ``f`` needs its second item whole (a sum over the split d_ff, psummed through a walrus that
binds the tuple once), ``g`` returns both items as they come (batch-split, no collective).  Before, "the
return hint names a tuple of 2 values but 'head(x, w)' is not a tuple of 2"."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


def head(x, w):
    y = jax.nn.gelu(x @ w)
    return y, jnp.sum(y * y, axis=-1)


def pair(x, w):
    return x * 2.0, jnp.tanh(x @ w)


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def f(x: Tensor["batch", "d"], w: Tensor["d", "d_ff"]) -> tuple[Tensor["batch", "d_ff"], Tensor["batch"]]:
    return head(x, w)


@mesh(batch=2, model=4, rules={"d_ff": None})
def g(x: Tensor["batch", "d"], w: Tensor["d", "d_ff"]) -> tuple[Tensor["batch", "d"], Tensor["batch", "d_ff"]]:
    return pair(x, w)


def inputs():
    rng = np.random.default_rng(151)
    x, w = rng.standard_normal((4, 8)).astype(np.float32), rng.standard_normal((8, 16)).astype(np.float32)
    return {"f": (x, w), "g": (x, w)}

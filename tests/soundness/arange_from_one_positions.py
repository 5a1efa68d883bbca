"""1-based positions ``jnp.arange(1, T + 1)`` (``T = x.shape[1]``, or ``x.shape[1]`` written inline, or ``k + T``
counted from k) beside a split sequence: a running mean ``jnp.cumsum(x, axis=1) / jnp.arange(1, T + 1)[None, :,
None]`` and a position scale, 'seq' split over 'model' and over all 8 devices.  Before: "cannot infer the dims of
'jnp.arange(1, x.shape[1] + 1)[None, :, None]'" (only jnp.arange(T) and jnp.arange(0, T) were sized by T).  Now it
has T's dim, whole on every device and sliced to each block where it meets the split one."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


def running_mean(x):
    T = x.shape[1]
    mean = jnp.cumsum(x, axis=1) / jnp.arange(1, x.shape[1] + 1)[None, :, None]
    scale = jnp.log(jnp.arange(2, 2 + T, dtype=x.dtype))[:, None]
    return mean * scale + jnp.arange(1, T + 1, 1)[:, None] * 0.01


@mesh(batch=2, model=4, rules={"seq": "model"})
def f(x: Tensor["batch", "seq", "d"]) -> Tensor["batch", "seq", "d"]:
    return running_mean(x)


@mesh(batch=8, rules={"seq": "batch", "batch": None})
def g(x: Tensor["batch", "seq", "d"]) -> Tensor["batch", "seq", "d"]:
    return running_mean(x)


def inputs():
    rng = np.random.default_rng(3214)
    x = rng.standard_normal((4, 16, 3)).astype(np.float32)
    return {"f": (x,), "g": (x,)}

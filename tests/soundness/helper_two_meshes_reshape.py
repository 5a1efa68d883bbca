"""One helper splitting heads with a literal head count, called from @mesh functions whose 'model' axes differ in size."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


def heads_sum(x):
    b = x.shape[0]
    h: Tensor["batch", "heads", "d_head"] = x.reshape(b, 4, -1)
    return jnp.sum(h * h, axis=-1)


@mesh(batch=2, model=4, rules={"d": "model", "heads": "model"})
def f(x: Tensor["batch", "d"]) -> Tensor["batch", "heads"]:
    return heads_sum(x)


@mesh(batch=2, model=2, rules={"d": "model", "heads": "model"})
def g(x: Tensor["batch", "d"]) -> Tensor["batch", "heads"]:
    return heads_sum(x)


def inputs():
    x = np.random.default_rng(2).standard_normal((4, 16)).astype(np.float32)
    return {"f": (x,), "g": (x,)}

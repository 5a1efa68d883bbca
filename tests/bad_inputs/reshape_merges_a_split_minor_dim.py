# Bad input: a reshape merging dims whose minor part is split.
# expect: UnsupportedError at 10:23 naming not the major
import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


@mesh(model=4)
def f(x: Tensor["b", "model"]) -> Tensor["bm"]:
    h: Tensor["bm"] = x.reshape(-1)
    return h

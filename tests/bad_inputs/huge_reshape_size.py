# Bad input: a reshape to a huge size that the shards do not divide.
# expect: LayoutError at 10:41 naming 100000000000000000001
import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


@mesh(model=4, rules={"d": "model", "hd": "model"})
def f(x: Tensor["b", "d"]) -> Tensor["b", "hd"]:
    h: Tensor["b", "hd"] = x.reshape(4, 100000000000000000001)
    return h

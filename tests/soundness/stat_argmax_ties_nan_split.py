"""argmax/argmin over a split dim with ties across shards (first occurrence wins), NaN (counts as the
extreme, first NaN wins), -0.0 beside 0.0 and infinities."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"d": "model"})
def f(x: Tensor["batch", "d"]) -> tuple[Tensor["batch"], Tensor["batch"], Tensor["d"]]:
    return jnp.argmax(x, axis=1), jnp.argmin(x, axis=-1), jnp.argmax(x, axis=0)


def inputs():
    nan, inf = np.nan, np.inf
    x = np.array([[1, 3, 3, 0, 3, 3, 1, 3],
                  [2, 1, 2, nan, 5, 5, nan, 5],
                  [-0.0, 0.0, -1, -1, -2, -3, 0.0, -0.0],
                  [-inf, -inf, -inf, -inf, -inf, -inf, -inf, -inf],
                  [0, 0, 0, 0, 0, 0, 0, 0],
                  [4, -inf, inf, 1, inf, -inf, nan, 2]], np.float32)
    return (x,)

"""An inf-norm whose max |x| is tied across devices (and with a negative entry): the gradient is shared."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"d": "model"})
def f(x: Tensor["batch", "d"]) -> Tensor["batch"]:
    return jnp.linalg.norm(x, ord=jnp.inf, axis=1)


def inputs():
    x = np.array([[1, 3, 0, -3, 2, 3, 1, 0], [0, 0, 0, 0, 0, 0, 0, 5], [-2, 2, -2, 2, -2, 2, -2, 2],
                  [1, 1, 1, 1, 1, 1, 1, 1]], np.float32)
    return (x,)

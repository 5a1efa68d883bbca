"""any/all/count_nonzero over a split dim: keepdims, where=, axis=None, tuples of axes, bools and ints."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"d": "model"})
def f(x: Tensor["batch", "d"], m: Tensor["batch", "d"]) -> tuple[Tensor["batch"], Tensor["batch"], Tensor[()],
                                                                  Tensor["batch"], Tensor[()], Tensor["batch", "d"]]:
    return (jnp.any(x > 1, axis=1), (x > -1).all(axis=-1), jnp.all(x > -3),
            jnp.count_nonzero(m, axis=1), jnp.count_nonzero(m, axis=(0, 1)),
            x * jnp.any(m > 0, axis=1, keepdims=True, where=x > 0))


def inputs():
    rng = np.random.default_rng(7018)
    x = rng.standard_normal((4, 8)).astype(np.float32)
    m = rng.integers(-1, 2, (4, 8)).astype(np.int32)
    return (x, m)

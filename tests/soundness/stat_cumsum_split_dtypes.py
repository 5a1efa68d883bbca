"""cumsum along a split dim of ints, bools and floats, negative axis, dtype=; cumprod too; gradients."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"d": "model"})
def f(x: Tensor["batch", "d"], k: Tensor["batch", "d"]) -> tuple[Tensor["batch", "d"], Tensor["batch", "d"],
                                                                  Tensor["batch", "d"], Tensor["batch", "d"]]:
    return (jnp.cumsum(x, axis=-1), x.cumprod(1), jnp.cumsum(k > 0, axis=1),
            jnp.cumsum(k, axis=1, dtype=jnp.float32) * x)


def inputs():
    rng = np.random.default_rng(7019)
    x = rng.uniform(0.5, 1.5, (4, 16)).astype(np.float32)
    x[1, 5] = 0.0
    x[2, 9] = -2.0
    k = rng.integers(-3, 4, (4, 16)).astype(np.int8)
    return (x, k)

"""A dim split over two mesh axes, minor one first (rules={"d": ("model", "batch")}): argmax, cumsum,
prod and var along it need each block's place in that order; a 1-d cumsum without axis=."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"d": ("model", "batch")})
def f(x: Tensor["n", "d"], v: Tensor["d"]) -> tuple[Tensor["n"], Tensor["n", "d"], Tensor["n"], Tensor["n"],
                                                    Tensor["d"]]:
    return (jnp.argmax(x, axis=1), jnp.cumsum(x, axis=1), jnp.prod(x, axis=1), jnp.var(x, axis=1, ddof=1),
            jnp.cumsum(v))


def inputs():
    rng = np.random.default_rng(7021)
    x = rng.uniform(0.8, 1.2, (3, 16)).astype(np.float32)
    x[0, 13] = 5.0
    x[1, 2] = 5.0
    x[1, 9] = 5.0
    return (x, rng.standard_normal((16,)).astype(np.float32))

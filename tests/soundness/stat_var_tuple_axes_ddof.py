"""jnp.var over a tuple of (negative) axes, both split, with ddof=2; std with correction=1; axis=None."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"d": "model"})
def f(x: Tensor["batch", "d"]) -> tuple[Tensor[()], Tensor[()], Tensor[()]]:
    return jnp.var(x, axis=(-2, -1), ddof=2), jnp.std(x, correction=1), x.var()


def inputs():
    rng = np.random.default_rng(7002)
    return (rng.standard_normal((4, 8)).astype(np.float32) + 100.0,)

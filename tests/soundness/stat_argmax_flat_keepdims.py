"""argmax without axis= (a flat index) of a value split along one dim; argmin(keepdims=True) used as
an index; argmax of int and bool values (first True)."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"d": "model"})
def f(x: Tensor["n", "d"], k: Tensor["n", "d"]) -> tuple[Tensor[()], Tensor["n"], Tensor["n"], Tensor["d"]]:
    first = jnp.argmin(x, axis=1, keepdims=True)
    return jnp.argmax(x), (first * 2)[:, 0], jnp.argmax(k > 2, axis=1), jnp.argmin(k, axis=0)


def inputs():
    rng = np.random.default_rng(7016)
    x = rng.standard_normal((3, 8)).astype(np.float32)
    x[2, 6] = 9.0
    k = rng.integers(0, 4, (3, 8)).astype(np.int32)
    return (x, k)

"""jax.tree.map(..., is_leaf=None), JAX's default, written out or fixed by a module partial alias (tmap =
functools.partial(jax.tree.map, is_leaf=None)): as if not given (was refused: "with keywords"). Found by the fuzzer's
aliased spellings (session 36)."""
import functools
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"

tmap = functools.partial(jax.tree.map, is_leaf=None)


@mesh(model=8, rules={"d": "model"})
def f(x: Tensor["b", "d"], w: Tensor["d"]) -> Tensor[()]:
    a = tmap(lambda q: q * 2.0, (x, w))
    b = jax.tree.map(jnp.negative, (x, w), is_leaf=None)
    return jnp.sum(a[0] * b[1]) + jnp.sum(a[1] * b[0][0])


def inputs():
    rng = np.random.default_rng(3612)
    return rng.standard_normal((4, 8)).astype(np.float32), rng.standard_normal(8).astype(np.float32)

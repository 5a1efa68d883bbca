"""A module-level ``functools.partial`` alias passed as a value (``apply(total, x)``, ``tree_map(total, ...)``,
``total = functools.partial(jnp.sum, axis=-1)``): the helper calls the partial it holds, walked as the partial
written there would be (the sum over the split ``d`` completed).  It was taken for an elementwise function of
what the name holds and refused when traced (MSH050), or mislaid a dim.  Found by the fuzzer's aliased
spellings (session 36)."""
import functools

import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"

total = functools.partial(jnp.sum, axis=-1)
smax = jax.nn.softmax
neg = jnp.negative
tmap = jax.tree.map


def apply(fn, h):
    return fn(h)


@mesh(model=8, rules={"d": "model"})
def f(x: Tensor["b", "d"], w: Tensor["d"]) -> Tensor[()]:
    a = tmap(total, (x * w, x))
    b = apply(smax, x)
    c = tmap(neg, (x, w))
    return jnp.sum(a[0] + a[1] + jnp.sum(b * c[0] * c[1], axis=-1) + apply(total, x))


def inputs():
    rng = np.random.default_rng(3611)
    return rng.standard_normal((4, 8)).astype(np.float32), rng.standard_normal(8).astype(np.float32)

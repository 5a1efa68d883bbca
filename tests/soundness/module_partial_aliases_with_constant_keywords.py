"""Module-level ``functools.partial`` aliases fixing a keyword to a constant (``axis=None``, ``keepdims=False``,
``axis=-1``): ``None``/``True``/``False`` are constants, not names the module might rebind (the partial was
taken for an unknown function: "total has no meshify rule").  A call's own keyword replaces the partial's
(``total(x * w, axis=1)``); each call gets its function's rule over the split ``d``; an elementwise alias
(``rsqrt = jax.lax.rsqrt``) on a whole value (a keepdims mean) keeps its dims.  Found by the fuzzer's
aliased spellings (session 36)."""
import functools

import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"

total = functools.partial(jnp.sum, axis=None)
avg = functools.partial(jnp.mean, keepdims=False)
lse = functools.partial(jax.nn.logsumexp, axis=-1)
rsqrt = jax.lax.rsqrt


@mesh(model=8, rules={"d": "model"})
def f(x: Tensor["b", "d"], w: Tensor["d"]) -> Tensor[()]:
    a = total(x * w, axis=1)
    b = avg(x, axis=1, keepdims=True)
    c = lse(x, axis=0)
    var = avg(jnp.square(x), axis=0, keepdims=True)
    n = x * rsqrt(var + 1e-5)
    return jnp.sum(a + b[:, 0]) + total(c) + jnp.sum(lse(x)) + avg(n * n)


def inputs():
    rng = np.random.default_rng(3610)
    return rng.standard_normal((4, 8)).astype(np.float32), rng.standard_normal(8).astype(np.float32)

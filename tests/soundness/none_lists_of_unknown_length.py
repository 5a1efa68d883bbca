"""``hs = [None] * n`` where ``n`` is a size meshify does not know while rewriting (``x.shape[0] // 2``), filled
by ``hs[i] = ...`` in a loop over ``range(n)`` (was refused: "assignment to 'hs[i]'", session 29's attack): the
Nones are placeholders and the stored arrays the items, of one layout.  Stacked, summed, chained through
``hs[i - 1]``, stored in reverse order, partial sums stored and returned (completed where they leave, float16
accumulated in float32), an item left unwritten (None in the returned list, as in the reference), and under
``jax.grad``."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"d": "model"})
def filled(x: Tensor["batch", "d"]):
    n = x.shape[0] // 2
    hs = [None] * n
    for i in range(n):
        hs[i] = jnp.tanh(x) * (i + 1)
    return jnp.stack(hs), sum(hs)


@mesh(batch=2, model=4, rules={"d": "model"})
def partials(x: Tensor["batch", "d"]):
    n = x.shape[1] // 8
    sums = [None] * n
    for i in range(n):
        sums[i] = jnp.sum(x * i)
    return sums, jnp.stack(sums)


@mesh(batch=2, model=4, rules={"d": "model"})
def chained(x: Tensor["batch", "d"]):
    n = x.shape[0] // 2
    hs = n * [None]
    for i in range(n):
        hs[i] = x if i == 0 else hs[i - 1] * 0.5 + x
    return hs[-1], hs


@mesh(batch=2, model=4, rules={"d": "model"})
def reversed_order(x: Tensor["batch", "d"]):
    n = x.shape[0] // 2
    hs = [None] * n
    for i in range(n):
        hs[n - 1 - i] = x * i
    return jnp.stack(hs), hs[0]


@mesh(batch=2, model=4, rules={"d": "model"})
def unwritten(x: Tensor["batch", "d"]):
    n = x.shape[0] // 2
    hs = [None] * n
    hs[0] = x * 2
    return hs


@mesh(batch=2, model=4, rules={"d": "model"})
def grad_of(x: Tensor["batch", "d"]):
    def loss(x):
        n = x.shape[0] // 2
        hs = [None] * n
        for i in range(n):
            hs[i] = jnp.sum(jnp.sin(x) * i)
        return sum(hs)

    return jax.grad(loss)(x)


def inputs():
    x = np.random.default_rng(96).standard_normal((8, 16)).astype(np.float32)
    h = x.astype(np.float16)
    return {"filled": (x,), "partials": (h,), "chained": (x,), "reversed_order": (x,), "unwritten": (h,),
            "grad_of": (x,)}

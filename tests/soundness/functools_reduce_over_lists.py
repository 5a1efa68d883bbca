"""``functools.reduce`` over lists of arrays with an elementwise fold: ``lambda a, b: a + b``, ``operator.add``,
``jnp.add`` with an initial value, ``operator.sub``, ``jnp.maximum``, ``operator.mul``, ``lambda a, b:
jnp.minimum(a, b)``, over list parameters of each call's length, comprehensions and literal lists.  An additive
fold of partial sums stays partial (one psum after it, a whole initial value counted once); any other fold takes
its items whole (a comprehension's completed in it).  Before: "functools.reduce has no meshify rule"."""
import functools
import operator

import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"f": "model"})
def red(x: Tensor["batch", "f"], ws: list[Tensor["f", "d"]]) -> Tensor["batch", "d"]:
    return functools.reduce(lambda a, b: a + b, [x @ w for w in ws])


@mesh(model=8, rules={"f": "model"})
def folds(x: Tensor["batch", "f"], ws: list[Tensor["f", "d"]], y: Tensor["batch", "d"]) -> Tensor["batch", "d"]:
    a = functools.reduce(jnp.add, (x @ w for w in ws), y)
    b = functools.reduce(operator.sub, [x @ w for w in ws], 1.5)
    c = functools.reduce(jnp.maximum, [x @ w for w in ws])
    d = functools.reduce(operator.mul, [jnp.tanh(x @ w) for w in ws], 2.0)
    e = functools.reduce(lambda p, q: jnp.minimum(p, q), [x @ ws[0], x @ ws[1]])
    return a + b + c + d + e


@mesh(batch=2, model=4, rules={"f": "model"})
def whole(hs: list[Tensor["batch", "f"]]) -> Tensor["batch", "f"]:
    return functools.reduce(operator.add, hs) + functools.reduce(jnp.maximum, hs, hs[0]) * functools.reduce(
        lambda a, b: a * b, hs)


def inputs():
    rng = np.random.default_rng(72)
    hs = [rng.standard_normal((4, 16)).astype(np.float32) for _ in range(3)]
    ws = [(rng.standard_normal((16, 8)) * 0.3).astype(np.float32) for _ in range(3)]
    return {"red": (hs[0], ws), "folds": (hs[1], ws, rng.standard_normal((4, 8)).astype(np.float32)),
            "whole": (hs,)}

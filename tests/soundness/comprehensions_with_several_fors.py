"""Comprehensions with several ``for`` clauses, as code pairs layers or heads: ``[(w, v) for w in ws for v in vs]``,
``[o * (i + j) for i, o in enumerate(outs) for j in range(2) if i != j]`` (a filter on Python values), a generator
of products over two slices of one list, a nested list comprehension; partial sums completed in the element."""

import jax
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def f(x: Tensor["batch", "d"], ws: tuple[Tensor["d", "d_ff"], ...], vs: tuple[Tensor["d_ff", "d"], ...]
      ) -> Tensor["batch", "d"]:
    pairs = [(w, v) for w in ws for v in vs]
    outs = [jax.nn.relu(x @ w) @ v for w, v in pairs]
    grid = [o * (i + j) for i, o in enumerate(outs) for j in range(2) if i != j]
    nested = [[o * k for k in range(2)] for o in outs]
    return sum(outs) + sum(grid) + sum(sum(r) for r in nested) + sum(a * b for a in outs[:2] for b in outs[1:])


def inputs():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(8, 8)).astype(np.float32)
    ws = tuple((rng.normal(size=(8, 16)) * 0.3).astype(np.float32) for _ in range(3))
    vs = tuple((rng.normal(size=(16, 8)) * 0.3).astype(np.float32) for _ in range(2))
    return x, ws, vs

"""A ``+``/``-`` chain of partial sums over different axes (``v - x @ w1 + x @ w2 * 0.5 - x @ w3 + jnp.sum(v, 0)``:
three over 'model', one over 'data', a whole term first).  Added left to right, each ``+`` of two different
partial sums completed both: a psum per term.  The terms partial over the same axes are added first, in their
order and sign, as one term where the first of them stands (``v - (x @ w1 - x @ w2 * 0.5 + x @ w3) + ...``), so one
psum per axis completes them; a whole term never joins them (it would be counted once per device).  Scalars
partial over ('data', 'model') and over 'data', integer sums, a group cast to the dtype of a term before it
(``mr.promoted``).  Float16 terms: sum_of_partial_sums_over_several_axes_low_precision.py."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"
RULES = {"batch": "data", "f": "model"}


@mesh(data=2, model=4, rules=RULES)
def chain(x: Tensor["batch", "f"], w1: Tensor["f", "d"], w2: Tensor["f", "d"], w3: Tensor["f", "d"],
          v: Tensor["batch", "d"]) -> Tensor["batch", "d"]:
    return v - x @ w1 + x @ w2 * 0.5 - x @ w3 + jnp.sum(v, axis=0)


@mesh(data=2, model=4, rules=RULES)
def scalars(x: Tensor["batch", "f"], v: Tensor["batch", "d"], y: Tensor["batch", "f"]):
    first = 1.0 - jnp.sum(x) + jnp.sum(v) + jnp.sum(x * x) - jnp.mean(v)
    cast = jnp.mean(v) + jnp.sum(x) - jnp.sum(jnp.tanh(v)) + jnp.sum(y)
    return first, cast, first * cast


@mesh(data=2, model=4, rules=RULES)
def counts(ids: Tensor["batch", "f"], x: Tensor["batch", "f"]):
    return jnp.sum(ids) - jnp.sum(ids[:, 0]) + 2 * jnp.sum(ids) + jnp.sum(ids > 2), \
        jnp.sum(x) - jnp.sum(ids) + jnp.sum(x[:, 0]) + jnp.sum(x * 2.0)


def inputs():
    rng = np.random.default_rng(3502)
    x = rng.standard_normal((4, 16)).astype(np.float32)
    ws = [(rng.standard_normal((16, 8)) * 0.3).astype(np.float32) for _ in range(3)]
    v = rng.standard_normal((4, 8)).astype(np.float32)
    y = rng.standard_normal((4, 16)).astype(np.float32)
    ids = rng.integers(0, 5, (4, 16)).astype(np.int32)
    return {"chain": (x, *ws, v), "scalars": (x, v, y), "counts": (ids, x)}

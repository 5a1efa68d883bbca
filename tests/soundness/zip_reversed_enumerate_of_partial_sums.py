"""Lists of partial sums (``d_ff`` split: each ``h @ w2`` is one) regrouped before they are returned:
``tuple(zip(*[v2s, v2s[::-1]]))[-1]``, ``list(reversed(v2s))[0]``, ``v2s[::2]``, ``zip(v2s[1:], v2s[:-1])``,
``list(enumerate(v2s))[1][1]``; each item completed where it leaves, cast back to the dtype one device gives it.
Before, "cannot tell the dtype of 'tuple(zip(*[v2s, v2s[::-1]]))[-1][0]', a partial sum" (fuzz seeds 5301,
5303: a slice with a step, reversed and enumerate were not followed by the dtype tracker; enumerate outside a
loop's header had no rule)."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"
TOL = 2e-2  # (bfloat16 items)


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def zipped(x: Tensor["batch", "d"], w1: Tensor["d", "d_ff"], w2: Tensor["d_ff", "d"]):
    h = x @ w1
    v2s = [jnp.tanh(h) @ w2, jax.nn.relu(h) @ w2]
    return tuple(zip(*[v2s, v2s[::-1]]))[-1]


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def means(x: Tensor["batch", "d"], w1: Tensor["d", "d_ff"], w2: Tensor["d_ff", "d"]):
    h = jnp.tanh(x @ w1)
    v10s = [jnp.mean(h), jnp.mean(h * h)]
    return tuple(zip(*[v10s, v10s[::-1]]))[-1]


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def regrouped(x: Tensor["batch", "d"], w1: Tensor["d", "d_ff"], w2: Tensor["d_ff", "d"]):
    h = x @ w1
    v2s = [jnp.tanh(h) @ w2, jax.nn.relu(h) @ w2, (h * h) @ w2]
    first = list(reversed(v2s))[0]
    second = list(enumerate(v2s, 1))[1][1] + list(enumerate(v2s, start=2))[0][1]
    pair = tuple(zip(v2s[1:], v2s[:-1]))[0]
    return first, second, pair, v2s[::2]


def inputs():
    rng = np.random.default_rng(53)

    def r(*shape, scale=1.0):
        return (rng.standard_normal(shape) * scale).astype(np.float32)

    args = (r(4, 8), r(8, 16, scale=0.3), r(16, 8, scale=0.3))
    low = tuple(jnp.asarray(a, jnp.bfloat16) for a in args)
    return {"zipped": low, "means": args, "regrouped": args}

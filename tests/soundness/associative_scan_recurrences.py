"""S5/Mamba-style linear recurrences by jax.lax.associative_scan along a whole time axis, with batch and
state dims split: a module-level combine, a nested def closing over nothing, a lambda on a pair, reverse=,
and a combine whose mixing matrix contracts a split dim (its partial sum completed inside, as a carry's)."""

import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


def combine(left, right):
    return left[0] * right[0], right[0] * left[1] + right[1]


@mesh(batch=2, model=4, rules={"state": "model"})
def ssm(a: Tensor["batch", "length", "state"], b: Tensor["batch", "length", "state"],
        m: Tensor["state", "state2"], mt: Tensor["state2", "state"]):
    _, h = jax.lax.associative_scan(combine, (a, b), axis=1)

    def nested(left, right):
        a1, b1 = left
        a2, b2 = right
        return a1 * a2, a2 * b1 + b2

    _, back = jax.lax.associative_scan(nested, (a, b), reverse=True, axis=1)
    summed = jax.lax.associative_scan(lambda x, y: x + y, b * 0.5, axis=1)
    mixed = jax.lax.associative_scan(lambda x, y: jnp.tanh(x @ m) @ mt + y, b, axis=1)
    peak = jax.lax.associative_scan(jnp.maximum, b, axis=1)
    return h + back + summed + peak, mixed


def inputs():
    rng = np.random.default_rng(0)
    a = rng.uniform(0.5, 1.0, size=(8, 12, 16)).astype(np.float32)
    b = rng.normal(size=(8, 12, 16)).astype(np.float32)
    m = (rng.normal(size=(16, 8)) / 4).astype(np.float32)
    mt = (rng.normal(size=(8, 16)) / 4).astype(np.float32)
    return {"ssm": (a, b, m, mt)}

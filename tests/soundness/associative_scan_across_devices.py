"""Linear recurrences by jax.lax.associative_scan along a time axis split over the mesh (sequence parallelism
for S5/Mamba-style models): each device scans its block, gathers every block's total and combines those of
the blocks before it with its scan (``mr.associative_scan``).  A module-level combine on pairs, reverse=, a
nested def closing over a replicated gate (no ``lax.cond`` in the runtime: a value a branch closes over would
transpose to a psum only some devices run), and ``jnp.fmax`` (elementwise
but no jax.lax cumulative op: NaN-skipping).  Before: "a scan across devices is not modelled"."""

import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


def combine(left, right):
    return left[0] * right[0], right[0] * left[1] + right[1]


@mesh(batch=2, model=4, rules={"time": "model"})
def ssm(a: Tensor["batch", "time", "state"], b: Tensor["batch", "time", "state"], gate: Tensor["state"]):
    _, h = jax.lax.associative_scan(combine, (a, b), axis=1)

    c = jax.nn.sigmoid(gate) * 0.1

    def gated(x, y):  # x + y + c x y: associative for any c (its terms are symmetric in x, y, z)
        return x + y + c * x * y

    back = jax.lax.associative_scan(gated, b * 0.5, reverse=True, axis=1)
    peak = jax.lax.associative_scan(jnp.fmax, b, axis=1)
    return (h * back + peak).mean()


@mesh(model=8, rules={"time": "model"})
def ssm8(a: Tensor["batch", "time", "state"], b: Tensor["batch", "time", "state"]):
    _, h = jax.lax.associative_scan(lambda l, r: (l[0] * r[0], r[0] * l[1] + r[1]), (a, b), axis=-2)
    return (h ** 2).sum()


def inputs():
    rng = np.random.default_rng(0)
    a = rng.uniform(0.5, 1.0, size=(4, 16, 6)).astype(np.float32)
    b = rng.normal(size=(4, 16, 6)).astype(np.float32)
    gate = rng.normal(size=(6,)).astype(np.float32)
    return {"ssm": (a, b, gate), "ssm8": (a, b)}

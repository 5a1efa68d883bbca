"""Default values are evaluated when the ``def`` runs: ``x0=G0`` of the ``@mesh`` function and ``w=W, c=C,
axis=AX`` of a helper keep the array and constants they were defined with after the module's ``G0``, ``W``, ``C``
and ``AX`` are rebound from outside (a schedule, a notebook cell).  meshify runs its rewritten ``def`` later (at the
first call, and again when a constant the rewrite read is rebound), so such a default read the new value; found by
the fuzz (seed 4401, program 702: an array default and a constant rebound, 16 of 16 values wrong)."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"
GRAD = False

G0 = jnp.asarray(np.linspace(-1.0, 1.0, 2 * 32).reshape(2, 32), dtype=jnp.float32)
W: Tensor["batch", "w"] = jnp.asarray(np.linspace(0.5, 1.5, 2 * 32).reshape(2, 32), dtype=jnp.float32)
C = 0.25
AX = 1


def helper(x1, w: Tensor["batch", "w"] = W, c=C, axis=AX):
    return jnp.sum(w * x1, axis=axis) * c


@mesh(model=8, rules={"w": "model"})
def f(x1: Tensor["w"], x0: Tensor["batch", "w"] = G0) -> Tensor["batch"]:
    return jnp.matmul(x0, x1) + helper(x1) + C


def inputs():
    return {}


def scenario(mod, pick):
    x1 = jnp.asarray(np.random.default_rng(0).standard_normal(32), jnp.float32)
    # (each run starts from the values as defined: the reference and the sharded runs share the module)
    mod.G0, mod.W, mod.C, mod.AX = G0 + 0, W + 0, 0.25, 1
    out = [pick(mod.f)(x1)]
    mod.G0, mod.W, mod.C, mod.AX = G0 * -1.5, W * 3.0, 2.0, 0
    out.append(pick(mod.f)(x1))
    out.append(pick(mod.f)(x1, G0 * 2))
    mod.G0, mod.W, mod.C, mod.AX = G0, W, 0.25, 1
    return out

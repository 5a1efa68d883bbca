"""A module alias of a reduction (``total = jnp.sum``) whose name a helper also takes as a parameter
(``def gate(x, total)``, passed ``jnp.max``): inside that helper the name is the parameter, everywhere else
the module's alias, called by jnp.sum's rule (a sum over a split dim completed).  Before, the name was no
alias anywhere and ``total(h)`` was taken for an elementwise function (a misleading refusal at the return)."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"

total = jnp.sum


def gate(x, total):
    return total(x, axis=-1, keepdims=True)


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def f(x: Tensor["batch", "d"], w: Tensor["d", "d_ff"]) -> Tensor["batch"]:
    h = x @ w
    return total(h * h, axis=-1) + gate(h, jnp.max)[:, 0]


def inputs():
    rng = np.random.default_rng(3609)
    return rng.standard_normal((4, 8)).astype(np.float32), rng.standard_normal((8, 16)).astype(np.float32)

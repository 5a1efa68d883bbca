"""A module-level alias of an activation, as configs write it (``ACT = jax.nn.gelu``), called on a split
activation; the scenario rebinds it from outside (``mod.ACT = jax.nn.relu``) and calls again: the program
is keyed on what ACT holds and checks it is elementwise when traced.  Before, "ACT has no meshify rule"
with a fix to unsplit batch."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"
GRAD = False  # (scenario: gradients below)

ACT = jax.nn.gelu


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def f(x: Tensor["batch", "d"], w1: Tensor["d", "d_ff"], w2: Tensor["d_ff", "d"]) -> Tensor["batch", "d"]:
    return ACT(x @ w1) @ w2 + ACT(x)


def scenario(mod, pick):
    x, w1, w2 = inputs()
    first = pick(mod.f)(x, w1, w2)
    grads = jax.grad(lambda a, b: jnp.sum(pick(mod.f)(a, b, w2) ** 2), argnums=(0, 1))(x, w1)
    mod.ACT = jax.nn.relu
    try:
        second = pick(mod.f)(x, w1, w2)
    finally:
        mod.ACT = jax.nn.gelu
    return first, grads, second


def inputs():
    rng = np.random.default_rng(302)
    return (rng.standard_normal((4, 8)).astype(np.float32), rng.standard_normal((8, 16)).astype(np.float32),
            rng.standard_normal((16, 8)).astype(np.float32))

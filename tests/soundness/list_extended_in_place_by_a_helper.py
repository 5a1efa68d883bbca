"""``hs += [y]`` in a helper, on its caller's list: it changes in place, so the caller's ``hs[-1]`` is ``y``,
where meshify kept the caller's list as it was (the first item's layout, a wrong shape).  ``+=`` on a list the
function did not make (or handed on) is refused; ``hs = hs + [y]`` makes a new one.  Found by the attack on
lists (session 19)."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "error"


def add_hidden(hs, y):
    hs += [y]
    return y


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def f(x: Tensor["batch", "d_ff"], w: Tensor["d_ff", "d_model"]):
    hs = [x]
    add_hidden(hs, jnp.tanh(x @ w))
    return hs[-1]


def inputs():
    rng = np.random.default_rng(450)
    return rng.standard_normal((4, 16)).astype(np.float32), rng.standard_normal((16, 8)).astype(np.float32)

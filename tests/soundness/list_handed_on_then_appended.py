"""A list handed on before it is appended to (``gs = hs``; ``state = (hs, 1)``): in Python both names hold the
same list, so ``len(gs)`` and ``gs[-1]`` see the append, where meshify kept what ``gs`` held when it was bound
(the branch Python does not take, a wrong shape).  Appends after a hand-off are refused (in a loop too: the next
iteration appends after it, tests/test_closures.py).  Found by the attack on lists (session 19)."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "error"


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def f(x: Tensor["batch", "d_ff"]):
    hs = [x]
    gs = hs
    hs.append(x * 2)
    if len(gs) == 2:
        out = x.sum(-1)
    else:
        out = jnp.tanh(x).mean(0)
    return out


def inputs():
    return (np.random.default_rng(449).standard_normal((4, 16)).astype(np.float32),)

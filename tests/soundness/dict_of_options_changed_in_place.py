"""A dict of options changed in place (``kw.update(mode="mean")``, ``kw.setdefault``, ``kw.pop``) and passed on
(``head(x, **kw)``, whose ``if mode == "sum":`` branches leave other dims): meshify read the dict as written, so
the helper took the branch Python does not take (a wrong shape), or generated code read a key ``pop`` had
removed (a KeyError).  A dict, list or set of Python values changed in place is unknown from there on (was
refused here: both branches are rewritten, and leave other dims).  Found by the attack on lists (session 19).
Now ``kw.update(mode="mean")`` of a dict display this function made, by a key meshify knows, is followed: ``kw``
holds ``{"mode": "mean"}`` after it, and the helper is rewritten for the branch Python takes."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


def head(x, mode="sum"):
    if mode == "sum":
        out = x.sum(-1)
    else:
        out = jnp.tanh(x).mean(0)
    return out


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def f(x: Tensor["batch", "d_ff"]):
    kw = {"mode": "sum"}
    kw.update(mode="mean")
    return head(x, **kw)


def inputs():
    return (np.random.default_rng(451).standard_normal((4, 16)).astype(np.float32),)

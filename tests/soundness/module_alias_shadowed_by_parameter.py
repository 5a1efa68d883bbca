"""A module-level alias (``act = jax.nn.gelu``) whose name a helper also takes as a parameter (``def
block(x, w, act=jax.nn.relu)``), and one bound only inside a top-level ``if``: in the helper the name is the
parameter's value, so neither is read as the alias; the calls run as the functions their names hold when
traced (``mr.elementwise``), relu in the helper, gelu or tanh at the top."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"

act = jax.nn.gelu
USE_TANH = True
if USE_TANH:
    squash = jnp.tanh
else:
    squash = jax.nn.sigmoid


def block(x, w, act=jax.nn.relu):
    return act(x @ w)


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def f(x: Tensor["batch", "d"], w1: Tensor["d", "d_ff"], w2: Tensor["d_ff", "d"]) -> Tensor["batch", "d"]:
    h = block(x, w1) + act(x @ w1)
    return squash(h @ w2)


def inputs():
    rng = np.random.default_rng(3602)
    return (rng.standard_normal((4, 8)).astype(np.float32), rng.standard_normal((8, 16)).astype(np.float32),
            rng.standard_normal((16, 8)).astype(np.float32))

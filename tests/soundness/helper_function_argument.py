"""Activations passed to a helper as arguments, as public model code writes them: ``mlp(x, w1, w2,
jax.nn.gelu)``, a module def (``swish``), a default (``act=jax.nn.relu``), and a normaliser called with
its own axis (``fn(h, axis=-1)`` with ``jax.nn.softmax`` over a split dim).  Each call of ``act(...)``
in the helper is the call of what was passed (its rule, or the def specialised in turn), one version
of the helper per function; before, ``act(h)`` was refused ("calling local value")."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


def swish(x):
    return x * jax.nn.sigmoid(x)


def mlp(x, w1, w2, act=jax.nn.relu):
    return act(x @ w1) @ w2


def normalised(h, fn):
    return fn(h, axis=-1)


def outer(x, w1, w2, act):
    return mlp(x, w1, w2, act) * 0.5


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def f(x: Tensor["batch", "d"], w1: Tensor["d", "d_ff"], w2: Tensor["d_ff", "d"]) -> Tensor["batch", "d"]:
    h = mlp(x, w1, w2, jax.nn.gelu) + mlp(x, w1, w2, swish) + mlp(x, w1, w2) + outer(x, w1, w2, jnp.tanh)
    return h + jnp.sum(normalised(x @ w1, jax.nn.softmax) @ w2, axis=0)


def inputs():
    rng = np.random.default_rng(171)
    return (rng.standard_normal((4, 8)).astype(np.float32), rng.standard_normal((8, 16)).astype(np.float32) * 0.3,
            rng.standard_normal((16, 8)).astype(np.float32) * 0.3)

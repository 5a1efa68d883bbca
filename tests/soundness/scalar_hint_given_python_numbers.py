"""A helper's ``pos: Tensor[()]`` given a Python number (``step(3, x)``, ``step(0.5, x)``) or a loop's index
(``fori_loop(0, 3, lambda i, c: step(i, c))``): a scalar on every device, as JAX takes it (was refused:
"step() hints pos as [] but the caller passes a Python value", session 29's attack).  Against a partial
sum, in ``jnp.where``, under ``jax.grad``, in float16 (a Python number stays weakly typed)."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


def step(pos: Tensor[()], x):
    return x * pos + jnp.sum(x) * pos


def gate(pos: Tensor[()], x):
    return jnp.where(pos > 1, x, -x)


@mesh(batch=2, model=4, rules={"d": "model"})
def numbers(x: Tensor["batch", "d"]):
    return step(3, x), step(0.5, x), gate(2, x), gate(0.5, x)


@mesh(batch=2, model=4, rules={"d": "model"})
def loop_index(x: Tensor["batch", "d"]):
    return jax.lax.fori_loop(0, 3, lambda i, c: step(i, c) * 0.1, x)


@mesh(batch=2, model=4, rules={"d": "model"})
def grad_through(x: Tensor["batch", "d"]):
    return jax.grad(lambda y: jnp.sum(jax.lax.fori_loop(0, 2, lambda i, c: step(i, c) * 0.5, y)))(x)


def inputs():
    x = np.random.default_rng(97).standard_normal((4, 16)).astype(np.float32)
    h = x.astype(np.float16)
    return {"numbers": (h,), "loop_index": (x,), "grad_through": (h,)}

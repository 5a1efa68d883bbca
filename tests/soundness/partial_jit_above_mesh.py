"""@functools.partial(jax.jit, static_argnums=3) above @mesh: a static head count, the sharded
program jitted by the user."""
import functools

import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@functools.partial(jax.jit, static_argnums=3)
@mesh(batch=2, model=4, rules={"heads": "model"})
def f(x: Tensor["batch", "d"], w: Tensor["d", "e"], v: Tensor["e", "d"], n_heads: int) -> Tensor["batch", "d"]:
    h: Tensor["batch", "heads", "d_head"] = (x @ w).reshape(x.shape[0], n_heads, -1)
    return jnp.tanh(h).reshape(x.shape[0], -1) @ v


def scenario(mod, pick):
    x, w, v = inputs()
    fn = pick(mod.f)
    grad = jax.grad(lambda a: jnp.sum(fn(a, w, v, 4) ** 2))(x)
    return fn(x, w, v, 4), fn(x, w, v, 8), grad


def inputs():
    rng = np.random.default_rng(1424)
    return (rng.standard_normal((4, 8)).astype(np.float32), rng.standard_normal((8, 16)).astype(np.float32),
            rng.standard_normal((16, 8)).astype(np.float32))

"""jax.jit(f, static_argnames="n_heads") around a @mesh function with a static head count, then its gradient."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"d": "model", "heads": "model"})
def f(x: Tensor["batch", "d"], n_heads: int) -> Tensor["batch", "heads"]:
    h: Tensor["batch", "heads", "d_head"] = x.reshape(x.shape[0], n_heads, -1)
    return jnp.sum(jnp.tanh(h), axis=-1)


def scenario(mod, pick):
    (x,) = inputs()
    fn = jax.jit(pick(mod.f), static_argnames="n_heads")
    grad = jax.grad(lambda v: jnp.sum(fn(v, n_heads=4) ** 2))(x)
    return fn(x, n_heads=4), fn(x, n_heads=8), grad


def inputs():
    return (np.random.default_rng(165).standard_normal((4, 16)).astype(np.float32),)

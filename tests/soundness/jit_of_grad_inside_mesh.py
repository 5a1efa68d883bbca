"""Transforms composed inside a @mesh function: ``jax.jit(jax.grad(loss_fn))(w, x)`` and
``jax.checkpoint(jax.value_and_grad(loss_fn, argnums=(0, 1)))(w, x)``: the inner transform rewritten for the
operands, the outer kept around it (jit inside the shard_map changes no value).  The loss is a mean over a
split batch and a split d_ff (each device's partial loss; shard_map's transposes sum the pieces).  Before,
"'jax.grad(loss_fn)' is not a function meshify can follow into" (found by the second attack of session 16)."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


def loss_fn(w, x):
    return jnp.mean(jnp.tanh(x @ w) ** 2)


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def f(x: Tensor["batch", "d"], w: Tensor["d", "d_ff"]):
    g = jax.jit(jax.grad(loss_fn))(w, x)
    loss, (gw, gx) = jax.checkpoint(jax.value_and_grad(loss_fn, argnums=(0, 1)))(w, x)
    return w - 0.1 * g, loss, gw * 2.0, gx


def inputs():
    rng = np.random.default_rng(409)
    return rng.standard_normal((4, 8)).astype(np.float32), rng.standard_normal((8, 16)).astype(np.float32) * 0.5

"""Transforms composed inside a @mesh function: ``jax.jit(jax.grad(loss_fn))(w, x)`` and
``jax.checkpoint(jax.value_and_grad(loss_fn, argnums=(0, 1)))(w, x)``: the inner transform rewritten for the
operands, the outer kept around it (jit inside the shard_map changes no value).  The loss is a mean over a
split batch and a split d_ff (each device's partial loss; shard_map's transposes sum the pieces).  Before,
"'jax.grad(loss_fn)' is not a function meshify can follow into" (found by the second attack of session 16).
g: bfloat16, ``has_aux`` with a metrics dict holding partial sums (completed in the loss function), under
``jax.jit``: the loss keeps bfloat16 (it came back float32 once: the inner call's dtypes were not the
user's call's)."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"
TOL = 2e-2


def loss_fn(w, x):
    return jnp.mean(jnp.tanh(x @ w) ** 2)


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def f(x: Tensor["batch", "d"], w: Tensor["d", "d_ff"]):
    g = jax.jit(jax.grad(loss_fn))(w, x)
    loss, (gw, gx) = jax.checkpoint(jax.value_and_grad(loss_fn, argnums=(0, 1)))(w, x)
    return w - 0.1 * g, loss, gw * 2.0, gx


def loss_aux(w, x):
    h = jnp.tanh(x @ w)
    return jnp.mean(h ** 2), {"acc": jnp.mean(h > 0), "hmean": jnp.mean(h, axis=0)}


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def g(x: Tensor["batch", "d"], w: Tensor["d", "d_ff"]):
    (loss, aux), grad = jax.jit(jax.value_and_grad(loss_aux, has_aux=True))(w, x)
    return loss, aux["acc"], aux["hmean"], w - 0.1 * grad


def inputs():
    rng = np.random.default_rng(409)
    x, w = rng.standard_normal((4, 8)), rng.standard_normal((8, 16)) * 0.5
    return {"f": (x.astype(np.float32), w.astype(np.float32)),
            "g": (x.astype(jnp.bfloat16), w.astype(jnp.bfloat16))}

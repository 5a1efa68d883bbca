"""A training step differentiated inside the @mesh function, as training code is written:
``loss, grads = jax.value_and_grad(loss_fn)(params, x, y)`` over TypedDict params with d_ff split over
'model' and the batch over 'batch' (each device's loss is its partial sum: the gradient of the partial losses
is the gradient of their sum), ``jax.value_and_grad(..., argnums=(0, 1), has_aux=True)``, ``jax.grad`` of a
lambda over split inputs, an SGD update by ``jax.tree.map``; the new params returned in a tuple with the loss
(a dict, its layouts kept).  Before, "jax.value_and_grad has no meshify rule" (found by the user-style attack).
The step is compared forward; its own gradient is not taken again (GRAD = False)."""
from typing import TypedDict

import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"
GRAD = False
LR = 0.1


class Params(TypedDict):
    w1: Tensor["d_in", "d_ff"]
    b1: Tensor["d_ff"]
    w2: Tensor["d_ff", "d_out"]


def loss_fn(params, x, y):
    h = jax.nn.relu(x @ params["w1"] + params["b1"])
    return jnp.mean((h @ params["w2"] - y) ** 2)


def loss_aux(w1, w2, x, y):
    pred = jnp.tanh(x @ w1) @ w2
    return jnp.sum((pred - y) ** 2) / x.shape[0], jnp.max(jnp.abs(pred))


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def f(params: Params, x: Tensor["batch", "d_in"], y: Tensor["batch", "d_out"]):
    loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
    new = jax.tree.map(lambda p, g: p - LR * g, params, grads)
    (loss2, peak), (g1, g2) = jax.value_and_grad(loss_aux, argnums=(0, 1), has_aux=True)(
        params["w1"], params["w2"], x, y)
    gx = jax.grad(lambda t: jnp.sum(jnp.tanh(t @ params["w1"])))(x)
    return loss + loss2 + peak, new, g1, g2, gx


def inputs():
    rng = np.random.default_rng(321)
    f = lambda *s: (rng.standard_normal(s) * 0.5).astype(np.float32)  # noqa: E731
    return {"w1": f(8, 16), "b1": f(16), "w2": f(16, 4)}, f(4, 8), f(4, 4)

"""Nested tuples and lists returned without a hint, as training code returns them: ``return loss, (logits,
aux)`` for ``jax.value_and_grad(has_aux=True)``, an aux tuple held by a name with a partial sum in it, a
list built item by item beside the last hidden state, a dict holding such a list, float16 partial sums."""

import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def loss_fn(x: Tensor["batch", "d_model"], w: Tensor["d_model", "d_ff"], v: Tensor["d_ff", "d_model"]):
    h = jnp.tanh(x @ w)
    out = h @ v  # partial over 'model'
    loss = jnp.mean(out ** 2)
    aux = (h.sum(-1), out)  # both items: one partial sum, one completed in place
    return loss, (out, [aux, h]), {"aux": aux}


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def encoder(x: Tensor["batch", "d_model"], w: Tensor["d_model", "d_ff"], v: Tensor["d_ff", "d_model"]):
    hidden = [x]
    x = x + jnp.tanh(x @ w) @ v
    hidden.append(x)
    x = x + jax.nn.gelu(x @ w) @ v
    hidden.append(x)
    return x, hidden, {"hidden_states": tuple(hidden[1:]), "first": hidden[0]}


def inputs():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(8, 16)).astype(np.float32)
    w = (rng.normal(size=(16, 32)) / 4).astype(np.float32)
    v = (rng.normal(size=(32, 16)) / 4).astype(np.float32)
    return {"loss_fn": (x, w, v), "encoder": (x.astype(np.float16), w.astype(np.float16), v.astype(np.float16))}


TOL = 2e-3


def scenario(mod, pick):
    args = [jnp.asarray(a) for a in inputs()["loss_fn"]]
    (loss, aux), grads = jax.value_and_grad(lambda w: (lambda r: (r[0], r[1:]))(pick(mod.loss_fn)(args[0], w, args[2])),
                                           has_aux=True)(args[1])
    return loss, aux, grads, pick(mod.encoder)(*[jnp.asarray(a) for a in inputs()["encoder"]])

"""A train step returning ``jax.value_and_grad(loss)(params, x)`` as it comes (the loss a mean over the split
batch, so a partial sum inside a tuple the code does not spell out): without a return hint (each partial item
completed where it leaves, ``(lambda r: (mr.psum(r[0], ...), r[1]))(...)``) and under ``-> tuple[Tensor[()],
Params]`` (read item by item as a tuple literal would be), in float32 and bfloat16.  Before, "whose item 0 is a
partial sum, and has no return hint" and "the return hint names a tuple of 2 values but ... is not a tuple literal"
(the DLRM attack); a helper's ``return h, jnp.mean(h, axis=0)`` returned as it comes likewise (was refused: "unpack
it and return the items")."""
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"
TOL = 2e-2


class Params(NamedTuple):
    w: Tensor["d", "k"]


def loss_fn(w, x):
    return jnp.mean(jnp.tanh(x @ w) ** 2)


def loss_p(p: Params, x):
    return jnp.mean(jnp.tanh(x @ p.w) ** 2)


@mesh(batch=8)
def step(w: Tensor["d", "k"], x: Tensor["batch", "d"]):
    return jax.value_and_grad(loss_fn)(w, x)


@mesh(batch=2, model=4, rules={"k": "model"})
def step_params(p: Params, x: Tensor["batch", "d"]) -> tuple[Tensor[()], Params]:
    return jax.value_and_grad(loss_p)(p, x)


@mesh(batch=8)
def step_bf16(w: Tensor["d", "k"], x: Tensor["batch", "d"]):
    return jax.value_and_grad(loss_fn)(w.astype(jnp.bfloat16), x.astype(jnp.bfloat16))


def pair(h):
    return h, jnp.mean(h, axis=0)


@mesh(batch=2)
def helper_pair(x: Tensor["batch", "d"]):
    return pair(x)


def inputs():
    rng = np.random.default_rng(79)
    w = rng.standard_normal((4, 8)).astype(np.float32) / 2
    x = rng.standard_normal((16, 4)).astype(np.float32)
    return {"step": (w, x), "step_params": (Params(w), x), "step_bf16": (w, x), "helper_pair": (x,)}

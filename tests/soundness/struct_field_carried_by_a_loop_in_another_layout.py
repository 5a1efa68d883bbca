"""A NamedTuple carried by a Python loop whose body leaves a field in another layout than the first iteration finds
it (``state = state._replace(h=jnp.tanh(state.h @ w))``: ``h`` enters split along ``ff`` and leaves whole, a
``jnp.sum`` field enters whole and the body leaves it a partial sum it completes at the end of the body): the field
is converted once before the loop (``state = state._replace(h=mr.all_gather(state.h, ...))``), as a plain name or
a dict's value is, so every iteration finds it as the body leaves it; a dataclass's with ``dataclasses.replace``
(``d``), a state a helper steps (``h``), nested loops (``n``).  2x4 and 1x8, float32 and float16, negative inputs,
gradients.  Before: refused ("state.h is [batch/'batch', ff/'model'] when this loop's body starts and
[batch/'batch', ff] at its end")."""
import dataclasses
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"
TOL = 2e-2


class State(NamedTuple):
    h: Tensor["batch", "ff"]
    total: Tensor["ff"]


@jax.tree_util.register_dataclass
@dataclasses.dataclass
class DState:
    h: Tensor["batch", "ff"]
    total: Tensor["ff"]


def step(state, w):
    h = jnp.tanh(state.h @ w)
    return state._replace(h=h, total=jnp.tanh(state.total) + jnp.sum(h, axis=0))


def run(x, w, n):
    state = State(h=x, total=jnp.zeros((x.shape[1],), x.dtype))
    for _ in range(n):
        state = state._replace(h=jnp.tanh(state.h @ w))
        state = state._replace(total=state.total + jnp.sum(state.h, axis=0))
    return state.h, state.total


@mesh(batch=2, model=4, rules={"ff": "model"})
def f(x: Tensor["batch", "ff"], w: Tensor["ff", "ff"]):
    return run(x, w, 3)


@mesh(batch=1, model=8, rules={"ff": "model"})
def g(x: Tensor["batch", "ff"], w: Tensor["ff", "ff"]):
    state = State(h=x, total=jnp.zeros((x.shape[1],), x.dtype))
    for i in range(3):
        state = state._replace(h=jnp.tanh(state.h @ w) * (i + 1))
    return state.h


@mesh(batch=2, model=4, rules={"ff": "model"})
def f16(x: Tensor["batch", "ff"], w: Tensor["ff", "ff"]):
    return run(x, w, 2)


@mesh(batch=2, model=4, rules={"ff": "model"})
def d(x: Tensor["batch", "ff"], w: Tensor["ff", "ff"]):
    state = DState(h=x, total=jnp.sum(x, axis=0))
    for _ in range(3):
        state = dataclasses.replace(state, h=jnp.tanh(state.h @ w))
    return state.h, state.total


@mesh(batch=2, model=4, rules={"ff": "model"})
def h(x: Tensor["batch", "ff"], w: Tensor["ff", "ff"]):
    state = State(h=x, total=jnp.sum(x, axis=0))
    for _ in range(3):
        state = step(state, w)
    return state


@mesh(batch=1, model=8, rules={"ff": "model"})
def n(x: Tensor["batch", "ff"], w: Tensor["ff", "ff"], ws: list[Tensor["ff", "ff"]]):
    state = State(h=x, total=jnp.sum(x, axis=0))
    for v in ws:
        for _ in range(2):
            state = state._replace(h=jnp.tanh(state.h @ v) + state.h)
        state = state._replace(total=state.total * 0.5)
    return state.h, state.total


def inputs():
    rng = np.random.default_rng(1504)
    x = rng.standard_normal((4, 16)).astype(np.float32) - 0.3
    w = (rng.standard_normal((16, 16)) * 0.3).astype(np.float32)
    x16, w16 = x.astype(np.float16), w.astype(np.float16)
    ws = [(rng.standard_normal((16, 16)) * 0.3).astype(np.float16) for _ in range(2)]
    return {"f": (x, w), "g": (x, w), "f16": (x16, w16), "d": (x, w), "h": (x16, w16), "n": (x16, w16, ws)}

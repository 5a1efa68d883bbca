"""Optional bias fields of parameter pytrees (``b: Tensor["f"] | None = None`` in a NamedTuple, a TypedDict's key
holding None), as configurable models write them: each call's None pattern picks a version of the program, every
``Linear.b`` of a call one choice; forward, a training step returning the params (None fields kept by
``jax.tree.map``) and gradients, for every pattern of the three classes' optional fields."""
import itertools
from typing import NamedTuple, Optional, TypedDict

import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


class Linear(NamedTuple):
    w: Tensor["d", "f"]
    b: Optional[Tensor["f"]] = None


class Down(NamedTuple):
    w: Tensor["f", "d"]
    b: Tensor["d"] | None = None


class Norm(TypedDict):
    scale: Tensor["d"]
    bias: Tensor["d"] | None


class Block(NamedTuple):
    norm: Norm
    up: Linear
    down: Down


class Gated(NamedTuple):
    up: Linear
    gate: Optional[Linear] = None


def dense(p, x):
    y = x @ p.w
    return y if p.b is None else y + p.b


def layer_norm(p, x):
    x = (x - x.mean(-1, keepdims=True)) / jnp.sqrt(x.var(-1, keepdims=True) + 1e-5) * p["scale"]
    if p["bias"] is not None:
        x = x + p["bias"]
    return x


def forward(p, x):
    return x + dense(p.down, jax.nn.gelu(dense(p.up, layer_norm(p.norm, x))))


@mesh(data=2, model=4, rules={"batch": "data", "f": "model"})
def block(p: Block, x: Tensor["batch", "d"]) -> Tensor["batch", "d"]:
    return forward(p, x)


@mesh(data=2, model=4, rules={"batch": "data", "f": "model"})
def step(p: Block, x: Tensor["batch", "d"]) -> Block:
    grads = jax.grad(lambda q: jnp.mean(forward(q, x) ** 2))(p)
    return jax.tree.map(lambda a, g: a - 0.1 * g, p, grads)


@mesh(data=2, model=4, rules={"batch": "data", "f": "model"})
def scaled(p: Gated, x: Tensor["batch", "d"]) -> Gated:
    # (a hinted return of an optional nested struct, None in some calls)
    h = dense(p.up, x)
    g = h if p.gate is None else h * jax.nn.sigmoid(dense(p.gate, x))
    return jax.tree.map(lambda a: a * jnp.mean(g), p)


def scenario(mod, pick):
    rng = np.random.default_rng(62)
    r = lambda *s: jnp.asarray(rng.standard_normal(s).astype(np.float32))  # noqa: E731
    x = r(8, 8)
    out = []
    for nb, ub, db in itertools.product((True, False), repeat=3):
        p = mod.Block(mod.Norm(scale=r(8), bias=r(8) if nb else None), mod.Linear(r(8, 16), r(16) if ub else None),
                      mod.Down(r(16, 8), r(8) if db else None))
        out.append((pick(mod.block)(p, x), pick(mod.step)(p, x),
                    jax.grad(lambda q: jnp.sum(pick(mod.block)(q, x) ** 2))(p)))
    for gate in (None, mod.Linear(r(8, 16), r(16))):
        out.append(pick(mod.scaled)(mod.Gated(mod.Linear(r(8, 16), r(16)), gate), x))
    return out


def inputs():
    return {}

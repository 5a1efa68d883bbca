"""Dataclass pytrees with static fields, as JAX code declares them: ``register_dataclass(meta_fields=[...])``
(a ``functools.partial`` decorator) and ``dataclasses.field(metadata={"static": True})`` under
``@jax.tree_util.register_dataclass``.  Refused before at the hint ("field Layer.act has no Tensor hint"); now the
static fields are Python values when traced (a branch on one is kept as written), each call's values key the
program, and a returned dataclass (rebuilt, ``jax.tree.map``-ed, or holding a partial sum) leaves with the static
values its result holds.  Called with other static values on a second call."""
import dataclasses
import functools

import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@functools.partial(jax.tree_util.register_dataclass, data_fields=["w", "b"], meta_fields=["act", "scale"])
@dataclasses.dataclass
class Layer:
    w: Tensor["d", "f"]
    b: Tensor["f"]
    act: str = "tanh"
    scale: float = 0.5


@jax.tree_util.register_dataclass
@dataclasses.dataclass
class Norm:
    g: Tensor["f"]
    eps: float = dataclasses.field(default=1e-5, metadata={"static": True})


def apply(p: Layer, x):
    h = x @ p.w + p.b
    if p.act == "tanh":
        h = jnp.tanh(h)
    else:
        h = jax.nn.relu(h)
    return h * p.scale


@mesh(batch=2, model=4, rules={"f": "model"})
def forward(x: Tensor["batch", "d"], p: Layer, n: Norm) -> Tensor["batch", "f"]:
    h = apply(p, x)
    return h * n.g / jnp.sqrt(jnp.mean(h * h, axis=-1, keepdims=True) + n.eps)


@mesh(batch=2, model=4, rules={"f": "model"})
def step(x: Tensor["batch", "d"], p: Layer):
    def loss(p):
        return jnp.mean(apply(p, x) ** 2)

    g = jax.grad(loss)(p)
    return jax.tree.map(lambda a, b: a - 0.1 * b, p, g)


@mesh(batch=2, model=4, rules={"d": "model"})
def rebuilt(x: Tensor["batch", "d"], p: Layer):
    out = Layer(w=p.w * 2.0, b=jnp.sum(x @ p.w, axis=0), act=p.act, scale=p.scale * 2.0)  # b: a partial sum
    return out, Layer(w=p.w, b=p.b + 1.0, act="relu")


def scenario(mod, pick):
    rng = np.random.default_rng(96)
    x = jnp.asarray(rng.standard_normal((4, 8)).astype(np.float32))
    w = jnp.asarray(rng.standard_normal((8, 16)).astype(np.float32))
    b = jnp.asarray(rng.standard_normal((16,)).astype(np.float32))
    g = jnp.asarray(rng.standard_normal((16,)).astype(np.float32))
    out = {}
    for act, scale, eps in (("tanh", 0.5, 1e-5), ("relu", 2.0, 0.1), ("tanh", 0.5, 1e-5)):
        p, n = mod.Layer(w, b, act, scale), mod.Norm(g, eps)
        key = f"{act}-{scale}"
        out[f"forward-{key}"] = pick(mod.forward)(x, p, n)
        out[f"grad-{key}"] = jax.grad(lambda p, n: jnp.sum(pick(mod.forward)(x, p, n) ** 2), argnums=(0, 1))(p, n)
        new = pick(mod.step)(x, p)
        out[f"step-{key}"] = (new, new.act, new.scale)
        r, s = pick(mod.rebuilt)(x, p)
        out[f"rebuilt-{key}"] = (r, r.act, r.scale, s, s.act, s.scale)
    return out


def inputs():
    return {}

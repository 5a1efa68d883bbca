"""A training step over registered dataclass parameters that returns them: ``-> Params`` with
``jax.tree.map``, no hint, a constructor call ``Params(wa=..., wz=...)`` and ``dataclasses.replace``.  Before: "return
hint 'Params' is not a Tensor hint", "a dataclass result is not rebuilt by meshify yet", and no rule for the
constructor and ``dataclasses.replace`` (attack on parameter containers)."""
import dataclasses

import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@jax.tree_util.register_dataclass
@dataclasses.dataclass
class Params:
    wa: Tensor["d", "f"]
    wz: Tensor["d", "f"]


def loss(p, x):
    return jnp.sum(jnp.tanh(x @ p.wa + 2 * (x @ p.wz)))


@mesh(data=2, model=4, rules={"batch": "data", "f": "model"})
def hinted(params: Params, x: Tensor["batch", "d"]) -> Params:
    g = jax.grad(loss)(params, x)
    return jax.tree.map(lambda a, b: a - 0.1 * b, params, g)


@mesh(data=2, model=4, rules={"batch": "data", "f": "model"})
def unhinted(params: Params, x: Tensor["batch", "d"]):
    g = jax.grad(loss)(params, x)
    return jax.tree.map(lambda a, b: a - 0.1 * b, params, g), loss(params, x)


@mesh(data=2, model=4, rules={"batch": "data", "f": "model"})
def built(params: Params, x: Tensor["batch", "d"]):
    g = jax.grad(loss)(params, x)
    return Params(wa=params.wa - 0.1 * g.wa, wz=params.wz - 0.1 * g.wz)


@mesh(data=2, model=4, rules={"batch": "data", "f": "model"})
def replaced(params: Params, x: Tensor["batch", "d"]) -> Params:
    g = jax.grad(loss)(params, x)
    return dataclasses.replace(params, wa=params.wa * 0.5 - g.wa)


def scenario(mod, pick):
    rng = np.random.default_rng(79)
    p = mod.Params(rng.standard_normal((8, 16)).astype(np.float32), rng.standard_normal((8, 16)).astype(np.float32))
    x = rng.standard_normal((8, 8)).astype(np.float32)
    return {name: pick(getattr(mod, name))(p, x) for name in ("hinted", "unhinted", "built", "replaced")}


def inputs():
    return {}

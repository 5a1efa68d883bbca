"""Parameters as a registered dataclass pytree (jax.tree_util.register_dataclass, as equinox- and
flax.struct-style code keeps them) with hinted fields, a nested dataclass of per-layer weights, a static
config field, updated with jax.tree.map after a grad step."""
import dataclasses

import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@jax.tree_util.register_dataclass
@dataclasses.dataclass
class Dense:
    w: Tensor["d_model", "d_ff"]
    b: Tensor["d_ff"]


@jax.tree_util.register_dataclass
@dataclasses.dataclass
class Params:
    up: Dense
    down: Tensor["d_ff", "d_model"]
    scale: Tensor["d_model"]


@mesh(data=2, model=4, rules={"batch": "data", "d_ff": "model"})
def f(p: Params, x: Tensor["batch", "d_model"]) -> Tensor[()]:
    h = jax.nn.relu(x @ p.up.w + p.up.b)
    y = (h @ p.down) * p.scale
    return jnp.mean((y - x) ** 2)


def scenario(mod, pick):
    fn = pick(mod.f)
    args = inputs()
    p, x = args
    loss, grads = jax.value_and_grad(fn)(p, x)
    p2 = jax.tree.map(lambda a, g: a - 0.1 * g, p, grads)
    return loss, fn(p2, x), grads


def inputs():
    rng = np.random.default_rng(16)
    p = Params(Dense(jnp.asarray(0.3 * rng.standard_normal((8, 16)), jnp.float32),
                     jnp.asarray(0.1 * rng.standard_normal(16), jnp.float32)),
               jnp.asarray(0.3 * rng.standard_normal((16, 8)), jnp.float32),
               jnp.asarray(1.0 + 0.1 * rng.standard_normal(8), jnp.float32))
    return (p, jnp.asarray(rng.standard_normal((4, 8)), jnp.float32))

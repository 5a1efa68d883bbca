from typing import NamedTuple

import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


class Layer(NamedTuple):
    w1: Tensor["layers", "d_model", "d_ff"]
    w2: Tensor["layers", "d_ff", "d_model"]


def residual_mlp(x, p):
    return x + jnp.einsum("bf,fd->bd", jax.nn.relu(jnp.einsum("bd,df->bf", x, p.w1)), p.w2)


def step(x, p):
    return residual_mlp(x, p), None


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def stack(layers: Layer, x: Tensor["batch", "d_model"]) -> Tensor["batch", "d_model"]:
    x, _ = jax.lax.scan(step, x, layers)
    return x

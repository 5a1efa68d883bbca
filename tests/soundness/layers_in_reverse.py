"""Layers run in reverse, as decoders and backward passes written by hand do: ``for layer in reversed(p.layers)``
over a ``list[Layer]`` of each call's length and over a ``tuple`` of two layers.  Before: "reversed has no meshify
rule" (attack on parameter containers)."""
from typing import NamedTuple

import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


class Layer(NamedTuple):
    w: Tensor["d", "f"]
    v: Tensor["f", "d"]


class Stack(NamedTuple):
    layers: list[Layer]


@mesh(data=2, model=4, rules={"batch": "data", "f": "model"})
def f(p: Stack, x: Tensor["batch", "d"]):
    for layer in reversed(p.layers):
        x = x + jnp.tanh(x @ layer.w) @ layer.v
    for i, layer in enumerate(reversed(p.layers)):
        x = x * (1.0 + 0.1 * i) + jnp.sum(layer.w)
    return x


def scenario(mod, pick):
    rng = np.random.default_rng(82)
    make = lambda: mod.Layer(rng.standard_normal((4, 8)).astype(np.float32),  # noqa: E731
                             0.1 * rng.standard_normal((8, 4)).astype(np.float32))
    x = rng.standard_normal((4, 4)).astype(np.float32)
    return [pick(mod.f)(mod.Stack([make() for _ in range(3)]), x), pick(mod.f)(mod.Stack([make(), make()]), x)]


def inputs():
    return {}

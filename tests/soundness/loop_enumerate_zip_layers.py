"""Python loops over per-layer structs as model code writes them: ``for i, layer in enumerate(layers)``
(the index scaling the layer), ``enumerate(..., start=1)``, ``zip(range(n), layers)``, ``zip`` of two lists of
structs, ``enumerate(zip(...))`` unpacked as ``i, (a, b)``, and ``len(params["layers"])`` of a TypedDict's
list field; gradients through every layer.  Before, "enumerate has no meshify rule" with a fix to unsplit
d_ff."""
from typing import TypedDict

import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


class Layer(TypedDict):
    w: Tensor["d_model", "d_ff"]
    v: Tensor["d_ff", "d_model"]


class Params(TypedDict):
    layers: list[Layer]
    gates: list[Layer]


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def f(params: Params, x: Tensor["batch", "d_model"]) -> Tensor["batch", "d_model"]:
    h = x
    for i, layer in enumerate(params["layers"]):
        h = h + (i + 1) * 0.5 * jnp.tanh(h @ layer["w"]) @ layer["v"]
    for i, layer in enumerate(params["layers"], start=1):
        h = h * (1.0 / i) + jnp.tanh(h @ layer["w"]) @ layer["v"]
    for i, layer in zip(range(len(params["layers"])), params["layers"]):
        h = h + jnp.sin(h @ layer["w"] * i) @ layer["v"]
    for layer, gate in zip(params["layers"], params["gates"]):
        h = h + (jnp.tanh(h @ layer["w"]) * jax_sigmoid(h @ gate["w"])) @ gate["v"]
    for i, (layer, gate) in enumerate(zip(params["layers"], params["gates"])):
        h = h - 0.1 * i * jnp.tanh(h @ gate["w"]) @ layer["v"]
    return h / len(params["gates"])


def jax_sigmoid(z):
    return 1.0 / (1.0 + jnp.exp(-z))


def inputs():
    rng = np.random.default_rng(41)

    def layer():
        return {"w": (rng.standard_normal((4, 8)) * 0.3).astype(np.float32),
                "v": (rng.standard_normal((8, 4)) * 0.3).astype(np.float32)}

    return {"layers": [layer(), layer(), layer()], "gates": [layer(), layer(), layer()]}, \
        rng.standard_normal((4, 4)).astype(np.float32)

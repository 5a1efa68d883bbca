"""An optional pytree parameter tested with an early return, as adapters and caches are written
(``if lora is None: return x``), ``Optional[Lin]`` and ``Lin | None``, called with and without it.  Before: the
version for None walked the code after the return, which reads ``lora.w`` ("cannot infer the dims of 'lora.w'"),
though the same test written ``if lora is not None:`` worked (attack on parameter containers)."""
from typing import NamedTuple, Optional

import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


class Lin(NamedTuple):
    w: Tensor["d", "f"]
    b: Tensor["f"]


@mesh(data=2, model=4, rules={"batch": "data", "f": "model"})
def adapted(x: Tensor["batch", "d"], lora: Optional[Lin] = None):
    if lora is None:
        return x
    return x + jnp.tanh(x @ lora.w + lora.b) @ lora.w.T


@mesh(data=2, model=4, rules={"batch": "data", "f": "model"})
def piped(x: Tensor["batch", "d"], lora: Lin | None = None):
    if lora is not None:
        return x * 2.0 + jnp.tanh(x @ lora.w + lora.b) @ lora.w.T
    return x


def scenario(mod, pick):
    rng = np.random.default_rng(77)
    x = rng.standard_normal((8, 8)).astype(np.float32)
    lin = mod.Lin(rng.standard_normal((8, 16)).astype(np.float32), rng.standard_normal((16,)).astype(np.float32))
    return [pick(mod.adapted)(x), pick(mod.adapted)(x, lin), pick(mod.piped)(x), pick(mod.piped)(x, lin)]


def inputs():
    return {}

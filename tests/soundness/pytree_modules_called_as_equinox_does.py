"""Models written as Equinox modules are: pytree dataclasses and NamedTuples of hinted fields with a
``__call__`` and methods, called on the instance (``m(x)``, ``m.loss(x, y)``, ``self.mlp(self.norm(x))``, a
field that is itself a module), a ``@property`` computed from a field's shape (``self.width``: the global size,
as on one device), a list of blocks looped over in ``__call__`` or picked (``m.blocks[1](x)``).  Before, "calling local value 'm'" and
"m.loss has no meshify rule" with a fix to unsplit batch."""
import dataclasses
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@jax.tree_util.register_dataclass
@dataclasses.dataclass
class MLP:
    w1: Tensor["d", "d_ff"]
    w2: Tensor["d_ff", "d"]

    def __call__(self, x):
        return jax.nn.gelu(x @ self.w1) @ self.w2 / self.width

    @property
    def width(self):
        return self.w1.shape[1] / 16


class Norm(NamedTuple):
    scale: Tensor["d"]

    def __call__(self, x):
        return x * jax.lax.rsqrt(jnp.mean(x * x, axis=-1, keepdims=True) + 1e-6) * self.scale


@jax.tree_util.register_dataclass
@dataclasses.dataclass
class Block:
    norm: Norm
    mlp: MLP

    def __call__(self, x):
        return x + self.mlp(self.norm(x))


@jax.tree_util.register_dataclass
@dataclasses.dataclass
class Model:
    blocks: list[Block]
    out: Norm

    def __call__(self, x):
        for b in self.blocks:
            x = b(x)
        return self.out(x)

    def loss(self, x, y):
        return jnp.mean((self(x) - y) ** 2)


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def f(m: Model, x: Tensor["batch", "d"], y: Tensor["batch", "d"]):
    return m.loss(x, y), m(x), m.blocks[0].mlp(x), m.blocks[1](x)


def inputs():
    rng = np.random.default_rng(3604)

    def a(*shape):
        return (rng.standard_normal(shape) * 0.3).astype(np.float32)

    def block():
        return Block(Norm(a(8) + 1), MLP(a(8, 16), a(16, 8)))

    return Model([block(), block()], Norm(a(8) + 1)), a(4, 8), a(4, 8)

"""Session 36's additions attacked as a user writes them: one Equinox-style module class and module aliases
(``dot = jnp.dot``, ``total = functools.partial(jnp.sum, axis=-1)``, ``act = jax.nn.gelu``) shared by two
@mesh functions on a 2x4 and a 1x8 mesh, a jitted helper, a module-level hinted array, a method and a
property of the module, out-of-range and negative ids into a split table, float16 inputs with a NaN."""
import dataclasses
import functools

import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"
TOL = 2e-2

dot = jnp.dot
total = functools.partial(jnp.sum, axis=-1)
act = jax.nn.gelu
BIAS: Tensor["d"] = np.linspace(-1.0, 1.0, 8).astype(np.float16)


@jax.tree_util.register_dataclass
@dataclasses.dataclass
class MLP:
    w1: Tensor["d", "d_ff"]
    w2: Tensor["d_ff", "d"]

    @property
    def width(self):
        return self.w1.shape[1]

    def __call__(self, x):
        return dot(act(dot(x, self.w1)), self.w2) / self.width


@jax.jit
def score(m, x):
    return total(m(x) + BIAS)


@mesh(batch=2, model=4, rules={"d_ff": "model", "vocab": "model"})
def f(m: MLP, table: Tensor["vocab", "d"], ids: Tensor["batch"]) -> Tensor["batch"]:
    x = jnp.take(table, ids, axis=0, mode="fill", fill_value=0.0)
    return score(m, x) + jnp.nanmax(m(x), axis=-1)


@mesh(batch=1, model=8, rules={"d_ff": "model", "vocab": "model"})
def g(m: MLP, table: Tensor["vocab", "d"], ids: Tensor["batch"]) -> Tensor["batch"]:
    return score(m, table[ids])


def inputs():
    rng = np.random.default_rng(3611)
    m = MLP((rng.standard_normal((8, 16)) * 0.3).astype(np.float16),
            (rng.standard_normal((16, 8)) * 0.3).astype(np.float16))
    table = rng.standard_normal((32, 8)).astype(np.float16)
    table[5, 3] = np.nan
    ids = np.array([0, -1, 40, 5], np.int32)
    return {"f": (m, table, ids), "g": (m, table, np.array([31, -32, 7, 100], np.int32))}

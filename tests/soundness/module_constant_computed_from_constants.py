"""A module constant computed from the constants before it (``EMBED_SCALE: float = math.sqrt(D_MODEL)``,
``D_MODEL ** 0.5``, ``HEAD_DIM = D_MODEL // N_HEADS``) is the number it holds: it was opaque ("cannot infer the
dims of 'EMBED_SCALE'"), where the same expression written inline ran.  Found by the attack on new model styles
(session 18, Gemma's embedding scale)."""
import math

import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"

D_MODEL = 16
N_HEADS = 4
EMBED_SCALE: float = math.sqrt(D_MODEL)
SOFT_CAP = D_MODEL ** 0.5 * 2
HEAD_DIM = D_MODEL // N_HEADS


@mesh(batch=2, model=4, rules={"vocab": "model"})
def f(table: Tensor["vocab", "d_model"], ids: Tensor["batch", "length"]):
    h = table[ids] * EMBED_SCALE
    return jnp.tanh(h / SOFT_CAP) * SOFT_CAP + HEAD_DIM


def inputs():
    rng = np.random.default_rng(439)
    return rng.standard_normal((64, 16)).astype(np.float32), rng.integers(-3, 70, (4, 8)).astype(np.int32)

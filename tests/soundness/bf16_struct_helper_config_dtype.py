"""Mixed precision as model code writes it: a config's compute dtype, NamedTuple parameters, a
helper returning the down projection's partial sum (its dtype read off p.w_out, a field)."""
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


class Config(NamedTuple):
    dtype: object = jnp.bfloat16


class Mlp(NamedTuple):
    w_in: Tensor["d", "f"]
    w_out: Tensor["f", "d"]


def mlp(x, p, cfg):
    h = jax.nn.relu(x.astype(cfg.dtype) @ p.w_in.astype(cfg.dtype))
    return h @ p.w_out.astype(cfg.dtype)


@mesh(model=4, rules={"f": "model"})
def f(x: Tensor["batch", "d"], p: Mlp, cfg: Config = Config()) -> Tensor["batch", "d"]:
    return (x + mlp(x, p, cfg)).astype(jnp.float32)


def inputs():
    x = np.ones((2, 4), np.float32)
    w_in = (np.eye(4, 8) + np.eye(4, 8, 4)).astype(np.float32)     # relu(x @ w_in) = ones
    w_out = np.zeros((8, 4), np.float32)
    w_out[0::2], w_out[1::2] = 256.0, 1.0                           # each device: 257 or -256
    w_out[2:4] = w_out[6:8] = -128.0
    return (x, Mlp(w_in, w_out))

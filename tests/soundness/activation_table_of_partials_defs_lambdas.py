"""HF's activation table: ``ACT2FN[config.hidden_act](h)`` where the module-level dict holds
``functools.partial(jax.nn.gelu, approximate=False)``, a def of the module, a lambda and plain jax functions,
the key read off a config meshify does not know when rewriting (every entry is rewritten for the arguments
and must agree; the table is spelled out inline where a def's version is called) or a constant it reads.
``norm_table``: the entries reduce over a split dim (each entry's version completes its own sum).  Before,
"ACT2FN[...] has no meshify rule" with a fix unsplitting ``d_ff``."""
import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


def quick_gelu(x):
    return x * jax.nn.sigmoid(1.702 * x)


ACT2FN = {
    "gelu": functools.partial(jax.nn.gelu, approximate=False),
    "gelu_new": functools.partial(jax.nn.gelu, approximate=True),
    "relu": jax.nn.relu,
    "silu": jax.nn.silu,
    "quick_gelu": quick_gelu,
    "squared": lambda x: jnp.square(jax.nn.relu(x)),
}


def rms(x):
    return x * jax.lax.rsqrt(jnp.mean(x * x, axis=-1, keepdims=True) + 1e-6)


NORMS = {"rms": rms, "center": lambda x: x - jnp.mean(x, axis=-1, keepdims=True)}


class Config(NamedTuple):
    hidden_act: str = "gelu"
    norm: str = "rms"


def mlp(h, w1, w2, config):
    return ACT2FN[config.hidden_act](h @ w1) @ w2


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def f(x: Tensor["batch", "d_model"], w1: Tensor["d_model", "d_ff"], w2: Tensor["d_ff", "d_model"], *, config):
    return mlp(x, w1, w2, config)


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def g(x: Tensor["batch", "d_model"], w1: Tensor["d_model", "d_ff"], hidden_act: str = "quick_gelu"):
    return ACT2FN[hidden_act](x @ w1)


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def norm_table(x: Tensor["batch", "d_model"], w1: Tensor["d_model", "d_ff"], *, config):
    return NORMS[config.norm](x @ w1)


def inputs():
    rng = np.random.default_rng(251)
    x = rng.standard_normal((4, 8)).astype(np.float32)
    w1, w2 = (rng.standard_normal((8, 16)) / 3).astype(np.float32), (rng.standard_normal((16, 8)) / 3).astype(np.float32)
    return {"f": (x, w1, w2), "g": (x, w1), "norm_table": (x, w1)}


def scenario(mod, pick):
    """Every key of each table, the config passed at call time; the results of all calls."""
    args = inputs()
    out = {}
    for act in ACT2FN:
        out[f"f-{act}"] = pick(mod.f)(*args["f"], config=Config(hidden_act=act))
        out[f"g-{act}"] = pick(mod.g)(*args["g"], hidden_act=act)
    for norm in NORMS:
        out[f"norm-{norm}"] = pick(mod.norm_table)(*args["norm_table"], config=Config(norm=norm))
    return out

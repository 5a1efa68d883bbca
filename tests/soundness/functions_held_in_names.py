"""Functions held in names, as model code writes them: ``act = functools.partial(jax.nn.gelu,
approximate=False)``, ``norm = lambda t: ...`` closing over a split weight, ``g = swish`` (a module def) and
``act2 = jax.nn.relu`` (a jax function) called in the function, passed to a helper, used as a scan body;
a partial binding an array then the name rebound (the partial keeps what it bound, as Python's does); a
partial called with another keyword; the same lambda at two layouts.  Before, each was "calling local
value 'act'"."""
import functools
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"
GELU = False
ACT = {"gelu": jax.nn.gelu, "relu": jax.nn.relu, "silu": jax.nn.silu, 3: jnp.tanh}
CHOICE = "silu"


def swish(x):
    return x * jax.nn.sigmoid(x)


def ffn(h, w1, w2, act):
    return act(h @ w1) @ w2


def ffn_default(h, w1, w2, act=ACT["silu"]):
    return act(h @ w1) @ w2


def layer(c, w):
    return jnp.tanh(c @ w) * 0.5 + c, None


def scaled(s, x, power=1):
    return s * jnp.tanh(x) ** power


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def f(x: Tensor["batch", "d"], w1: Tensor["d", "d_ff"], w2: Tensor["d_ff", "d"], g: Tensor["d_ff"],
      ws: Tensor["layers", "d", "d"], use_gelu: bool = False, act_name: str = "relu"):
    act = partial(jax.nn.gelu, approximate=False)
    chosen = jax.nn.gelu if use_gelu else jax.nn.relu
    fixed = partial(jax.nn.gelu, approximate=True) if GELU else jax.nn.tanh
    gate = lambda t: jax.nn.sigmoid(t) * g
    g2 = swish
    act2 = jax.nn.relu
    scale = jnp.mean(x, axis=-1, keepdims=True)
    tanh_s = functools.partial(scaled, scale)
    scale = scale * 100.0  # the partial keeps the value it bound
    h = x + act(x @ w1) @ w2 * 0.5
    h = h + ffn(h, w1, w2, act) * 0.25 + ffn(h, w1, w2, ACT["gelu"]) * 0.1 + ffn_default(h, w1, w2) * 0.1
    h = h + gate(h @ w1) @ w2 * 0.1
    h = h + g2(act2(h @ w1)) @ w2 * 0.1
    h = h + fixed(chosen(h @ w1)) @ w2 * 0.1
    h = h + ACT[act_name](h @ w1) @ w2 * 0.1 + ACT[CHOICE](h) * 0.1 + ACT[3](h @ w1) @ w2 * 0.1
    h = h + tanh_s(h) + tanh_s(h, power=3) * 0.5
    square = lambda t: t * t
    h = h + jnp.sum(square(h @ w1), axis=-1, keepdims=True) * 1e-3 + square(h) * 1e-2
    step = lambda c, w: (act(c @ w) + c, jnp.sum(c))
    h, sums = jax.lax.scan(jax.checkpoint(step), h, ws)
    h, _ = jax.lax.scan(jax.remat(layer, policy=jax.checkpoint_policies.nothing_saveable), h, ws)
    h = jax.lax.fori_loop(0, 2, jax.jit(lambda i, c: c + 0.1 * act(c @ w1) @ w2), h)
    return jnp.mean(h ** 2) + jnp.mean(sums) * 1e-3 + jnp.mean(scale) * 0.0


def inputs():
    rng = np.random.default_rng(44)
    return (rng.standard_normal((4, 8)).astype(np.float32), 0.3 * rng.standard_normal((8, 16)).astype(np.float32),
            0.3 * rng.standard_normal((16, 8)).astype(np.float32), 1.0 + 0.1 * rng.standard_normal(16).astype(np.float32),
            0.2 * rng.standard_normal((3, 8, 8)).astype(np.float32))

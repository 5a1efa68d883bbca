"""Rematerialisation as model code spells it: a helper under @functools.partial(jax.checkpoint,
policy=jax.checkpoint_policies.nothing_saveable), jax.remat(block, prevent_cse=False) at the call site, a
scan body under jax.checkpoint with static_argnums; forward and gradients."""
import functools

import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@functools.partial(jax.checkpoint, policy=jax.checkpoint_policies.nothing_saveable)
def mlp(x, w1, w2):
    return x + jax.nn.gelu(x @ w1) @ w2


def block(x, w1, w2):
    return x + jnp.tanh(x @ w1) @ w2 * 0.5


@functools.partial(jax.checkpoint, static_argnums=(3,))
def layer(h, w1, w2, scale):
    return h + scale * jnp.tanh(h @ w1) @ w2


@mesh(data=2, model=4, rules={"batch": "data", "d_ff": "model"})
def f(x: Tensor["batch", "d"], w1: Tensor["d", "d_ff"], w2: Tensor["d_ff", "d"], ws1: Tensor["layers", "d", "d_ff"],
      ws2: Tensor["layers", "d_ff", "d"]):
    h = mlp(x, w1, w2)
    h = jax.remat(block, prevent_cse=False)(h, w1, w2)
    h, _ = jax.lax.scan(lambda c, w: (layer(c, w[0], w[1], 0.5), None), h, (ws1, ws2))
    return jnp.mean(h ** 2)


def inputs():
    rng = np.random.default_rng(22)
    return (rng.standard_normal((4, 8)).astype(np.float32), 0.3 * rng.standard_normal((8, 16)).astype(np.float32),
            0.3 * rng.standard_normal((16, 8)).astype(np.float32),
            0.3 * rng.standard_normal((2, 8, 16)).astype(np.float32),
            0.3 * rng.standard_normal((2, 16, 8)).astype(np.float32))

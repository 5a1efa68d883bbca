"""Loop bodies a caller passes to its helper, as layer-stack code does (``run_layers(step, h, ws)`` with
``jax.lax.scan(step, h, ws)`` inside): a nested def, a lambda held in a name, a lambda written in the call,
a functools.partial of a module def, and a fori_loop body; each body holds a contraction over a split dim
(a psum inside the loop), and gradients flow through all of it.  Before, "scan body 'step'"."""
import functools

import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


def run_layers(step, h, ws):
    h, _ = jax.lax.scan(step, h, ws)
    return h


def repeat(body, h, n):
    return jax.lax.fori_loop(0, n, body, h)


def layer(h, w, w2, scale):
    return h + scale * jnp.tanh(h @ w) @ w2, None


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def f(x: Tensor["batch", "d"], ws: Tensor["layers", "d", "d_ff"], w2: Tensor["d_ff", "d"]):
    def step(h, w):
        return h + 0.5 * jax.nn.gelu(h @ w) @ w2, None

    held = lambda h, w: (h - 0.25 * jnp.sin(h @ w) @ w2, None)
    h = run_layers(step, x, ws)
    h = run_layers(held, h, ws)
    h = run_layers(lambda c, w: (c + 0.1 * (c @ w) @ w2, None), h, ws)
    h = run_layers(functools.partial(layer, w2=w2, scale=0.2), h, ws)
    h = repeat(lambda i, c: c + 0.1 * jnp.tanh(c @ ws[0]) @ w2, h, 2)
    return jnp.mean(h ** 2)


def inputs():
    rng = np.random.default_rng(47)
    return (rng.standard_normal((4, 8)).astype(np.float32), 0.3 * rng.standard_normal((3, 8, 16)).astype(np.float32),
            0.3 * rng.standard_normal((16, 8)).astype(np.float32))

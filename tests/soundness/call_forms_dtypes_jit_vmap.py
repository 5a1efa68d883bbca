"""One @mesh function called as users call it, in one run: positional, by keyword out of order, with numpy
and jax arrays, float32 then bfloat16 then float32 again (each its own program, none reused for the other
dtype), two batch sizes, a static keyword changed between calls, under jax.jit with static_argnames, and
under jax.vmap over a leading axis of replicated copies."""
import functools

import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"
GRAD = False
TOL = 3e-2


@mesh(data=2, model=4, rules={"batch": "data", "d_ff": "model"})
def f(x: Tensor["batch", "d"], w1: Tensor["d", "d_ff"], w2: Tensor["d_ff", "d"], scale: float = 1.0, act: str = "relu"):
    h = x @ w1
    h = jax.nn.relu(h) if act == "relu" else jnp.tanh(h)
    return (h @ w2) * scale


def scenario(mod, pick):
    fn = pick(mod.f)
    rng = np.random.default_rng(20)
    x = rng.standard_normal((4, 8)).astype(np.float32)
    x8 = rng.standard_normal((8, 8)).astype(np.float32)
    w1 = (0.3 * rng.standard_normal((8, 16))).astype(np.float32)
    w2 = (0.3 * rng.standard_normal((16, 8))).astype(np.float32)
    out = [fn(x, w1, w2), fn(w2=w2, x=jnp.asarray(x), w1=w1, scale=2.0)]
    bf = [jnp.asarray(a, jnp.bfloat16) for a in (x, w1, w2)]
    out.append(fn(*bf).astype(jnp.float32))
    out.append(fn(x8, w1, w2, act="tanh"))
    out.append(fn(x, w1, w2, 0.5, "tanh"))
    jitted = jax.jit(fn, static_argnames=("scale", "act"))
    out.append(jitted(x, w1, w2, scale=3.0, act="tanh"))
    out.append(jax.vmap(lambda xi: fn(xi, w1, w2))(np.stack([x, 2 * x])))
    return out


def inputs():
    return ()

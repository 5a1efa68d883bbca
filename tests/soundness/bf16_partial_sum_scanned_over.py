"""A bfloat16 partial sum scanned over: an embedding ``x @ emb`` over a vocabulary split on 'model' (formed in float32,
as one device accumulates it) fed to ``jax.lax.scan`` over time as ``xs``, read by the body and added to the carry;
and a loop's init that is such a sum (``fori_loop``).  Each is completed before the loop, where its dtype is known
(``mr.psum(..., like=(x, emb))``).  Before, the body's psum had no ``like=``: the result came back float32 where the
reference is bfloat16 (a silent dtype change), or the carry changed dtype (a raw JAX error) (the RNN attack)."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"
TOL = 3e-2


@mesh(batch=2, model=4, rules={"vocab": "model"})
def rnn(x: Tensor["batch", "time", "vocab"], emb: Tensor["vocab", "hidden"], h0: Tensor["batch", "hidden"]):
    xb, eb = x.astype(jnp.bfloat16), emb.astype(jnp.bfloat16)
    xe = xb @ eb

    def step(h, x_t):
        h = jnp.tanh(x_t + h)
        return h, jnp.tanh(x_t)

    h, hs = jax.lax.scan(step, h0.astype(jnp.bfloat16), jnp.swapaxes(xe, 0, 1))
    return h, hs


@mesh(batch=2, model=4, rules={"vocab": "model"})
def looped(x: Tensor["batch", "vocab"], emb: Tensor["vocab", "hidden"]):
    start = x.astype(jnp.bfloat16) @ emb.astype(jnp.bfloat16)
    return jax.lax.fori_loop(0, 3, lambda i, h: jnp.tanh(h) * 0.9, start)


def inputs():
    rng = np.random.default_rng(103)
    x = rng.standard_normal((4, 3, 8)).astype(np.float32)
    emb = (rng.standard_normal((8, 4)) / 3).astype(np.float32)
    return {"rnn": (x, emb, np.zeros((4, 4), np.float32)), "looped": (x[:, 0], emb)}

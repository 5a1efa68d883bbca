"""A GRU over time as users write it: inputs time-major by jnp.swapaxes, jax.lax.scan over time with a
tuple carry, gates from a fused matmul split by jnp.split, the hidden dim split over 'model'; a
BatchNorm in training mode (statistics over batch and time, batch split) on the outputs."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(data=2, model=4, rules={"batch": "data", "hidden": "model"})
def f(x: Tensor["batch", "time", "d_in"], wx: Tensor["d_in", "three", "hidden"],
      wh: Tensor["hidden", "three", "hidden"], gamma: Tensor["hidden"]):
    xs = jnp.swapaxes(x, 0, 1)
    h0 = jnp.zeros((x.shape[0], wh.shape[-1]), x.dtype)

    def step(carry, xt):
        h, total = carry
        gx = jnp.einsum("bd,dgh->gbh", xt, wx)
        gh = jnp.einsum("bh,hgk->gbk", h, wh)
        z = jax.nn.sigmoid(gx[0] + gh[0])
        r = jax.nn.sigmoid(gx[1] + gh[1])
        n = jnp.tanh(gx[2] + r * gh[2])
        h = (1.0 - z) * n + z * h
        return (h, total + jnp.sum(h)), h

    (h, total), hs = jax.lax.scan(step, (h0, jnp.zeros((), x.dtype)), xs)
    mean = jnp.mean(hs, axis=(0, 1))
    var = jnp.var(hs, axis=(0, 1))
    normed = (hs - mean) / jnp.sqrt(var + 1e-5) * gamma
    return jnp.mean(normed ** 2) + 0.01 * total + jnp.mean(h)


def inputs():
    rng = np.random.default_rng(14)
    return (rng.standard_normal((4, 5, 6)).astype(np.float32), 0.4 * rng.standard_normal((6, 3, 8)).astype(np.float32),
            0.4 * rng.standard_normal((8, 3, 8)).astype(np.float32), 1.0 + 0.1 * rng.standard_normal(8).astype(np.float32))

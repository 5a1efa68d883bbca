"""Norms as users write them over a split d_model: LayerNorm by hand (mean, var with an eps), RMSNorm with
jnp.sqrt(jnp.mean(x**2)), jnp.linalg.norm for a cosine similarity, x.mean() of everything, .T of a weight."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


def layer_norm(x, g, b, eps=1e-5):
    mu = x.mean(axis=-1, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=-1, keepdims=True)
    return (x - mu) / jnp.sqrt(var + eps) * g + b


def rms_norm(x, g, eps=1e-6):
    return x * jax.lax.rsqrt(jnp.mean(jnp.square(x), axis=-1, keepdims=True) + eps) * g


@mesh(data=2, model=4, rules={"batch": "data", "d_model": "model"})
def f(x: Tensor["batch", "d_model"], g: Tensor["d_model"], b: Tensor["d_model"], w: Tensor["d_out", "d_model"]):
    y = layer_norm(x, g, b)
    z = rms_norm(y, g)
    cos = jnp.sum(y * z, axis=-1) / (jnp.linalg.norm(y, axis=-1) * jnp.linalg.norm(z, axis=-1) + 1e-8)
    out = z @ w.T
    return out, cos, x.mean(), jnp.std(x, axis=-1)


def inputs():
    rng = np.random.default_rng(6)
    return (rng.standard_normal((4, 16)).astype(np.float32), 1.0 + 0.1 * rng.standard_normal(16).astype(np.float32),
            0.1 * rng.standard_normal(16).astype(np.float32), rng.standard_normal((8, 16)).astype(np.float32))

"""This session's new rules attacked as a user would: every parameter of tensordot (int and paired axes,
negative axes, precision, preferred_element_type), inner, outer (of one vector with itself), expand_dims
and squeeze (tuples, negatives, the method), nan_to_num (nan, posinf, neginf, copy), isinf / isposinf /
isneginf / signbit on inputs holding NaN and inf, stop_gradient of a partial sum, dot_product_attention
(bias and mask together, scale, local_window_size, implementation, no batch dim); in a @jax.jit helper
shared by two @mesh functions on different meshes, with a hinted module-level array, in float16 for one."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"
TOL = 2e-2
GAIN: Tensor["d"] = jnp.asarray(np.linspace(0.5, 1.5, 8), jnp.float32)


@jax.jit
def mix(x, w, u):
    a = jnp.tensordot(x, w, axes=1, precision=jax.lax.Precision.HIGHEST)
    b = jnp.tensordot(x, w, axes=([-1], [-2]), preferred_element_type=jnp.float32).astype(x.dtype)
    c = jnp.tensordot(u, u, axes=0)                          # an outer product, [d, d]
    d = jnp.inner(x, u, precision=None)                       # [batch], contracted d
    e = jnp.outer(u, u * GAIN.astype(u.dtype))
    y = jnp.squeeze(jnp.expand_dims(x, (0, -1)), axis=(0, -1))
    z = jnp.expand_dims(d, -1).squeeze(-1)
    bad = jnp.where(x > 1.0, jnp.inf, jnp.where(x < -1.0, -jnp.inf, jnp.where(jnp.abs(x) < 0.05, jnp.nan, x)))
    clean = jnp.nan_to_num(bad, copy=False, nan=0.25, posinf=3.0, neginf=-3.0)
    flags = (jnp.isinf(bad).astype(x.dtype) + jnp.isposinf(bad).astype(x.dtype) * 2
             + jnp.isneginf(bad).astype(x.dtype) * 4 + jnp.signbit(bad).astype(x.dtype) * 8)
    frozen = jax.lax.stop_gradient(d) * d
    return (jnp.sum(a) + jnp.sum(b) + jnp.mean(c) + jnp.sum(e) * 0.1 + jnp.sum(y * z[:, None]) * 0.01
            + jnp.sum(clean) + jnp.sum(flags) * 0.01 + jnp.sum(frozen) * 0.01)


def attend(q, k, v, bias, pad):
    a = jax.nn.dot_product_attention(q, k, v, bias, pad, scale=0.5, local_window_size=(2, 1), implementation="xla")
    m = jnp.mean(q, axis=0)                                   # [seq, heads, k]: no batch dim
    b = jax.nn.dot_product_attention(m, m, m * 2.0)
    return jnp.sum(a) + jnp.sum(b)


@mesh(batch=2, model=4, rules={"d": "model", "f": "model"})
def f(x: Tensor["batch", "d"], w: Tensor["d", "e"], u: Tensor["d"]) -> Tensor[()]:
    return mix(x, w, u)


@mesh(model=8, rules={"batch": "model"})
def g(x: Tensor["batch", "d"], w: Tensor["d", "e"], u: Tensor["d"], q: Tensor["batch", "seq", "heads", "k"],
      bias: Tensor["batch", "heads", "seq", "seq2"], pad: Tensor["batch", "1", "1", "seq2"]) -> Tensor[()]:
    return mix(x, w, u) + attend(q, q * 0.5, q + 1.0, bias, pad)


def inputs():
    rng = np.random.default_rng(27)
    x = rng.standard_normal((8, 8)).astype(np.float16)
    w = (0.3 * rng.standard_normal((8, 4))).astype(np.float16)
    u = rng.standard_normal(8).astype(np.float16)
    q = rng.standard_normal((8, 5, 2, 4)).astype(np.float32)
    bias = (0.3 * rng.standard_normal((8, 2, 5, 5))).astype(np.float32)
    pad = np.ones((8, 1, 1, 5), bool)
    pad[:, :, :, -1] = False
    return {"f": (x, w, u), "g": (x.astype(np.float32), w.astype(np.float32), u.astype(np.float32), q, bias, pad)}

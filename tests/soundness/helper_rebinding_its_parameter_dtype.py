"""A helper that rebinds a parameter (DeepSeek's ``apply_rotary_emb``: ``cos, sin = cos[None, :, None, :], ...``)
returns a value whose dtype its caller can tell: the rebound parameter's dtype is read at the helper's top
(``cos_dtype``), which is the argument's, so a partial sum of the helper's result beside another
(``jnp.sum(rotate(q, cos)) + jnp.sum(q)``) is formed in float32 for float16 operands and cast back after the
psum.  Before: refused ('cannot tell the dtype of ..., a partial sum').  The float16 rows' shares (+-80000 on
each device) overflow float16 where a share is rounded before the psum."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"
TOL = 2e-2  # float16 sums: XLA may keep a product in float32 inside the reduction, one device not


def scaled(x, s):
    s = s[None, :]
    return x * s


def rotate(x, cos, sin):
    x1, x2 = x[..., 0::2], x[..., 1::2]
    cos, sin = cos[None, :], sin[None, :]
    return jnp.concatenate([x1 * cos - x2 * sin, x1 * sin + x2 * cos], axis=-1)


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def f(x: Tensor["batch", "d_ff"], s: Tensor["d_ff"], q: Tensor["batch", "heads", "rope"], cos: Tensor["rope_half"]):
    return jnp.sum(scaled(x, s)) + jnp.sum(x), jnp.sum(rotate(q, cos, 2.0 * cos)) + jnp.sum(q * 0.5)


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def half(x: Tensor["batch", "d_ff"], s: Tensor["d_ff"]):
    return jnp.sum(scaled(x, s), axis=1) + jnp.sum(x, axis=1)


def inputs():
    rng = np.random.default_rng(11)
    row = np.array([20000.0] * 8 + [-20000.0] * 8)  # shares of +80000 (model 0, 1) and -80000 (model 2, 3)
    x = np.tile(row, (8, 1)).astype(np.float16)
    return {"f": (rng.standard_normal((4, 16)).astype(np.float32), rng.standard_normal(16).astype(np.float32),
                  rng.standard_normal((4, 8, 4)).astype(np.float32), rng.standard_normal(2).astype(np.float32)),
            "half": (x, np.ones(16, np.float16))}

"""Functions under a wrapper held in a name, as model code writes them: ``ck = jax.checkpoint(block)``
(a module def whose contraction over a split ``d_ff`` ends in a psum), a nested def under
``jax.checkpoint(..., policy=...)``, ``jax.remat``, ``jax.jit`` of a module def; each called twice (at
two layouts for the block: its input split, then its output) and one used as a scan body.  Before, each
call was "calling local value 'ck'"."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


def block(h, w1, w2):
    return h + jnp.tanh(h @ w1) @ w2


def layer(c, w):
    return jnp.tanh(c @ w) * 0.5 + c, None


@mesh(data=2, model=4, rules={"batch": "data", "d_ff": "model"})
def f(x: Tensor["batch", "d"], w1: Tensor["d", "d_ff"], w2: Tensor["d_ff", "d"], ws: Tensor["layers", "d", "d"]):
    ck = jax.checkpoint(block)
    h = ck(x, w1, w2)
    h = ck(h, w1, w2)

    def norm(t, scale):
        return t * jax.lax.rsqrt(jnp.mean(t * t, axis=-1, keepdims=True) + 1e-6) * scale

    norm_ck = jax.checkpoint(norm, policy=jax.checkpoint_policies.nothing_saveable)
    h = norm_ck(h, 1.5)
    step = jax.remat(layer)
    h, _ = jax.lax.scan(step, h, ws)
    fast = jax.jit(block)
    return jnp.mean(fast(h, w1, w2) ** 2)


def inputs():
    rng = np.random.default_rng(43)
    return (rng.standard_normal((8, 6)).astype(np.float32), 0.4 * rng.standard_normal((6, 16)).astype(np.float32),
            0.4 * rng.standard_normal((16, 6)).astype(np.float32), 0.3 * rng.standard_normal((3, 6, 6)).astype(np.float32))

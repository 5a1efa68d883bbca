"""``jnp.concatenate([pm, pm * 2, h], axis=0)`` where ``pm = jnp.mean(h, axis=0, keepdims=True)`` (a size-1 dim, a
partial sum over the split batch) joins ``h`` along its split batch: a size-1 dim splits into no blocks, so the
joined dim is whole.  Before, a psum_scatter of the one row crashed inside JAX ("scatter dimension size 1 must
be divisible by shard_count 2"; found by the attack on today's forms, session 17)."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def f(x: Tensor["batch", "d"], w: Tensor["d", "d_ff"]):
    h = x @ w
    pm = jnp.mean(h, axis=0, keepdims=True)
    return jnp.concatenate([pm, pm * 2, h], axis=0)


def inputs():
    rng = np.random.default_rng(416)
    return rng.standard_normal((8, 16)).astype(np.float32), rng.standard_normal((16, 32)).astype(np.float32) * 0.3

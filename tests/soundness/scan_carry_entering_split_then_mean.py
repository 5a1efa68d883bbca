"""A scan whose carry starts whole (``jnp.zeros`` of the global shape) and comes back split, its stacked
outputs then reduced over a split dim: the reduction's dtype was named by the scan call's own text, traced
again with the carry as written (whole, not the block it enters as), so generated code crashed with an
einsum size error (found writing a GRU; the carry's entry conversion was right)."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(data=2, model=4, rules={"batch": "data", "hidden": "model"})
def f(x: Tensor["time", "batch", "hidden"], w: Tensor["hidden", "hidden"]):
    h0 = jnp.zeros((x.shape[1], w.shape[0]), x.dtype)

    def step(h, xt):
        h = jnp.tanh(xt + jnp.einsum("bh,hk->bk", h, w))
        return h, h

    h, hs = jax.lax.scan(step, h0, x)
    return jnp.mean(hs) + jnp.mean(h)


def inputs():
    rng = np.random.default_rng(15)
    return (rng.standard_normal((3, 4, 8)).astype(np.float32), 0.3 * rng.standard_normal((8, 8)).astype(np.float32))

"""``jnp.split`` along a dim split over two mesh axes (8 blocks, 3 sections: each chunk moves by its own
schedule), and of a partial sum (``x @ w`` contracting a dim split over 'batch', its fused dim split over
'model'): a permutation of rows is linear, so each device's partial chunks move and the sum completes
later (or is returned whole).  Gradients through both."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"wide": ("batch", "model"), "d": "batch", "fused": "model"})
def f(a: Tensor["rows", "wide"], x: Tensor["n", "d"], w: Tensor["d", "fused"]):
    p, q, r = jnp.split(a * 2.0, 3, axis=1)
    h1, h2, h3 = jnp.split(x @ w, 3, axis=-1)
    return p - r, q, h1 * 0.5 + h3, h2


def inputs():
    rng = np.random.default_rng(405)
    return (rng.standard_normal((3, 48)).astype(np.float32), rng.standard_normal((5, 6)).astype(np.float32),
            rng.standard_normal((6, 36)).astype(np.float32))

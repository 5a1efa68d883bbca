"""An array unpacked along its first dim (Gemma's ``key, value = jnp.einsum("bd,cdh->cbh", x, w_kv)``; a name
of a stacked array, ``a, b = kv``): was refused ("assignment to 'key, value'").  Each name takes a row, with the
rest of the layout (a partial sum stays one); a first dim split over a mesh axis is refused."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"
TOL = 2e-2


@mesh(batch=2, model=4, rules={"heads": "model"})
def f(x: Tensor["batch", "d_model"], w: Tensor["kv", "d_model", "heads"], u: Tensor["kv", "heads", "d_model"]):
    key, value = jnp.einsum("bd,cdh->cbh", x, w)
    a, b = jnp.einsum("bh,chd->cbd", key * value, u)  # partial sums over 'model', float16 accumulated in float32
    return a - b * 0.5, key


def inputs():
    rng = np.random.default_rng(437)
    r = lambda *s: (rng.standard_normal(s) * 0.5).astype(np.float16)  # noqa: E731
    return r(4, 16), r(2, 16, 8), r(2, 8, 16)

"""x.at[ids].get(mode="clip") and (mode="fill", fill_value=) of a vocab-split table with negative and out-of-range
ids: the negative ids wrap from the end before the clamp (jnp.take's clip does not wrap them), and the gradient goes
to the clamped rows (x[ids]'s drops out-of-range rows)."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"vocab": "model", "d": None})
def f(table: Tensor["vocab", "d"], ids: Tensor["batch", "seq"]) -> Tensor["batch", "seq", "d"]:
    a = table.at[ids].get(mode="clip")
    b = table.at[ids].get(mode="fill", fill_value=0.5)
    c = table[ids] * 2.0
    return a + b + c


def inputs():
    rng = np.random.default_rng(3503)
    ids = rng.integers(-20, 20, (4, 6)).astype(np.int32)
    ids[0, :4] = [-1, -16, -17, 16]
    return rng.standard_normal((16, 4)).astype(np.float32), ids

"""A float16 einsum over split d whose result the return hint wants split over the same axis
(a reduce-scatter): the partial sums overflow float16 per device, the whole sum does not."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(model=4, rules={"d": "model", "rows": "model"})
def f(x: Tensor["batch", "d"], w: Tensor["d", "e"]) -> Tensor["rows", "e"]:
    y: Tensor["rows", "e"] = jnp.einsum("bd,de->be", x, w)
    return y


def inputs():
    signs = np.where(np.arange(8) // 2 % 2 == 0, 1.0, -1.0)
    x = np.tile(200.0 * signs, (4, 1))                # [4, 8]; each device's 2 products: +-80000
    w = np.full((8, 4), 200.0)
    return (x.astype(np.float16), w.astype(np.float16))

# Bad input: a reshape to 2 sizes named by a hint of 3 dims.
# expect: LayoutError at 10:45 naming 2 sizes but the hint names 3
import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


@mesh(model=4)
def f(x: Tensor["batch", "model"]) -> Tensor["batch", "model"]:
    h: Tensor["batch", "heads", "d_head"] = x.reshape(4, 8)
    return x

# Bad input: a helper hinted to return a tuple of 2 returns a tuple of 3 (a hint on a helper is checked).
# expect: LayoutError at 11:12 naming is hinted to return a tuple of 2
import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


def pair(x: Tensor["batch", "d"]) -> tuple[Tensor["batch", "d"], Tensor["batch", "d"]]:
    y = x * 2
    z = x + 1
    return y, z, x


@mesh(batch=2, model=4)
def f(x: Tensor["batch", "d"]) -> Tensor["batch", "d"]:
    a, b = pair(x)[:2]
    return a + b

# Bad input: a list-of-arrays return hint whose dims are not the items' dims.
# expect: LayoutError at 9:12 naming is hinted to return arrays
import jax.numpy as jnp
from meshify import Tensor, mesh


@mesh(batch=2, model=4)
def f(x: Tensor["batch", "d"], ws: tuple[Tensor["d", "d"], ...]) \
        -> list[Tensor["d", "batch"]]:
    return [jnp.tanh(x @ w) for w in ws]

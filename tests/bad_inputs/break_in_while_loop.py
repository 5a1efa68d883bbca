# Bad input: break in a Python while loop on an unknown static value (while loops take no break here).
# expect: UnsupportedError at 12:13 naming 'break' in a Python while loop
import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


@mesh(batch=2, model=4)
def f(x: Tensor["batch", "d"], n: int = 3) -> Tensor["batch", "d"]:
    while n > 0:
        if n == 1:
            break
        n -= 1
    return x * n

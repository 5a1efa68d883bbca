# Bad input: results chosen by a conditional expression on a name the function rebinds (not a static parameter):
# the error points at the test (it pointed at 1:1).
# expect: LayoutError at 12:22 naming chosen by 'out_all', a name it binds
import jax
import jax.numpy as jnp
from meshify import Tensor, mesh

@mesh(batch=8)
def f(x: Tensor["batch", "d"], out_all=None, *, config):
    y = x * 2 if out_all is None else x
    out_all = out_all if out_all is not None else config.out_all
    return (y, x) if out_all else (y,)

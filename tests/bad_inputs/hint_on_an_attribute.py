# Bad input: a Tensor hint on an attribute target.
# expect: UnsupportedError at 10:5 naming not a name
import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


@mesh(model=4)
def f(x: Tensor["model"], box) -> Tensor["model"]:
    box.y: Tensor["model"] = x
    return x

# Bad input: a Python number after one branch of an if, an array of dims meshify cannot infer after the other.
# expect: LayoutError at 9:5 naming 's' is a Python value after one branch
import jax.numpy as jnp
from meshify import Tensor, mesh


@mesh(batch=2, model=4, rules={"e": "model"})
def f(x: Tensor["batch", "d"], w: Tensor["d", "e"], flag):
    if flag:
        s = 2.0
    else:
        s = jnp.linspace(0.0, 1.0, 16)
    return jnp.tanh(x @ w) * s

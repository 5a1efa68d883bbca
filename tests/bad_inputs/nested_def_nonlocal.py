# Bad input: a nested def rebinding a variable of the @mesh function (nonlocal).
# expect: UnsupportedError at 12:9 naming 'nonlocal' in the nested function bump()
import jax.numpy as jnp
from meshify import Tensor, mesh


@mesh(model=4, rules={"f": "model"})
def f(x: Tensor["n", "d"], w: Tensor["d", "f"]) -> Tensor["n", "f"]:
    h = x @ w

    def bump():
        nonlocal h
        h = jnp.tanh(h)
        return h

    bump()
    return h

# Bad input: a Python number or an array of dims (m if m is not None else 1.0, m set under a flag) reduced.
# expect: UnsupportedError at 13:44 naming 'out' is a Python number or an array of layout
import jax.numpy as jnp
from meshify import Tensor, mesh


@mesh(batch=2, model=4, rules={"e": "model"})
def f(x: Tensor["batch", "d"], w: Tensor["d", "e"], flag):
    m = None
    if flag:
        m = jnp.cos(x @ w)
    out = m if m is not None else 1.0
    return jnp.tanh(x @ w) * out + jnp.sum(out)

# Bad input: a tuple's item is a partial sum after one branch of an if (one-line, where meshify adds no statement)
# and whole after the other.
# expect: LayoutError at 11:5 naming t[0] is [batch/'batch', d] partial over 'model' after one branch
import jax.numpy as jnp
from meshify import Tensor, mesh


@mesh(batch=2, model=4, rules={"e": "model"})
def f(x: Tensor["batch", "d"], w: Tensor["d", "e"], v: Tensor["e", "d"], flag):
    h = jnp.tanh(x @ w)
    if flag: t = (h @ v, x)
    else: t = (x, h @ v)
    a, b = t
    return a * 2.0 + jnp.sin(b)

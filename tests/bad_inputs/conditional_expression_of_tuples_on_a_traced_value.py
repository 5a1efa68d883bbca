# Bad input: a conditional expression of tuples on a traced value (JAX itself raises TracerBoolConversionError).
# expect: UnsupportedError at 10:22 naming jnp.where(x.mean() > 0, h, x), jnp.where(x.mean() > 0, x, h)
import jax.numpy as jnp
from meshify import Tensor, mesh


@mesh(batch=2, model=4, rules={"e": "model"})
def f(x: Tensor["batch", "d"], w: Tensor["d", "e"], v: Tensor["e", "d"]):
    h = jnp.tanh(x @ w) @ v
    a, b = (h, x) if x.mean() > 0 else (x, h)
    return a * 2.0 + jnp.sin(b)

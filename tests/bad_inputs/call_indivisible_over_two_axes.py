# Bad input: a batch of 12 split over data x model (8 shards).
# expect: CallError at 10:7 naming dim 'batch' has size 12
# call: x=12x4
import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


@mesh(data=2, model=4, rules={"batch": ("data", "model")})
def f(x: Tensor["batch", "d"]) -> Tensor["batch", "d"]:
    return jnp.tanh(x)

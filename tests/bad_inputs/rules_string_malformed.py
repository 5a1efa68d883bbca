# Bad input: a Mesh-TensorFlow rule string without ':'.
# expect: RulesError at 8:16 naming 'd_ff=model'
import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


@mesh(model=4, rules="d_ff=model")
def f(x: Tensor["d_ff"]) -> Tensor["d_ff"]:
    return x

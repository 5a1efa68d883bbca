# Bad input: a rule string naming an axis the mesh lacks.
# expect: RulesError at 8:24 naming 'modle'
import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


@mesh(data=2, model=4, rules="d_ff:modle;batch:data")
def f(x: Tensor["batch", "d_ff"]) -> Tensor["batch", "d_ff"]:
    return x

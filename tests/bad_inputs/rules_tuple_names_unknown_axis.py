# Bad input: a rule tuple naming an axis the mesh lacks.
# expect: RulesError at 8:24 naming 'pod'
import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


@mesh(data=2, model=4, rules={"batch": ("data", "pod")})
def f(x: Tensor["batch"]) -> Tensor["batch"]:
    return x

# Bad input: rules given as a variable.
# expect: AnnotationError at 11:22 naming rules=RULES
import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


RULES = {"d_ff": "model"}


@mesh(model=4, rules=RULES)
def f(x: Tensor["d_ff"]) -> Tensor["d_ff"]:
    return x

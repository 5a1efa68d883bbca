# Bad input: rules given as a variable that is not a literal (a module constant of a literal is read).
# expect: AnnotationError at 11:22 naming rules=RULES
import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


RULES = dict(d_ff="model")


@mesh(model=4, rules=RULES)
def f(x: Tensor["d_ff"]) -> Tensor["d_ff"]:
    return x

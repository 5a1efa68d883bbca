# Bad input: a Latin-1 byte in a comment.
# expect: SourceError at 7:6 naming not UTF-8
import jax
import jax.numpy as jnp
from meshify import Tensor, mesh

# café au lait
@mesh(model=4)
def f(x: Tensor["model"]) -> Tensor["model"]:
    return x

# Bad input: one mesh axis named twice (a repeated keyword: Python's compiler refuses it).
# expect: SourceError at 8:16 naming keyword argument repeated: model
import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


@mesh(model=4, model=2)
def f(x: Tensor["model"]) -> Tensor["model"]:
    return x

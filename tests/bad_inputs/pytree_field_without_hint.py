# Bad input: a NamedTuple argument with one field unhinted.
# expect: AnnotationError at 15:31 naming Params.scale
import jax
import jax.numpy as jnp
from meshify import Tensor, mesh
from typing import NamedTuple


class Params(NamedTuple):
    w: Tensor["d", "model"]
    scale: float


@mesh(model=4)
def f(x: Tensor["b", "d"], p: Params) -> Tensor["b", "model"]:
    return x @ p.w

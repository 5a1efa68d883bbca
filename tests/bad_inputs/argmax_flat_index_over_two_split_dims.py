# Bad input: x.argmax() without axis= of a value split along two dims (a flat index over one split dim only).
# expect: UnsupportedError at 10:12 naming axis=
import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


@mesh(batch=2, model=4)
def f(x: Tensor["batch", "model"]) -> Tensor[()]:
    return x.argmax()

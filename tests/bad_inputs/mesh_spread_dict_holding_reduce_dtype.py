# Bad input: @mesh(**TP) where TP holds reduce_dtype: only the axes and rules may come from a dict.
# expect: AnnotationError at 9:7 naming holds 'reduce_dtype'
import jax.numpy as jnp
from meshify import Tensor, mesh

TP = {"batch": 2, "reduce_dtype": "float32"}


@mesh(**TP)
def f(x: Tensor["batch", "d"]):
    return x * 2

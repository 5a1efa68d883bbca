# Bad input: @staticmethod under @mesh, so @mesh would wrap a staticmethod object, not the def.
# expect: AnnotationError at 10:5 naming put @staticmethod above @mesh
import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


class Model:
    @mesh(model=4)
    @staticmethod
    def f(x: Tensor["model"]) -> Tensor["model"]:
        return jnp.tanh(x)

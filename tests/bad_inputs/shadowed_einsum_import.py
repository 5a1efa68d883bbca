# Bad input: einsum imported from jax.numpy, then redefined.
# expect: UnsupportedError at 17:12 naming 'einsum' is imported and also reassigned
import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


from jax.numpy import einsum


def einsum(spec, *operands):
    return operands[0]


@mesh(model=4)
def f(x: Tensor["b", "model"], w: Tensor["model", "d"]) -> Tensor["b", "d"]:
    return einsum("bm,md->bd", x, w)

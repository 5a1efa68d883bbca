"""A lambda called where it is written, ``(lambda a, b: jnp.tanh(a @ b))(x, w)``, on a split value: refused, saying
to bind it to a name first (a lambda in a name is followed), where the message used to suggest unsplitting batch."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "error"


@mesh(batch=8)
def f(x: Tensor["batch", "d"], w: Tensor["d", "e"]) -> Tensor["batch", "e"]:
    return (lambda a, b: jnp.tanh(a @ b))(x, w)


def inputs():
    rng = np.random.default_rng(3217)
    return rng.standard_normal((8, 4)).astype(np.float32), rng.standard_normal((4, 3)).astype(np.float32)

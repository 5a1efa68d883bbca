"""jnp.take of a literal 1-D table (jnp.linspace(...), no Tensor hint: whole on every device) by
split ids, mode="clip" with negative and out-of-range ids: each device takes its block of ids
locally, the result split like the ids (was refused as "jax.numpy.take has no meshify rule")."""
import jax.numpy as jnp
import numpy as np
from meshify import Tensor, mesh
EXPECT = "match"
@mesh(model=8)
def f(ids: Tensor["model"]) -> Tensor["model"]:
    return jnp.take(jnp.linspace(0.0, 3.0, 4), ids, mode="clip")
def inputs():
    return (np.arange(64) % 6 - 1,)

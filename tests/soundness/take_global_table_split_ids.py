"""jnp.take of a module table of unknown dims by split ids: the result's dims would follow the
table's, which meshify cannot see, so it is refused with the fix (name the table's dims, as
global_table_named_split_ids does); was "jax.numpy.take has no meshify rule", which is untrue."""
import jax.numpy as jnp
import numpy as np
from meshify import Tensor, mesh
EXPECT = "error"
TABLE = jnp.arange(4.0) * 10
@mesh(model=8)
def f(ids: Tensor["model"]) -> Tensor["model"]:
    return jnp.take(TABLE, ids, axis=0)
def inputs():
    return (np.arange(64) % 4,)

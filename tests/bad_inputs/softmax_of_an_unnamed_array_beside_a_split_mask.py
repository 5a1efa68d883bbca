# Bad input: softmax of a value whose dims meshify cannot infer (a module-level array without a hint) with a split mask.
# expect: UnsupportedError at 14:12 naming whose dims meshify cannot infer
import jax
import jax.numpy as jnp
import numpy as np
from meshify import Tensor, mesh

TABLE = jnp.asarray(np.ones((4, 8)), jnp.float32)


@mesh(model=8, rules={"d_model": "model"})
def f(x: Tensor["seq", "batch"], keep: Tensor["d_model"]):
    scores = x @ TABLE
    return jax.nn.softmax(scores, 0, where=keep > 0)

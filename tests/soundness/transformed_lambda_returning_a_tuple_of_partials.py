"""jax.remat of a lambda whose body calls a helper returning a tuple holding a partial sum (a mean over a split dim):
outside the lambda meshify cannot tell the dtype to complete it in (float32-formed for bfloat16 inputs), and it used
to leave as float32 where one device gives bfloat16 (fuzz seed 3216, program 14984, in its lambda form); refused,
saying to call the helper by its name or bind the lambda to a name."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "error"


def helper(v0, ids):
    v6 = jnp.take(jnp.abs(v0), ids, -1, fill_value=1.0)
    return jnp.mean(jnp.square(v6)), v6


@mesh(data=2, model=4, rules={"seq": "data"})
def f(x0: Tensor["batch"], ids: Tensor["seq"]):
    m, v6 = jax.remat(lambda a: helper(a, ids))(x0)
    return m


def inputs():
    rng = np.random.default_rng(3220)
    return rng.standard_normal(3).astype(jnp.bfloat16), np.array([0, 2], np.int32)

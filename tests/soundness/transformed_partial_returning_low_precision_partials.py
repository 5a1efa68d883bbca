"""jax.remat / jax.checkpoint of an inline functools.partial of a helper returning a tuple that holds a partial sum
(a mean over a split dim), bfloat16 inputs: meshify forms such a sum in float32 and casts it back where it is
completed, which needs the dtype the code gives it.  Found by the fuzz (seed 3216, program 14984): the partial was
walked as a lambda, whose call's tuple lost that dtype, and the result left as float32 where one device gives
bfloat16 (a plain lambda there did the same).  Now a partial binding arrays is the helper's own call (its dtypes
followed: bfloat16 out); ``lam``: a lambda returning such a tuple is refused (case transformed_lambda_...)."""
import functools

import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"
TOL = 2e-2


@jax.remat
def helper(v0, x0, ids):
    v2 = v0 * x0
    v6 = jnp.take(jnp.abs(v2), ids, -1, fill_value=1.0)
    return jnp.mean(jnp.square(v6)), v2, jnp.sum(v6)


@mesh(data=2, model=4, rules={"seq": "data"})
def f(x0: Tensor["batch"], x1: Tensor["batch"], ids: Tensor["seq"]):
    v0 = jax.nn.softmax(x0, 0, x1 > 0)
    m, v2, s = jax.remat(functools.partial(helper, ids=ids))(v0, x0)
    return m, v2 * 2, s


@mesh(batch=2, model=4, rules={"d": "model"})
def g(x: Tensor["batch", "d"], w: Tensor["d", "e"]):
    def block(x, w):
        return x @ w, jnp.tanh(x)
    y, t = jax.checkpoint(functools.partial(block, w=w))(x)
    return y, t


def inputs():
    rng = np.random.default_rng(3219)
    x0 = rng.standard_normal(3).astype(jnp.bfloat16)
    return {"f": (x0, x0, np.array([0, 2, -1, 5], np.int32)),
            "g": (rng.standard_normal((4, 8)).astype(jnp.bfloat16), rng.standard_normal((8, 3)).astype(jnp.bfloat16))}

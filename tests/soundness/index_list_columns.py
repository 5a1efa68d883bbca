"""x[:, [0, 2]]: a list of indices is an array index in JAX (the result [batch, 2] has a dim of its
own); meshify took it for an int index (dims [batch]), so the sum over the last axis was taken for a
sum over the split batch: a psum of [2] blocks, shape (2,) where the reference has (16,), silently.
Refused now with the fix (index_named_columns)."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "error"  # the hint says a scalar; JAX gives [batch]: refusing the list index is right


@mesh(model=8, rules={"batch": "model"})
def f(x: Tensor["batch", "d"]) -> Tensor[()]:
    y = x[:, [0, 2]]
    return jnp.sum(y, axis=-1)


def inputs():
    return (np.random.default_rng(0).standard_normal((16, 4)).astype(np.float32) + 1.0,)

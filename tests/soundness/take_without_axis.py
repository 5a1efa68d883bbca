"""``jnp.take(table, ids)`` without ``axis=``: JAX reads the table flattened, so a 1-D table is looked up
along its own dim (split or whole, every mode); before, "jnp.take needs a literal axis=" even for a vector.
A 2-D table without ``axis=`` is ``take_without_axis_2d``'s refusal."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"vocab": "model"})
def f(bias: Tensor["vocab"], ids: Tensor["batch", "seq"]):
    return (jnp.take(bias, ids) * 2.0, jnp.take(bias, ids, axis=None, mode="clip"),
            jnp.take(bias, ids, None, None, "fill", fill_value=-3.0), jnp.take(bias, ids, mode="wrap"))


@mesh(model=8, rules={"vocab": None, "batch": "model"})
def whole(bias: Tensor["vocab"], ids: Tensor["batch"]):
    return jnp.take(bias, ids) + jnp.take(bias, ids[::-1], fill_value=0.0)


def inputs():
    ids = np.array([[0, 1, 63, 64, -1, -64, -65, 200], [5, 31, 32, 33, 7, 8, 9, 10]], np.int32)
    bias = np.linspace(-2.0, 2.0, 64).astype(np.float32)
    return {"f": (bias, ids), "whole": (bias, ids.reshape(-1))}

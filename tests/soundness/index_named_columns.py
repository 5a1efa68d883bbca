"""The fix index_list_columns' refusal gives: the list of columns as an array with a named dim,
cols: Tensor["k"] = jnp.asarray([0, 2]), then x[:, cols] (a lookup along an unsplit dim)."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(model=8, rules={"batch": "model"})
def f(x: Tensor["batch", "d"]) -> Tensor["batch"]:
    cols: Tensor["k"] = jnp.asarray([0, 2])
    y = x[:, cols]
    return jnp.sum(y, axis=-1)


def inputs():
    return (np.random.default_rng(0).standard_normal((16, 4)).astype(np.float32) + 1.0,)

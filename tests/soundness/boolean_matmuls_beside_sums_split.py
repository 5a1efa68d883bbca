"""Matmuls of booleans over a split contraction (@, jnp.matmul, einsum) beside float partial sums: a boolean
matmul's blocks are or-ed across devices (mr.psum of a bool), never summed, so it is completed where it is formed;
before, (m > 0) @ (n > 0) + x @ w and jnp.matmul(m > 0, n > 0) * 2.0 were summed in one psum (a silent wrong result:
2 where one device gives 1; found by helper C's review of the sum regrouping)."""

import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"d": "model"})
def f(
    m: Tensor["batch", "d"], n: Tensor["d", "e"], x: Tensor["batch", "d"], w: Tensor["d", "e"]
) -> Tensor["batch", "e"]:
    a = jnp.matmul(m > 0, n > 0) * 2.0
    b = jnp.einsum("bd,de->be", m > 0.5, n > 0.5).astype(jnp.float32)
    return ((m > 0) @ (n > 0)) + x @ w + a + b


def inputs():
    rng = np.random.default_rng(3507)
    return (
        rng.standard_normal((4, 8)).astype(np.float32),
        rng.standard_normal((8, 6)).astype(np.float32),
        rng.standard_normal((4, 8)).astype(np.float32),
        rng.standard_normal((8, 6)).astype(np.float32),
    )

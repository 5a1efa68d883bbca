"""bfloat16 einsum(precision=HIGHEST, preferred_element_type=float32), matmul and dot_general with preferred_element_type, mean(dtype=float32) over a split d_ff."""

import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"
TOL = 2e-2


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def f(x: Tensor["batch", "d"], w1: Tensor["d", "d_ff"], w2: Tensor["d_ff", "d"]) -> Tensor["batch", "d"]:
    h = jnp.einsum("bd,df->bf", x, w1, precision=jax.lax.Precision.HIGHEST, preferred_element_type=jnp.float32)
    h = jax.nn.relu(h).astype(jnp.bfloat16)
    y = jnp.matmul(h, w2, preferred_element_type=jnp.float32)
    z = jax.lax.dot_general(h, w2, (((1,), (0,)), ((), ())), preferred_element_type=jnp.float32)
    m = jnp.mean(h, axis=-1, dtype=jnp.float32, keepdims=True)
    return (y + z + m).astype(x.dtype)


def inputs():
    rng = np.random.default_rng(23)
    return (
        rng.standard_normal((4, 8)).astype(jnp.bfloat16),
        rng.standard_normal((8, 16)).astype(jnp.bfloat16),
        rng.standard_normal((16, 8)).astype(jnp.bfloat16),
    )

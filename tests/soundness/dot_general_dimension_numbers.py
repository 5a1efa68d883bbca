"""``jax.lax.dot_general`` as low-level and quantised code calls it: a matmul over a split d_ff (a partial sum,
completed at the return), an int8 x int8 contraction accumulating in int32 (``preferred_element_type``), a
batched dot over a split batch (batch dims in the dimension numbers), and a transposed contraction; gradients
through the float ones.  Before, "jax.lax.dot_general has no meshify rule" (found by the user-style attack)."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def f(x: Tensor["batch", "d"], w: Tensor["d", "d_ff"], w2: Tensor["d_ff", "d"], q: Tensor["batch", "d"]):
    h = jax.lax.dot_general(x, w, (((1,), (0,)), ((), ())))
    y = jax.lax.dot_general(jax.nn.relu(h), w2, (((1,), (0,)), ((), ())), preferred_element_type=jnp.float32)
    xi = jnp.round(x * 10).astype(jnp.int8)
    wi = jnp.round(w * 10).astype(jnp.int8)
    acc = jax.lax.dot_general(xi, wi, (((1,), (0,)), ((), ())), preferred_element_type=jnp.int32)
    rows = jax.lax.dot_general(x, q, (((1,), (1,)), ((0,), (0,))))
    t = jax.lax.dot_general(w, x, (((0,), (1,)), ((), ())))
    return y, acc, rows, t


def inputs():
    rng = np.random.default_rng(320)
    return (rng.standard_normal((4, 8)).astype(np.float32), rng.standard_normal((8, 16)).astype(np.float32) * 0.5,
            rng.standard_normal((16, 8)).astype(np.float32) * 0.5, rng.standard_normal((4, 8)).astype(np.float32))

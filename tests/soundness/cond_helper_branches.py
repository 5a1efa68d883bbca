"""jax.lax.cond with module helpers as branches and several operands: a Megatron block (its
result a partial sum, reduced inside the branch) or the identity, by a traced flag."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


def block(x, w1, w2):
    return jax.nn.relu(x @ w1) @ w2


def passthrough(x, w1, w2):
    return x


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def f(x: Tensor["batch", "d"], w1: Tensor["d", "d_ff"], w2: Tensor["d_ff", "d"]) -> Tensor["batch", "d"]:
    use = jnp.mean(x * x) > 0.5
    return jax.lax.cond(use, block, passthrough, x, w1, w2) + jax.lax.cond(~use, block, passthrough, x, w1, w2)


def inputs():
    rng = np.random.default_rng(1403)
    return (rng.standard_normal((4, 8)).astype(np.float32), 0.3 * rng.standard_normal((8, 16)).astype(np.float32),
            0.3 * rng.standard_normal((16, 8)).astype(np.float32))

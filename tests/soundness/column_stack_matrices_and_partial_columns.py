"""jnp.column_stack of matrices (a concatenate along 1) and of partial-sum vectors (stacked as columns), batch and
features split."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"d": "model"})
def f(x: Tensor["batch", "d"], y: Tensor["batch", "e"], u: Tensor["d"], v: Tensor["d"]) -> Tensor["batch", "two"]:
    both = jnp.column_stack([x, y])
    cols: Tensor["batch", "two"] = jnp.column_stack((x @ u, x @ v))
    return cols * jnp.sum(both, axis=1, keepdims=True)


def inputs():
    rng = np.random.default_rng(3501)
    return (rng.standard_normal((4, 8)).astype(np.float32), rng.standard_normal((4, 4)).astype(np.float32),
            rng.standard_normal((8,)).astype(np.float32), rng.standard_normal((8,)).astype(np.float32))

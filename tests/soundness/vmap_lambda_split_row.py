"""jax.vmap of a lambda over a batch-split array whose feature dim is split too: the per-row
norm needs a psum over 'model' inside the mapped function; vmap over the split batch is local."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"d": "model"})
def f(x: Tensor["batch", "d"], scale: Tensor["d"]) -> Tensor["batch", "d"]:
    return jax.vmap(lambda r, s: s * r / jnp.sqrt(jnp.sum(r * r) + 1e-6), in_axes=(0, None))(x, scale)


def inputs():
    rng = np.random.default_rng(1412)
    return (rng.standard_normal((4, 8)).astype(np.float32), rng.standard_normal((8,)).astype(np.float32))

"""jnp.mean(x, axis=0, where=mask) over an unsplit dim while d is split."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"d": "model"})
def f(x: Tensor["n", "d"], mask: Tensor["n", "d"]) -> Tensor["d"]:
    return jnp.mean(x, axis=0, where=mask)


def inputs():
    rng = np.random.default_rng(537)
    x = rng.standard_normal((4, 8)).astype(np.float32)
    return x, x > -0.3

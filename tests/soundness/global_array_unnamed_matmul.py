"""x @ W with W a module-level array used without naming its dims."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "error"  # the contract: name an array's dims before it meets a split one

W = jnp.ones((8, 16))


@mesh(batch=2, model=4, rules={"d": "model"})
def f(x: Tensor["batch", "d"]) -> Tensor["batch", "e"]:
    return x @ W


def inputs():
    return (np.random.default_rng(112).standard_normal((4, 8)).astype(np.float32),)

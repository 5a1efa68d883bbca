"""Model: layer norm over a split d_model (mean, variance, scale and shift), with gradients."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"d_model": "model"})
def f(x: Tensor["batch", "length", "d_model"], g: Tensor["d_model"], b: Tensor["d_model"]) -> Tensor["batch", "length", "d_model"]:
    mu = jnp.mean(x, axis=-1, keepdims=True)
    var = jnp.mean((x - mu) ** 2, axis=-1, keepdims=True)
    return (x - mu) / jnp.sqrt(var + 1e-5) * g + b


def inputs():
    rng = np.random.default_rng(143)
    return (rng.standard_normal((2, 3, 8)).astype(np.float32), rng.standard_normal((8,)).astype(np.float32),
            rng.standard_normal((8,)).astype(np.float32))

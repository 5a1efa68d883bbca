"""A @mesh function calling another @mesh function on the same mesh."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def layer(x: Tensor["batch", "d"], w: Tensor["d", "d_ff"]) -> Tensor["batch", "d_ff"]:
    return jax.nn.relu(x @ w)


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def f(x: Tensor["batch", "d"], w: Tensor["d", "d_ff"], v: Tensor["d_ff", "d"]) -> Tensor["batch", "d"]:
    h = layer(x, w)
    return x + h @ v


def inputs():
    rng = np.random.default_rng(10)
    x = rng.standard_normal((4, 8)).astype(np.float32)
    w = rng.standard_normal((8, 16)).astype(np.float32)
    v = rng.standard_normal((16, 8)).astype(np.float32)
    return {"f": (x, w, v), "layer": (x, w)}

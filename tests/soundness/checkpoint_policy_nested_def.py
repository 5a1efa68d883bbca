"""jax.checkpoint(layer, policy=...) of a nested def, and jax.remat of a module helper, at the call
site inside a Python loop over layers (Megatron MLP: the partial sums reduced inside)."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


def norm(h):
    return h / jnp.sqrt(jnp.mean(h * h, axis=-1, keepdims=True) + 1e-6)


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def f(x: Tensor["batch", "d"], w1: Tensor["layer", "d", "d_ff"], w2: Tensor["layer", "d_ff", "d"]) -> Tensor["batch", "d"]:
    def layer(h, a, b):
        return h + jax.nn.gelu(h @ a) @ b

    for i in range(2):
        x = jax.checkpoint(layer, policy=jax.checkpoint_policies.nothing_saveable)(x, w1[i], w2[i])
        x = jax.remat(norm)(x)
    return x


def inputs():
    rng = np.random.default_rng(1413)
    return (rng.standard_normal((4, 8)).astype(np.float32), 0.3 * rng.standard_normal((2, 8, 16)).astype(np.float32),
            0.3 * rng.standard_normal((2, 16, 8)).astype(np.float32))

"""A module-level helper with a nested scan body def and a nested def it calls; the helper is
specialised per layout and emitted at module level with its nested defs inside."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


def stack(h, w1, w2, scale):
    def mlp(y, a, b):
        return jax.nn.gelu(y @ a) @ b

    def body(carry, ws):
        a, b = ws
        return carry + scale * mlp(carry, a, b), jnp.sum(carry)

    out, sums = jax.lax.scan(body, h, (w1, w2))
    return out, sums


@mesh(batch=2, model=4, rules={"f": "model"})
def f(x: Tensor["batch", "d"], w1: Tensor["layer", "d", "f"], w2: Tensor["layer", "f", "d"]) -> Tensor["batch", "d"]:
    out, sums = stack(x, w1, w2, 0.5)
    return out + jnp.sum(sums)


def inputs():
    rng = np.random.default_rng(1405)
    return (rng.standard_normal((4, 8)).astype(np.float32), rng.standard_normal((3, 8, 16)).astype(np.float32) * 0.3,
            rng.standard_normal((3, 16, 8)).astype(np.float32) * 0.3)

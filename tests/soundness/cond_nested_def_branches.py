"""jax.lax.cond with nested defs as branches, closing over split weights and a mask; the
predicate is a Tensor[()] parameter; one branch leaves a partial sum, the other not."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def f(x: Tensor["batch", "d"], w1: Tensor["d", "d_ff"], w2: Tensor["d_ff", "d"],
      gate: Tensor[()]) -> Tensor["batch", "d"]:
    scale = 0.5

    def mlp(h):
        return jax.nn.gelu(h @ w1) @ w2

    def skip(h):
        return h * scale

    return x + jax.lax.cond(gate > 0, mlp, skip, x)


def inputs():
    rng = np.random.default_rng(1402)
    return (rng.standard_normal((4, 8)).astype(np.float32), 0.3 * rng.standard_normal((8, 16)).astype(np.float32),
            0.3 * rng.standard_normal((16, 8)).astype(np.float32), np.float32(0.7))


def scenario(mod, pick):
    x, w1, w2, gate = inputs()
    fn = pick(mod.f)
    grad = jax.grad(lambda a, b: jnp.sum(fn(a, b, w2, gate) ** 2), argnums=(0, 1))(x, w1)
    return fn(x, w1, w2, gate), fn(x, w1, w2, -gate), grad

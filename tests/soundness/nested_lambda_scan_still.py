"""Lambdas still work beside nested defs: a lambda scan body calling a nested def, and a
lambda fori_loop body."""
import jax
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"f": "model"})
def f(x: Tensor["batch", "d"], w1: Tensor["layer", "d", "f"], w2: Tensor["layer", "f", "d"]) -> Tensor["batch", "d"]:
    def mlp(h, a, b):
        return h + jax.nn.relu(h @ a) @ b

    out, _ = jax.lax.scan(lambda h, ws: (mlp(h, ws[0], ws[1]), None), x, (w1, w2))
    return jax.lax.fori_loop(0, 2, lambda i, h: h * 0.5, out)


def inputs():
    rng = np.random.default_rng(1407)
    return (rng.standard_normal((4, 8)).astype(np.float32), rng.standard_normal((2, 8, 16)).astype(np.float32) * 0.3,
            rng.standard_normal((2, 16, 8)).astype(np.float32) * 0.3)

"""jax.lax.switch on a traced index (an argmax of a batch-split sum, reduced first) over a list of
lambdas and a helper; the branches differ in layout (a partial sum over 'model', whole)."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


def double(h, w1, w2):
    return 2.0 * h


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def f(x: Tensor["batch", "d"], w1: Tensor["d", "d_ff"], w2: Tensor["d_ff", "d"]) -> Tensor["batch", "d"]:
    index = jnp.argmax(jnp.sum(x, axis=0)) % 3
    return jax.lax.switch(index, [lambda h, a, b: jnp.tanh(h @ a) @ b, double,
                                  lambda h, a, b: h + jnp.sum(h, axis=0)], x, w1, w2)


def inputs():
    rng = np.random.default_rng(1404)
    return (rng.standard_normal((4, 8)).astype(np.float32), 0.3 * rng.standard_normal((8, 16)).astype(np.float32),
            0.3 * rng.standard_normal((16, 8)).astype(np.float32))

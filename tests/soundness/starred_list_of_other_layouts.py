"""``[*hs, x]`` where ``hs`` is a list whose length meshify does not know while rewriting and ``x`` has another
layout than its items (``[batch, d_ff]`` items beside a ``[batch, d]`` array): such a list's items are read by one
rewrite of the code (``for h in ys``), so they must share a layout; refused, naming both layouts."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "error"


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def f(x: Tensor["batch", "d"], w1: Tensor["d", "d_ff"], n: int = 3):
    hs = [x @ w1 * i for i in range(n)]
    ys = [*hs, x]
    return [jnp.tanh(y) for y in ys]


def inputs():
    rng = np.random.default_rng(4303)
    return rng.standard_normal((8, 16)).astype(np.float32), rng.standard_normal((16, 32)).astype(np.float32)

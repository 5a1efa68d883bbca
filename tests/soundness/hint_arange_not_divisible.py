"""jnp.arange(n) with a static n = 6 returned under a hint whose dim is split 4 ways."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "error"  # 6 positions cannot be split over 4 devices


@mesh(batch=2, model=4, rules={"k": "model"})
def f(x: Tensor["batch", "d"], n: int) -> tuple[Tensor["batch", "d"], Tensor["k"]]:
    return x * 2.0, jnp.arange(n) * 1.0


def inputs():
    return np.random.default_rng(152).standard_normal((4, 8)).astype(np.float32), 6

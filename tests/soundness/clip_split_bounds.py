"""jnp.clip and x.clip with array bounds split like x or broadcast against it, scalar bounds, one side
only, and a partial sum clipped (it must be completed first: clipping is not linear)."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"d": "model"})
def f(x: Tensor["batch", "model"], lo: Tensor["model"], hi: Tensor["batch", "model"],
      a: Tensor["batch", "d"], w: Tensor["d", "model"]) -> Tensor["batch", "model"]:
    return (jnp.clip(x, lo, hi) + x.clip(max=hi) + jnp.clip(x, min=lo) + x.clip(-0.2, 0.3)
            + jnp.clip(a @ w, -1.0, 1.0))


def inputs():
    rng = np.random.default_rng(117)
    x = rng.standard_normal((4, 8)).astype(np.float32)
    return (x, (0.3 * rng.standard_normal(8)).astype(np.float32),
            x + np.abs(rng.standard_normal((4, 8))).astype(np.float32) - 0.5,
            rng.standard_normal((4, 12)).astype(np.float32), rng.standard_normal((12, 8)).astype(np.float32))

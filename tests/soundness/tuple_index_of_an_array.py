"""An array indexed with a tuple (Gemma's ``table[(ids,)]``; ``w[(1, 2)]``): NumPy reads it as the
indices it holds.  Was refused with a misleading message ("advanced indexing with an array beside indices other
than ':'").  Ids out of range and negative, a vocab split over 'model'.  Found by the attack on new model styles
(session 18)."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"vocab": "model"})
def f(table: Tensor["vocab", "d_model"], ids: Tensor["batch", "length"], w: Tensor["d_model", "e"]):
    h = table[(ids,)] * jnp.sqrt(16.0)
    return h @ w + w[(0,)], w[(1, 2)] * h


def inputs():
    rng = np.random.default_rng(443)
    return (rng.standard_normal((64, 16)).astype(np.float32), rng.integers(-70, 70, (4, 8)).astype(np.int32),
            rng.standard_normal((16, 8)).astype(np.float32))

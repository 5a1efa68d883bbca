"""``jnp.sum(..., initial=c)`` where the sum is a partial sum over several axes: a split contraction's
result (partial over 'model') summed over a batch split over 'data' (``initial`` counted once, not on each of
the 8 devices), the method form ``x.sum(initial=...)``, an int sum, and ``initial`` beside ``where=``."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(data=2, model=4, rules={"batch": "data", "d": "model"})
def f(x: Tensor["batch", "d"], w: Tensor["d", "e"], n: Tensor["batch", "d"]) -> tuple[Tensor["e"], Tensor[()],
                                                                                     Tensor[()]]:
    h = x @ w
    s = jnp.sum(h, axis=0, initial=2.5)
    t = x.sum(initial=-1.0, where=x > 0)
    c = jnp.sum((n > 0).astype(jnp.int32), initial=3)
    return s, t, c.astype(jnp.float32)


def inputs():
    rng = np.random.default_rng(33)
    return (rng.standard_normal((4, 8)).astype(np.float32), rng.standard_normal((8, 3)).astype(np.float32),
            rng.standard_normal((4, 8)).astype(np.float32))

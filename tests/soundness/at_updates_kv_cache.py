"""A key/value cache updated as decoding code writes it: ``cache.at[:, pos].set(new)`` with ``pos`` a
traced integer (a scalar picks like an int), then in a ``fori_loop`` at the loop's counter, the cache
split over batch and heads.  Before, "attribute .at of array"."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(data=2, model=4, rules={"batch": "data", "heads": "model"})
def f(cache: Tensor["batch", "seq", "heads", "k"], new: Tensor["batch", "heads", "k"], pos: Tensor[()]):
    cache = cache.at[:, pos].set(new)

    def step(t, c):
        return c.at[:, t + 1].add(new * 0.5)

    cache = jax.lax.fori_loop(0, 3, step, cache)
    return jnp.mean(cache ** 2) + jnp.mean(cache.at[:, pos].get())


def inputs():
    rng = np.random.default_rng(47)
    return (rng.standard_normal((4, 6, 8, 2)).astype(np.float32), rng.standard_normal((4, 8, 2)).astype(np.float32),
            np.int32(2))

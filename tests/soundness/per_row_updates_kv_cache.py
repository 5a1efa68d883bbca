"""Batched decoding's cache, one position per sequence: ``cache.at[jnp.arange(B), pos].set(new)`` and
``.add``, the batch and heads split (new arriving with heads whole: sliced on its way in), positions
negative (wrapped) and out of range (the scatter drops them, as on one device), and a per-(row, step)
update through the ``[:, None]``/``[None, :]`` grids; gradients through cache and new.  Before, "with the
array index (a scatter)"."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(data=2, model=4, rules={"batch": "data", "heads": "model"})
def f(cache: Tensor["batch", "seq", "heads", "k"], new: Tensor["batch", "heads", "k"], pos: Tensor["batch"],
      table: Tensor["batch", "seq", "slot"], slots: Tensor["batch", "seq"]):
    B, S = cache.shape[0], cache.shape[1]
    whole: Tensor["batch", "heads", "k"] = jnp.tanh(new)
    cache = cache.at[jnp.arange(B), pos].set(whole)
    cache = cache.at[jnp.arange(B), pos - 1].add(new * 0.5)
    table = table.at[jnp.arange(B)[:, None], jnp.arange(S)[None, :], slots].multiply(2.0)
    return jnp.mean(cache ** 2) + jnp.mean(table ** 2)


def inputs():
    rng = np.random.default_rng(97)
    return (rng.standard_normal((4, 6, 8, 2)).astype(np.float32), rng.standard_normal((4, 8, 2)).astype(np.float32),
            np.array([0, 5, -2, 9], np.int32), rng.standard_normal((4, 6, 3)).astype(np.float32),
            rng.integers(-4, 5, (4, 6)).astype(np.int32))

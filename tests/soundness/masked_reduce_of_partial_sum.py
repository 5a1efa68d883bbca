"""Masked reductions of a partial sum over unsplit dims: ``jnp.min(h, where=..., initial=...)`` of ``h = x @
w`` with the contraction split (h made whole first), ``jnp.mean(h, where=...)`` (linear: the masked mean of
each device's part, summed later; a mask of one entry, ``col[:2][:1] > 0``, broadcast), ``jnp.max(h, initial=...)``.  Found by the fuzzer: "min(where=...) on
'v0' ... is a partial sum"."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"d": "model"})
def f(x: Tensor["batch", "d"], w: Tensor["d", "e"], keep: Tensor["batch", "e"], col: Tensor["e"]
      ) -> tuple[Tensor["batch"], Tensor["batch"], Tensor["batch"], Tensor["batch"]]:
    h = x @ w
    return (jnp.min(h, axis=-1, where=h > -0.5, initial=0.0), jnp.mean(h, axis=-1, where=keep),
            jnp.max(h, axis=1, initial=0.25), jnp.mean(h, axis=-1, where=col[:2][:1] > 0))


def inputs():
    rng = np.random.default_rng(3)
    return (rng.standard_normal((4, 8)).astype(np.float32), rng.standard_normal((8, 5)).astype(np.float32),
            rng.random((4, 5)) > 0.3, rng.standard_normal(5).astype(np.float32))

"""``jnp.append`` of a split array, as users write it (it had no rule: refused as "a Python list built up
statement by statement"): along the split dim with whole columns (the split one gathered, joined whole),
along the split dim with another array split alike (re-blocked, kept split), along an unsplit dim (local),
and without ``axis=`` (both flattened: the split one gathered whole first, a number appended too), on a 2x4
and a 1x8 mesh, with gradients."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


def _appends(a, b, w, r):
    along = jnp.append(a, w, axis=1)
    alike = jnp.append(a, b * 2.0, axis=-1)
    rows = jnp.append(a, r, axis=0)
    flat = jnp.append(jnp.tanh(a), w)
    number = jnp.append(b, 1.5)
    return along * 0.5, alike, rows, flat, jnp.sum(number ** 2)


@mesh(batch=2, model=4, rules={"d": "model"})
def f(a: Tensor["batch", "d"], b: Tensor["batch", "d"], w: Tensor["batch", "e"], r: Tensor["more", "d"]):
    return _appends(a, b, w, r)


@mesh(batch=1, model=8, rules={"d": "model"})
def g(a: Tensor["batch", "d"], b: Tensor["batch", "d"], w: Tensor["batch", "e"], r: Tensor["more", "d"]):
    return _appends(a, b, w, r)


def inputs():
    rng = np.random.default_rng(1439)

    def args(d):
        return (rng.standard_normal((4, d)).astype(np.float32), rng.standard_normal((4, d)).astype(np.float32),
                rng.standard_normal((4, 3)).astype(np.float32), rng.standard_normal((3, d)).astype(np.float32))

    return {"f": args(8), "g": args(16)}

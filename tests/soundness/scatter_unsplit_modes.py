"""Scatters along an unsplit dim keep the user's ``mode=`` and promises (each device runs the same scatter
on its block): ``mode="clip"`` clamps out-of-range ids, ``unique_indices=True``; the batch split, float16
values (a float16 array updated)."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(data=8, rules={"batch": "data"})
def f(x: Tensor["batch", "seq"], cols: Tensor["k"], v: Tensor["batch", "k"]):
    a = x.at[:, cols].add(v, mode="clip")
    b = x.astype(jnp.float16).at[:, cols].set(v.astype(jnp.float16), unique_indices=True)
    return jnp.sum(a ** 2) + jnp.sum(b.astype(jnp.float32) ** 2)


def inputs():
    rng = np.random.default_rng(7)
    return (rng.standard_normal((8, 5)).astype(np.float32), np.array([0, 9, -1], np.int32),
            rng.standard_normal((8, 3)).astype(np.float32))

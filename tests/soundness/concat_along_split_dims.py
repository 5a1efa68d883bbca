"""``jnp.concatenate`` along a dim split in every operand: two images of different heights joined over the
split height (8 and 16 rows over 4 devices: 6 per device after), three pieces over split width, one
operand whole along the joined dim (its size unknown when rewriting: the split one gathered along it and
the join done whole), and a gradient through all of it.  Before, the joined dim was gathered whole on every
device."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(h=4, w=2, rules={"h2": "h"})
def f(x: Tensor["b", "h", "w"], y: Tensor["b", "h2", "w"], z: Tensor["b", "h", "w3"]):
    tall = jnp.concatenate([x, jnp.tanh(y)], axis=1)
    wide = jnp.concatenate([x, x * 2.0, jnp.sin(x)], axis=-1)
    both = jnp.concatenate([wide, z], axis=2)
    weights = jnp.arange(tall.shape[1], dtype=jnp.float32)[None, :, None]
    return jnp.sum(tall * weights) + jnp.sum(both ** 2) * 0.1


def inputs():
    rng = np.random.default_rng(46)
    return (rng.standard_normal((2, 8, 4)).astype(np.float32), rng.standard_normal((2, 16, 4)).astype(np.float32),
            rng.standard_normal((2, 8, 6)).astype(np.float32))

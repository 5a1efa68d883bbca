"""where= masks of an array's trailing dims (broadcast over the leading ones) in jnp.any/all, jnp.var/std and
jnp.prod over split dims: each device's block of the mask broadcasts against its block of the array (was refused:
'where= beside an array of dims', found by the fuzz generator's statistic op)."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"d": "model"})
def f(x: Tensor["batch", "seq", "d"], m: Tensor["seq", "d"], keep: Tensor["d"]):
    a = jnp.any(x > 1.0, axis=-1, where=m > 0)
    b = jnp.all(x > -2.0, axis=(0, 2), where=keep > -0.5)
    v = jnp.var(x, axis=-1, where=m > -0.5)
    s = jnp.std(x, axis=1, where=keep > -0.5)
    p = jnp.prod(1.0 + 0.1 * x, axis=-1, where=keep > 0)
    return jnp.where(a, v, -v) + jnp.where(b, 1.0, 0.0)[None, :], s, p


def inputs():
    rng = np.random.default_rng(3506)
    return (rng.standard_normal((4, 3, 8)).astype(np.float32), rng.standard_normal((3, 8)).astype(np.float32),
            rng.standard_normal((8,)).astype(np.float32))

"""float16 features joined along their split dim with whole float16 columns and a whole float32 one (the
result float32, as jnp.concatenate promotes), on a 2x4 and a 1x8 mesh, with NaN and inf in the whole
columns kept where they are: the split operand gathered along the dim, the join done whole (no cast of a
block, no rounding a single device would not do), gradients through the gather."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"
TOL = 2e-2


def _join(h, w, c):
    joined = jnp.concatenate([jnp.tanh(h), w], axis=-1)
    mixed = jnp.concatenate([c, h * 0.5, c], axis=1)
    return joined, jnp.sum(mixed * mixed, axis=-1)


@mesh(batch=2, model=4, rules={"d": "model"})
def f(h: Tensor["batch", "d"], w: Tensor["batch", "e"], c: Tensor["batch", "one"]):
    return _join(h, w, c)


@mesh(batch=1, model=8, rules={"d": "model"})
def g(h: Tensor["batch", "d"], w: Tensor["batch", "e"], c: Tensor["batch", "one"]):
    return _join(h, w, c)


def inputs():
    rng = np.random.default_rng(1437)

    def args(d):
        w = rng.standard_normal((4, 3)).astype(np.float16)
        w[1, 2], w[3, 0] = np.nan, np.inf
        return (rng.standard_normal((4, d)).astype(np.float16), w, rng.standard_normal((4, 1)).astype(np.float32))

    return {"f": args(8), "g": args(8)}

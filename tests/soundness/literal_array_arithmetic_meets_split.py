"""A literal-shape array computed before it meets named values (``jnp.arange(16) * 0.0625``,
``jnp.ones((8,)) / 8``): its shape was lost at the first arithmetic, so it could not be lined up with a
split dim (refused) and a value it joined lost its dims (``one_hot(ids, v.shape[0])`` then refused);
found by the fuzzer, seed 2036 program 1682."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(model=8)
def f(x0: Tensor["batch"], x1: Tensor["batch"], ids: Tensor["batch", "seq"], w: Tensor["seq", "model"]):
    v0: Tensor["batch_cat"] = jnp.concatenate((x0, x1), axis=0)
    v1 = v0 + jnp.arange(16, dtype=jnp.float32) * 0.0625
    v2: Tensor["batch", "seq", "batch_cat"] = jax.nn.one_hot(ids, v1.shape[0])
    ramp = jnp.ones((8,), jnp.float32) / 8 + jnp.arange(8.0) * 0.01
    y = w * ramp          # [seq, model], model split: the ramp's block on each device
    return jnp.einsum("abc,c->ab", v2, v1), jnp.sum(y)


def inputs():
    rng = np.random.default_rng(24)
    return (rng.standard_normal(8).astype(np.float32), rng.standard_normal(8).astype(np.float32),
            rng.integers(0, 16, (8, 4)).astype(np.int32), rng.standard_normal((4, 8)).astype(np.float32))

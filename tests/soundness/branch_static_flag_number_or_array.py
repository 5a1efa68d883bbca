"""T5's relative_position_bucket: ``ret = 0`` and ``ret += ...`` under a flag the helper is called with
(True once, False once): a number after one branch, an array after the other."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


def bucket(rel, bidirectional, n):
    ret = 0
    if bidirectional:
        n //= 2
        ret += (rel < 0).astype(jnp.int32) * n
        rel = jnp.abs(rel)
    else:
        rel = jnp.maximum(rel, 0)
    return ret + jnp.minimum(rel, n - 1)


@mesh(batch=2, model=4, rules={"heads": "model"})
def f(table: Tensor["buckets", "heads"], x: Tensor["batch", "length"]) -> Tensor["heads", "length", "length"]:
    pos = jnp.arange(x.shape[1])
    rel = pos[None, :] - pos[:, None]
    both = table[bucket(rel, True, table.shape[0])]
    causal = table[bucket(rel, False, table.shape[0])]
    return jnp.transpose(both + 2.0 * causal, (2, 0, 1))


def inputs():
    rng = np.random.default_rng(274)
    return rng.standard_normal((8, 4)).astype(np.float32), np.zeros((4, 6), np.float32)

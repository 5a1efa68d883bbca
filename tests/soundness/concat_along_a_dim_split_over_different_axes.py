"""Two arrays joined along a dim split over a different mesh axis in each ("d" over model, "e" over batch),
and a split one joined with a whole one whose size is a known multiple of the devices (``dims=``): the first
gathered along the joined dim in both and joined whole (their blocks are not blocks of one split), the
second kept split (the whole one cut to its blocks locally, the result re-blocked, never the devices' blocks
side by side, [a0 b0 | a1 b1], a permutation of the global result).  Gradients through both."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"d": "model", "e": "batch"}, dims={"k": 4})
def f(a: Tensor["rows", "d"], b: Tensor["rows", "e"], c: Tensor["rows", "k"]):
    crossed = jnp.concatenate([a, b], axis=-1)
    kept = jnp.concatenate([c * 3.0, a], axis=1)
    return crossed * jnp.arange(crossed.shape[1], dtype=jnp.float32), kept[:, ::3] + 1.0


def inputs():
    rng = np.random.default_rng(1438)
    return (rng.standard_normal((3, 8)).astype(np.float32), rng.standard_normal((3, 6)).astype(np.float32),
            rng.standard_normal((3, 4)).astype(np.float32))

"""A decode step building its positions in place, as generation code does: ``jnp.full((B, 1), pos)``
(the literal 1 a size-1 dim beside batch), rotary angles by ``jnp.einsum("bl,f->blf", positions,
inv_freq)`` with ``inv_freq`` from ``jnp.arange`` (its dim lines up with d_half where the angles meet x),
``jnp.zeros((B, 1)) + pos``; batch split over 'batch', heads over 'model'; gradients through x.  Before,
"'*' lines up dim 'einsum_b' of 'cos' with dim 'batch'"."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"heads": "model"})
def f(x: Tensor["batch", "length", "heads", "d_half"], pos: Tensor[()]) -> Tensor["batch", "length", "heads", "d_half"]:
    B = x.shape[0]
    positions = jnp.full((B, 1), pos)
    inv_freq = 1.0 / (10000.0 ** (jnp.arange(4, dtype=jnp.float32) / 4))
    ang = jnp.einsum("bl,f->blf", positions.astype(jnp.float32), inv_freq)
    shift = jnp.zeros((B, 1)) + pos
    return x * jnp.cos(ang)[:, :, None, :] + shift[:, :, None, None]


def inputs():
    rng = np.random.default_rng(307)
    return rng.standard_normal((4, 1, 8, 4)).astype(np.float32), np.float32(3.0)

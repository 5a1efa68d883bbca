"""Masked reductions over split dims, as training code writes a masked loss: ``jnp.mean(loss,
where=mask)`` over a batch split 8 ways (some devices' blocks masked out entirely, a NaN where the mask
is False, float16 losses averaged in float32 as jnp.mean does, ``dtype=``, ``keepdims=True``), a mean over
every dim, ``jnp.max(where=..., initial=...)`` with ties across devices (their gradient shared as JAX
shares it) and ``jnp.min(initial=...)`` alone; gradients through the losses.  Before, "jnp.mean(where=...)
over a split dim" was refused."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(data=8, rules={"batch": "data"})
def f(loss: Tensor["batch", "seq"], mask: Tensor["batch", "seq"]) -> tuple[Tensor[()], Tensor["seq"], Tensor["seq"],
                                                                         Tensor[()], Tensor["seq"], Tensor["seq"]]:
    total = jnp.mean(loss, where=mask)
    per_pos = jnp.mean(loss, axis=0, where=mask)
    half = jnp.mean(loss.astype(jnp.float16), axis=0, where=mask, dtype=jnp.float32)
    kept = jnp.mean(jnp.tanh(loss), axis=(0, 1), where=mask, keepdims=True)[0, 0]
    top = jnp.max(jnp.round(loss), axis=0, where=mask, initial=-5.0)
    low = jnp.min(jnp.nan_to_num(loss), axis=0, initial=0.0)  # (a NaN min's gradient: eager and jit differ in JAX)
    return total, jnp.where(jnp.isnan(per_pos), -9.0, per_pos), half, kept, top, low


def inputs():
    rng = np.random.default_rng(13)
    loss = rng.standard_normal((16, 4)).astype(np.float32)
    mask = rng.random((16, 4)) > 0.3
    mask[:6] = False          # the first three devices' rows masked out
    mask[:, 3] = False        # a position masked out on every row: its mean is NaN
    loss[0, 0] = np.nan       # a NaN where the mask is False: left out
    loss[10, 1] = loss[14, 1] = 3.0   # ties across devices for the max
    mask[10, 1] = mask[14, 1] = True
    return loss, mask

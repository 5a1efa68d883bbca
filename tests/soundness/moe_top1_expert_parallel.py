"""A mixture-of-experts layer as public code writes a simple one: softmax gating, top-1 routing by argmax
and one_hot, dispatch and combine by einsum, experts split over 'model' (expert parallelism), a load
balancing auxiliary loss from the mean gate and the mean assignment."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(data=2, model=4, rules={"batch": "data", "experts": "model"})
def f(x: Tensor["batch", "seq", "d_model"], wg: Tensor["d_model", "experts"],
      w1: Tensor["experts", "d_model", "d_ff"], w2: Tensor["experts", "d_ff", "d_model"]):
    gates = jax.nn.softmax(jnp.einsum("btd,de->bte", x, wg), axis=-1)
    choice = jnp.argmax(gates, axis=-1)
    mask = jax.nn.one_hot(choice, gates.shape[-1], dtype=x.dtype)
    weight = jnp.sum(gates * mask, axis=-1, keepdims=True)
    routed = jnp.einsum("bte,btd->ebtd", mask, x)
    h = jax.nn.gelu(jnp.einsum("ebtd,edf->ebtf", routed, w1))
    out = jnp.einsum("ebtf,efd->ebtd", h, w2)
    combined = jnp.einsum("ebtd,bte->btd", out, mask) * weight
    aux = gates.shape[-1] * jnp.sum(jnp.mean(gates, axis=(0, 1)) * jnp.mean(mask, axis=(0, 1)))
    return jnp.mean(combined ** 2) + 0.01 * aux


def inputs():
    rng = np.random.default_rng(13)
    return (rng.standard_normal((4, 3, 8)).astype(np.float32), rng.standard_normal((8, 4)).astype(np.float32),
            0.3 * rng.standard_normal((4, 8, 16)).astype(np.float32),
            0.3 * rng.standard_normal((4, 16, 8)).astype(np.float32))

# Bad input: micro-batches of 4 rows cut from a batch of 8 split over 8 devices (1 row each).
# expect: CallError at 13:5 naming a reshape of a split dim failed on a device's block
# call: x=8x4
import jax
import jax.numpy as jnp
from meshify import Tensor, mesh

N_MICRO = 2


@mesh(data=8, rules={"batch": "data", "micro_batch": "data"})
def f(x: Tensor["batch", "d"]):
    mb: Tensor["micro", "micro_batch", "d"] = jnp.swapaxes(x.reshape(-1, N_MICRO, x.shape[1]), 0, 1)
    total, _ = jax.lax.scan(lambda c, m: (c + jnp.sum(m ** 2), None), jnp.float32(0), mb)
    return total

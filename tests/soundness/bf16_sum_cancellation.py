"""bfloat16 row sums over a split dim whose per-device partial sums need more bits than bfloat16 has.

jnp.sum accumulates bfloat16 in float32 and rounds once; the row sums here are small
integers, exact in bfloat16.  Each device's partial sum (257 or -256) is not: rounded to
bfloat16 before the cross-device sum, 257 becomes 256 and the row sums lose 1.
"""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(model=8, rules={"d": "model"})
def f(x: Tensor["batch", "d"]) -> Tensor["batch"]:
    return jnp.sum(x, axis=1)


def inputs():
    block = np.array([[256.0, 1.0], [-128.0, -128.0]])           # partial sums 257 and -256
    x = np.tile(block.reshape(1, 4), (2, 4)).astype(jnp.bfloat16)  # [2, 16]: 8 devices, 2 columns each
    return (x,)

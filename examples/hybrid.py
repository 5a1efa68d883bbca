"""A Transformer feed-forward block on a 2x4 mesh: data parallel x Megatron model parallel.

The batch is split over mesh axis ``batch`` (2), the hidden dim ``d_ff`` over ``model``
(4).  Each device computes its slice of the hidden layer without talking to anyone; the
second matmul contracts the split ``d_ff`` and leaves a partial sum, which meshify
reduces once, right before the residual add: one all-reduce of the per-device
[batch/2, length, d_model] activation.

    python examples/hybrid.py
    meshify diff examples/hybrid.py     # the generated shard_map program
"""

import os
import sys
from typing import Annotated

os.environ.setdefault("JAX_PLATFORMS", "cpu")  # before jax is imported

import jax
import jax.numpy as jnp
import numpy as np

from meshify import mesh
from meshify.runtime import simulate_cpu_devices

simulate_cpu_devices(8)  # before any JAX operation


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def ffn_block(x: Annotated[jax.Array, "batch", "length", "d_model"],
              w1: Annotated[jax.Array, "d_model", "d_ff"],
              b1: Annotated[jax.Array, "d_ff"],
              w2: Annotated[jax.Array, "d_ff", "d_model"]) -> Annotated[jax.Array, "batch", "length", "d_model"]:
    h = jax.nn.gelu(jnp.einsum("bld,df->blf", x, w1) + b1)
    return x + jnp.einsum("blf,fd->bld", h, w2)


def main() -> int:
    from _report import report

    batch, length, d_model, d_ff = 4, 8, 16, 64
    rng = np.random.default_rng(0)
    x = rng.standard_normal((batch, length, d_model), dtype=np.float32)
    w1 = rng.standard_normal((d_model, d_ff), dtype=np.float32) / np.sqrt(d_model)
    b1 = rng.standard_normal((d_ff,), dtype=np.float32)
    w2 = rng.standard_normal((d_ff, d_model), dtype=np.float32) / np.sqrt(d_ff)
    return report(ffn_block, (x, w1, b1, w2))


if __name__ == "__main__":
    sys.exit(main())

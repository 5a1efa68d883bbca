"""Megatron-style model parallelism for a feed-forward layer on 4 devices.

The hidden dim ``d_ff`` is split over mesh axis ``model``: ``w1`` by columns, ``b1`` and
``w2`` by rows.  Each device computes a quarter of the hidden units, and the second
matmul leaves a partial sum that meshify reduces once: one all-reduce of the output.
Nothing is split over the batch, so every device sees the whole (replicated) input.

    python examples/ffn_model_parallel.py
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


@mesh(model=4, rules={"d_ff": "model"})
def ffn(x: Annotated[jax.Array, "tokens", "d_model"],
        w1: Annotated[jax.Array, "d_model", "d_ff"],
        b1: Annotated[jax.Array, "d_ff"],
        w2: Annotated[jax.Array, "d_ff", "d_model"]) -> Annotated[jax.Array, "tokens", "d_model"]:
    h = jax.nn.relu(jnp.dot(x, w1) + b1)
    return jnp.dot(h, w2)


def main() -> int:
    from _report import report

    tokens, d_model, d_ff = 8, 16, 64
    rng = np.random.default_rng(0)
    x = rng.standard_normal((tokens, d_model), dtype=np.float32)
    w1 = rng.standard_normal((d_model, d_ff), dtype=np.float32) / np.sqrt(d_model)
    b1 = rng.standard_normal((d_ff,), dtype=np.float32) * 0.1
    w2 = rng.standard_normal((d_ff, d_model), dtype=np.float32) / np.sqrt(d_ff)
    print(ffn.explain())
    return report(ffn, (x, w1, b1, w2))


if __name__ == "__main__":
    sys.exit(main())

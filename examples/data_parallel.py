"""Pure data parallelism: a 2-layer MLP with the batch split over 8 devices.

Only the batch dim is split, so the forward pass needs no communication at all: every
device runs the whole MLP on its eighth of the batch with replicated weights.  The
gradients of a mean-squared loss still match the single-device ones: JAX sums each
replicated weight's gradient over the devices (the all-reduce of data parallelism
appears in the backward program, not in anything meshify writes).

    python examples/data_parallel.py
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


@mesh(batch=8)
def mlp(x: Annotated[jax.Array, "batch", "d_in"],
        w1: Annotated[jax.Array, "d_in", "d_hidden"],
        b1: Annotated[jax.Array, "d_hidden"],
        w2: Annotated[jax.Array, "d_hidden", "d_out"]) -> Annotated[jax.Array, "batch", "d_out"]:
    h = jax.nn.relu(x @ w1 + b1)
    return h @ w2


def mse(forward, params, x, y):
    """Mean-squared error of ``forward(x, *params)`` against ``y``."""
    return jnp.mean((forward(x, *params) - y) ** 2)


def main() -> int:
    from _report import print_collectives, report

    batch, d_in, d_hidden, d_out = 16, 8, 32, 4
    rng = np.random.default_rng(0)
    x = rng.standard_normal((batch, d_in), dtype=np.float32)
    y = rng.standard_normal((batch, d_out), dtype=np.float32)
    params = (rng.standard_normal((d_in, d_hidden), dtype=np.float32) / np.sqrt(d_in),
              rng.standard_normal((d_hidden,), dtype=np.float32) * 0.1,
              rng.standard_normal((d_hidden, d_out), dtype=np.float32) / np.sqrt(d_hidden))

    grad = jax.jit(jax.grad(lambda p: mse(mlp, p, x, y)))
    grads = grad(params)
    want = jax.grad(lambda p: mse(mlp.reference, p, x, y))(params)
    status = report(mlp, (x, *params), extra={f"grad {name}": (g, w)
                                              for name, g, w in zip(("w1", "b1", "w2"), grads, want, strict=True)})
    print_collectives("collectives in the compiled gradient program (not asserted)",
                      grad.lower(params).compile().as_text())
    return status


if __name__ == "__main__":
    sys.exit(main())

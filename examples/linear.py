"""A linear layer with its input dim split: y = x @ w on a 2x4 mesh.

``d_in`` is split over mesh axis ``model`` in both ``x`` and ``w``, so each device
multiplies its own slice and holds a partial sum of ``y``; meshify inserts one psum over
``model`` (one all-reduce) for the return value.  The batch is split over ``batch``.

    python examples/linear.py
"""

import os
import sys
from typing import Annotated

os.environ.setdefault("JAX_PLATFORMS", "cpu")  # before jax is imported

import jax
import numpy as np

from meshify import mesh
from meshify.runtime import simulate_cpu_devices

simulate_cpu_devices(8)  # before any JAX operation


@mesh(batch=2, model=4, rules={"d_in": "model"})
def linear(x: Annotated[jax.Array, "batch", "d_in"],
           w: Annotated[jax.Array, "d_in", "d_out"]) -> Annotated[jax.Array, "batch", "d_out"]:
    return x @ w


def main() -> int:
    from _report import report

    batch, d_in, d_out = 4, 32, 8
    rng = np.random.default_rng(0)
    x = rng.standard_normal((batch, d_in), dtype=np.float32)
    w = rng.standard_normal((d_in, d_out), dtype=np.float32) / np.sqrt(d_in)
    print(linear.source)
    return report(linear, (x, w))


if __name__ == "__main__":
    sys.exit(main())

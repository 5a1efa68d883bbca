"""Optional arrays of the @mesh function itself: `bias: Tensor["f"] | None = None` and
`Optional[Annotated[...]]`; None vs an array is decided per call (each version rewrites only the
branch Python takes), called both ways in one scenario."""
from typing import Annotated, Optional

import jax
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"f": "model"})
def f(x: Tensor["batch", "d"], w: Tensor["d", "f"], bias: Tensor["f"] | None = None,
      gate: Optional[Annotated[jax.Array, "batch", "f"]] = None) -> Tensor["batch", "f"]:
    h = x @ w
    if bias is not None:
        h = h + bias
    h = jax.nn.relu(h)
    return h if gate is None else h * jax.nn.sigmoid(gate)


def inputs():
    rng = np.random.default_rng(1415)
    return (rng.standard_normal((4, 8)).astype(np.float32), rng.standard_normal((8, 12)).astype(np.float32),
            rng.standard_normal((12,)).astype(np.float32), rng.standard_normal((4, 12)).astype(np.float32))


def scenario(mod, pick):
    x, w, b, g = inputs()
    fn = pick(mod.f)
    return fn(x, w), fn(x, w, b), fn(x, w, gate=g), fn(x, w, b, g)

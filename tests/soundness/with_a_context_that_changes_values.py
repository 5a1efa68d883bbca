"""``with jax.default_matmul_precision("bfloat16"):`` changes what the matmuls inside compute; meshify models only
contexts that leave the values as they are (a named scope, a profiler annotation), so it refuses this one, naming
it, rather than rewriting the body as if it were not there."""
import jax
import numpy as np

from meshify import Tensor, mesh

EXPECT = "error"


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def f(x: Tensor["batch", "d"], w: Tensor["d", "d_ff"]):
    with jax.default_matmul_precision("bfloat16"):
        return x @ w


def inputs():
    return (np.ones((4, 8), np.float32), np.ones((8, 16), np.float32))

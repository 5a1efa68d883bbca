"""Optional arrays as helpers take them: `bias=None` with `if bias is None:`, and a conditional
expression on `pos is None`; the helper is specialised on None vs an array (each version
rewrites only the branch Python takes)."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


def dense(x, w, bias=None, pos=None):
    h = x @ w
    if bias is None:
        h = jax.nn.relu(h)
    else:
        h = jax.nn.relu(h + bias)
    return h if pos is None else h * pos


@mesh(batch=2, model=4, rules={"d": "model"})
def f(x: Tensor["batch", "d"], w: Tensor["d", "f"], b: Tensor["f"], p: Tensor["batch", "f"]) -> Tensor["batch", "f"]:
    if p is None:
        raise ValueError("p is required")
    return dense(x, w) + dense(x, w, b, pos=p)


def inputs():
    rng = np.random.default_rng(1413)
    return (rng.standard_normal((4, 8)).astype(np.float32), rng.standard_normal((8, 6)).astype(np.float32),
            rng.standard_normal((6,)).astype(np.float32), rng.standard_normal((4, 6)).astype(np.float32))

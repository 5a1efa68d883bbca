"""A helper called in a loop whose carry changes layout on the first iteration (``h`` enters split over
'model' and ``step`` returns it whole): the interpreter walks the body once, undoes that walk and walks it
again with the carry whole.  The version made on the undone walk (for a split ``h``) is called
by nothing and is left out of the converted file; the Python loop, the fori_loop and the scan call the
version for a whole ``h``, and every result matches one device."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


def step(h, w):
    return jnp.tanh(h @ w)


@mesh(batch=2, model=4, rules={"f": "model"})
def f(x: Tensor["batch", "d"], w1: Tensor["d", "f"], w: Tensor["f", "f"]) -> Tensor["batch", "f"]:
    h = x @ w1
    for _ in range(2):
        h = step(h, w)
    g = jax.lax.fori_loop(0, 2, lambda i, c: step(c, w), x @ w1)

    def body(c, _):
        return step(c, w), None

    k, _ = jax.lax.scan(body, x @ w1, None, length=2)
    return h + g * 0.5 + k * 0.25


def inputs():
    rng = np.random.default_rng(3501)
    return (rng.standard_normal((4, 8)).astype(np.float32), (rng.standard_normal((8, 16)) * 0.3).astype(np.float32),
            (rng.standard_normal((16, 16)) * 0.3).astype(np.float32))

"""``d.get("acc", x)`` in a Python loop whose body stores ``d["acc"]``, ``d`` holding no such key when the loop
starts: the first iteration reads the default (``x``, split along ``ff``), the others what the body stored (whole),
but the body is rewritten once, for the default: the second iteration contracted a whole value with a block of
``w`` (a raw JAX error from the generated code).  Refused instead, naming the key, both layouts and a fix (store the
key before the loop: dict_of_partial_sums_carried_by_a_loop then converts it where the body needs)."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "error"


@mesh(batch=2, model=4, rules={"ff": "model"})
def f(x: Tensor["batch", "ff"], w: Tensor["ff", "ff"], hs: list[Tensor["batch", "ff"]]):
    d = {}
    for _ in hs:
        d["acc"] = jnp.tanh(d.get("acc", x) @ w)
    return d["acc"]


def inputs():
    rng = np.random.default_rng(73)
    return (rng.standard_normal((4, 16)).astype(np.float32), (rng.standard_normal((16, 16)) * 0.3).astype(np.float32),
            [rng.standard_normal((4, 16)).astype(np.float32) for _ in range(3)])

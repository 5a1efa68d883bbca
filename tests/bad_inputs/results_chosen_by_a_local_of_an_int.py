# Bad input: results chosen by a local computed from an int parameter (no flag: one program, whose out_specs
# can be chosen per call by static parameters only).
# expect: LayoutError at 12:8 naming a name it binds
import jax.numpy as jnp
from meshify import Tensor, mesh


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def f(x: Tensor["batch", "d_model"], w: Tensor["d_model", "d_ff"], *, depth: int):
    h = jnp.tanh(x @ w)
    want = depth > 2
    if want:
        return h.sum(-1), h
    return h.sum(-1)

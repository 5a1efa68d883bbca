# Bad input: a break leaves a value the code reads after the loop in other dims than the body's end does.
# expect: LayoutError at 13:13 naming at this 'break'
import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def f(x: Tensor["batch", "d"], ws: tuple[Tensor["d", "d_ff"], ...], vs: tuple[Tensor["d_ff", "d"], ...], stop: int = 9):
    for i, (w, v) in enumerate(zip(ws, vs)):
        y = x @ w
        if i == stop:
            break
        y = y @ v
    return y
